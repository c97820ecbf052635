#pragma once
// One owner per run directory, and one per checkpoint directory: two runs writing the same
// directory would interleave checkpoints and overwrite each other's deck or weights. Rank 0 holds
// an exclusive POSIX record lock on <run dir>/.lock for the whole run, and another on
// <checkpoint dir>/.checkpoint.lock (a checkpoint.dir outside the run directory, shared by two
// runs' decks, is otherwise unguarded). The system drops a lock when the process ends, however it
// ends (kill -9 included), so a lock is never stale and a resubmission after a kill just works.
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

  // The checkpoint directory `dir` (must exist) of the run in `run_dir`: locks
  // dir/.checkpoint.lock and records `run_dir` beside the pid and host, so that a second run is
  // told "process PID on host HOST, run directory RUN_DIR". A refusal is an InputError naming
  // `dir`, the holder and the key checkpoint.dir; otherwise as above.
  static RunDirLock checkpoint_dir(const std::string& dir, const std::string& run_dir);

  ~RunDirLock();
  RunDirLock(RunDirLock&& other) noexcept;
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;
  RunDirLock& operator=(RunDirLock&&) = delete;

  bool held() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  // what: "run directory" or "checkpoint directory"; remedy: what a refused run may do instead;
  // note: recorded after "HOST PID " for the holder's description (may be empty).
  RunDirLock(const std::string& dir, const char* file, const std::string& what,
             const std::string& remedy, const std::string& note);
  // POSIX locks belong to the process and vanish when ANY descriptor of the file is closed, so
  // nothing else in this process may open the lock file while it is held.
  std::string path_;
  int fd_ = -1;
};

}  // namespace wt
