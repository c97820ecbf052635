#include "io/space_reservation.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace wt {

namespace {

// The bytes an unprivileged writer may still use on the file system holding `fd`, or -1.
int64_t bytes_free(int fd) {
  struct statvfs st {};
  if (::fstatvfs(fd, &st) != 0) return -1;
  return int64_t(st.f_bavail) * int64_t(st.f_frsize);
}

}  // namespace

SpaceReservation reserve_file_space(const std::string& path, uint64_t bytes) {
  SpaceReservation result;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    result.error = std::string(std::strerror(errno)) + " (creating the file)";
    return result;
  }
  const int64_t free_bytes = bytes_free(fd);  // before: a failed fallocate may keep a part
  int rc;
  do {
    rc = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, off_t(bytes));
  } while (rc != 0 && errno == EINTR);
  int err = rc == 0 ? 0 : errno;
  result.reserved = rc == 0;
  if (err == EOPNOTSUPP || err == ENOSYS)  // cannot reserve: at least check the room there is
    err = free_bytes >= 0 && uint64_t(free_bytes) < bytes ? ENOSPC : 0;
  if (err != 0)
    result.error = std::string(std::strerror(err)) + " (reserving " + std::to_string(bytes) +
                   " bytes for the file" +
                   (free_bytes >= 0 ? ", " + std::to_string(free_bytes) + " free on its file system"
                                    : std::string()) +
                   ")";
  ::close(fd);
  if (!result.error.empty()) ::unlink(path.c_str());
  return result;
}

void release_reserved_tail(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return;
  struct stat st {};
  // Truncating to its own size frees the blocks past the end (ext4, XFS, tmpfs).
  if (::fstat(fd, &st) == 0 && ::ftruncate(fd, st.st_size) != 0) {
    // Not an error: the file is complete; only the unused blocks stay allocated.
  }
  ::close(fd);
}

}  // namespace wt
