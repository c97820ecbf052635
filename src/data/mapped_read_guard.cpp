#include "data/mapped_read_guard.hpp"

#include <setjmp.h>
#include <signal.h>

#include <mutex>

namespace wt {

namespace {

// The guarded read in progress on this thread, if any.
struct GuardedRead {
  sigjmp_buf jump;
  const char* base;
  size_t bytes;
};
thread_local GuardedRead* tl_guarded = nullptr;

// The SIGBUS disposition before ours, for every fault that is not a guarded read.
struct sigaction g_previous;
std::once_flag g_install_once;

void on_sigbus(int sig, siginfo_t* info, void* context) {
  GuardedRead* read = tl_guarded;
  const char* at = static_cast<const char*>(info->si_addr);
  if (read && at >= read->base && at < read->base + read->bytes) siglongjmp(read->jump, 1);
  if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (!(g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_handler != SIG_DFL &&
      g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  // The default action (an ignored SIGBUS from a fault cannot be ignored either): returning
  // re-runs the faulting access, which now kills the process as it would have without us.
  signal(SIGBUS, SIG_DFL);
}

void install() {
  struct sigaction action = {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, &g_previous);
}

}  // namespace

bool guarded_mapped_read_call(const void* base, size_t bytes, void (*fn)(void*), void* arg) {
  std::call_once(g_install_once, install);
  GuardedRead read;
  read.base = static_cast<const char*>(base);
  read.bytes = bytes;
  GuardedRead* const outer = tl_guarded;
  // Saving the signal mask (1): the handler's SIGBUS block must not outlive the jump out of it.
  if (sigsetjmp(read.jump, 1) != 0) {
    tl_guarded = outer;
    return false;
  }
  tl_guarded = &read;
  fn(arg);
  tl_guarded = outer;
  return true;
}

}  // namespace wt
