#include "io/file_lock_probe.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

namespace wt {

namespace {

// "process PID (COMMAND)", or "process PID" when its command is not readable.
std::string describe_process(long pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return "process " + std::to_string(pid) + (name.empty() ? "" : " (" + name + ")");
}

// The first process /proc/locks lists as holding a lock on inode `ino` other than this one, or
// "". Lines look like "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiters ("1: -> ...")
// hold nothing. The device is not compared: under overlay file systems /proc/locks names the
// underlying device, stat(2) the overlay's.
std::string lock_holder(ino_t ino) {
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream in(line);
    std::string id, kind, advisory, mode, device;
    long pid = 0;
    if (!(in >> id >> kind) || kind == "->") continue;
    if (!(in >> advisory >> mode >> pid >> device)) continue;
    const size_t colon = device.rfind(':');
    if (colon == std::string::npos || pid <= 0 || pid == long(getpid())) continue;
    if (device.substr(colon + 1) == std::to_string(ino)) return describe_process(pid);
  }
  return "";
}

}  // namespace

FileLockState probe_file_lock(const std::string& path) {
  FileLockState state;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return state;
  struct stat st {};
  const bool have_inode = ::fstat(fd, &st) == 0;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    state.locked = errno == EWOULDBLOCK || errno == EAGAIN;
  } else {
    ::flock(fd, LOCK_UN);
    struct flock probe {};  // a writer's record lock (HDF5 built without flock uses these)
    probe.l_type = F_RDLCK;
    probe.l_whence = SEEK_SET;
    if (::fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK) {
      state.locked = true;
      if (probe.l_pid > 0) state.holder = describe_process(probe.l_pid);
    }
  }
  ::close(fd);
  if (state.locked && state.holder.empty() && have_inode) state.holder = lock_holder(st.st_ino);
  return state;
}

}  // namespace wt
