#pragma once
// A forked child that takes something only a separate process can hold (a POSIX or flock lock:
// this process could always take its own again), says through a pipe whether it got it, and
// holds it until killed. For the lock tests.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace wt_test {

// Runs `take` in the child; returns the child's pid once `take` returned true, or -1 (the child
// reaped) when it returned false or threw. `take` must keep what it took alive while it returns
// (a static, or leaked): the child then pauses until kill_and_reap.
inline pid_t spawn_holding_child(const std::function<bool()>& take) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    char ok = 'n';
    try {
      ok = take() ? 'y' : 'n';
    } catch (...) {
    }
    if (write(ready[1], &ok, 1) != 1 || ok != 'y') _exit(1);
    for (;;) pause();
  }
  close(ready[1]);
  char ok = 0;
  const bool held = read(ready[0], &ok, 1) == 1 && ok == 'y';
  close(ready[0]);
  if (!held) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

inline void kill_and_reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace wt_test
