// probe_file_lock (io/file_lock_probe.hpp): a file another process holds locked the way HDF5 does
// (flock, exclusive, for writing) is reported locked, with that process; a file nobody locks, or
// one only read-locked, is not; the probe itself leaves no lock behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "io/file_lock_probe.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch_file(const char* name) {
  fs::path f = fs::temp_directory_path() /
               (std::string("wt_probe_") + name + "_" + std::to_string(getpid()));
  std::ofstream(f) << "data\n";
  return f;
}

// A child that flocks `path` with `how`, says so through a pipe, and holds it until killed.
pid_t spawn_flock_holder(const fs::path& path, int how) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    const int fd = open(path.c_str(), O_RDWR);
    const char ok = fd >= 0 && flock(fd, how | LOCK_NB) == 0 ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(ready[1]);
  char ok = 0;
  const bool locked = read(ready[0], &ok, 1) == 1 && ok == 'y';
  close(ready[0]);
  if (!locked) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

void kill_and_reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST(FileLockProbe, WriteLockedByAnotherProcessNamesIt) {
  const fs::path f = scratch_file("held");
  const pid_t holder = spawn_flock_holder(f, LOCK_EX);
  ASSERT_GT(holder, 0);
  const wt::FileLockState state = wt::probe_file_lock(f.string());
  EXPECT_TRUE(state.locked);
  // /proc/locks names the holder where there is one (Linux).
  if (fs::exists("/proc/locks")) {
    EXPECT_EQ(state.holder.rfind("process " + std::to_string(holder), 0), 0u) << state.holder;
  }
  kill_and_reap(holder);
  EXPECT_FALSE(wt::probe_file_lock(f.string()).locked) << "the lock outlived its holder";
  fs::remove(f);
}

TEST(FileLockProbe, UnlockedOrReadLockedOrMissingIsNotLocked) {
  const fs::path f = scratch_file("free");
  EXPECT_FALSE(wt::probe_file_lock(f.string()).locked);
  const pid_t reader = spawn_flock_holder(f, LOCK_SH);  // another reader does not keep us out
  ASSERT_GT(reader, 0);
  EXPECT_FALSE(wt::probe_file_lock(f.string()).locked);
  kill_and_reap(reader);
  EXPECT_FALSE(wt::probe_file_lock((f.string() + ".missing")).locked);
  // The probe released what it took: another process can take the file exclusively at once.
  const pid_t writer = spawn_flock_holder(f, LOCK_EX);
  EXPECT_GT(writer, 0) << "the probe left a lock behind";
  if (writer > 0) kill_and_reap(writer);
  fs::remove(f);
}

}  // namespace
