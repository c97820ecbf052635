#pragma once
// One owner per run directory: two runs writing the same directory would interleave checkpoints
// and overwrite each other's deck. Rank 0 holds an exclusive POSIX record lock on
// <run dir>/.lock for the whole run. The system drops it when the process ends, however it ends
// (kill -9 included), so a lock is never stale and a resubmission after a kill just works.
// fcntl locks, not flock: they are the kind NFS (lockd / v4) and Lustre honour across nodes.
#include <string>

namespace wt {

class RunDirLock {
 public:
  // Locks dir/.lock (dir must exist). Throws InputError naming the directory and the holder
  // ("process PID on host HOST") when another process holds it, or naming the lock file and the
  // system's reason when it cannot be opened. Where the file system has no locks (ENOLCK), warns
  // on stderr and goes on unlocked rather than refusing every run there.
  explicit RunDirLock(const std::string& dir);
  ~RunDirLock();
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;

  bool held() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  // POSIX locks belong to the process and vanish when ANY descriptor of the file is closed, so
  // nothing else in this process may open the lock file while it is held.
  std::string path_;
  int fd_ = -1;
};

}  // namespace wt
