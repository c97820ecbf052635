#include "util/file_lock_holder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace wt {

namespace {

std::string process_name(long pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

std::string describe(long pid, const std::string& access) {
  const std::string kind = access == "READ" ? "a read lock" : "a write lock";
  if (pid <= 0) return "another process holds " + kind + " on it";
  const std::string name = process_name(pid);
  return "process " + std::to_string(pid) + (name.empty() ? "" : " (" + name + ")") + " holds " +
         kind + " on it";
}

// The holder of a write lock in /proc/locks on this file: lines read
// "1: FLOCK  ADVISORY  WRITE 1234 08:01:1311834 0 EOF" (waiters have "->" after the number). Only
// write locks conflict with reading. A device number that does not match (overlay file systems
// report another one) falls back to the inode alone.
long find_writer_in_proc_locks(const struct stat& st) {
  std::ifstream locks("/proc/locks");
  char dev[64];
  std::snprintf(dev, sizeof dev, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  const std::string ino = ":" + std::to_string(static_cast<unsigned long long>(st.st_ino));
  long same_inode = 0;
  for (std::string line; std::getline(locks, line);) {
    std::istringstream in(line);
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    if (f.size() < 6 || f[1] == "->" || f[3] != "WRITE") continue;
    const std::string& where = f[5];
    if (where == dev) return std::atol(f[4].c_str());
    if (!same_inode && where.size() > ino.size() &&
        where.compare(where.size() - ino.size(), ino.size(), ino) == 0)
      same_inode = std::atol(f[4].c_str());
  }
  return same_inode;
}

}  // namespace

std::string conflicting_lock_holder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st;
  std::string held;
  if (::fstat(fd, &st) == 0) {
    // flock(): HDF5's own locking. A shared lock taken here is compatible with any other reader.
    if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
      ::flock(fd, LOCK_UN);
    } else if (errno == EWOULDBLOCK) {
      held = describe(find_writer_in_proc_locks(st), "WRITE");
    }
    // fcntl() record locks, which HDF5 uses where flock() is unavailable.
    struct flock probe = {};
    probe.l_type = F_RDLCK;
    probe.l_whence = SEEK_SET;
    if (held.empty() && ::fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK)
      held = describe(long(probe.l_pid), probe.l_type == F_WRLCK ? "WRITE" : "READ");
  }
  ::close(fd);
  return held;
}

}  // namespace wt
