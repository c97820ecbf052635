#include "job/run_dir_lock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "util/input_error.hpp"

namespace wt {

namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

// "process PID on host HOST[ (NOTE)]" from what the holder wrote into the file ("HOST PID NOTE");
// F_GETLK's pid is the fallback (meaningful only on this host, and 0 over NFS for a holder on
// another node).
std::string describe_holder(int fd) {
  char buf[4608] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  char host[256] = {};
  long pid = 0;
  int used = 0;
  if (n > 0 && std::sscanf(buf, "%255s %ld %n", host, &pid, &used) == 2 && pid > 0) {
    std::string note(used > 0 ? buf + used : "");
    while (!note.empty() && (note.back() == '\n' || note.back() == ' ')) note.pop_back();
    return "process " + std::to_string(pid) + " on host " + host +
           (note.empty() ? "" : " (" + note + ")");
  }
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  if (fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK && probe.l_pid > 0)
    return "process " + std::to_string(probe.l_pid) + " (host not recorded yet)";
  return "another process";
}

}  // namespace

RunDirLock::RunDirLock(const std::string& dir)
    : RunDirLock(dir, ".lock", "run directory",
                 "wait for it to end or choose another directory (--run-dir, or run.output_dir / "
                 "run.name in the deck)",
                 "") {}

RunDirLock RunDirLock::checkpoint_dir(const std::string& dir, const std::string& run_dir) {
  return RunDirLock(dir, ".checkpoint.lock", "checkpoint directory",
                    "wait for it to end or set checkpoint.dir to a directory of this run's own",
                    "run directory " + run_dir);
}

RunDirLock::RunDirLock(const std::string& dir, const char* file, const std::string& what,
                       const std::string& remedy, const std::string& note)
    : path_(dir + "/" + file) {
  const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw InputError(path_, 0, "",
                     "cannot open the " + what + "'s lock file: " + std::strerror(errno));
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file, however long
  if (fcntl(fd, F_SETLK, &whole) != 0) {
    const int err = errno;
    if (err == EACCES || err == EAGAIN) {
      const std::string holder = describe_holder(fd);
      close(fd);
      throw InputError(dir, 0, "",
                       what + " in use by another wavetrain run (" + holder + " holds " + path_ +
                           "); " + remedy);
    }
    close(fd);
    if (err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS) {
      std::fprintf(stderr,
                   "wavetrain: warning: %s: the file system does not support locks (%s); "
                   "nothing stops a second run from writing into %s at the same time\n",
                   path_.c_str(), std::strerror(err), dir.c_str());
      return;
    }
    throw InputError(path_, 0, "", "cannot lock the " + what + ": " + std::strerror(err));
  }
  fd_ = fd;
  // Who holds it, for the message of a second run. Informational only: if this write fails
  // (full disk), the lock still holds and the next write into the directory reports the disk.
  std::string me = host_name() + " " + std::to_string(getpid());
  if (!note.empty()) me += " " + note;
  me += "\n";
  const bool recorded =
      ftruncate(fd_, 0) == 0 && pwrite(fd_, me.data(), me.size(), 0) == ssize_t(me.size());
  (void)recorded;
}

RunDirLock::RunDirLock(RunDirLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) close(fd_);  // releases the lock; the file stays (removing it would race)
}

}  // namespace wt
