#pragma once
// Who stops this process from reading a file: HDF5's file locking (1.10+) has a writer hold an
// exclusive flock() on the file while it is open, and a reader's H5Fopen then fails with
// EWOULDBLOCK. HDF5 reports that like any other failure to open, which reads as damage; a caller
// that sees an open fail asks here first, so that a file another program is still writing is
// called locked, not corrupt.
#include <string>

namespace wt {

// "" when nothing holds a lock on `path` that conflicts with reading it (or it cannot be opened at
// all: the caller's own error says why). Otherwise a description such as "process 1234 (python3)
// holds a write lock on it" (the holder comes from /proc/locks, or fcntl(F_GETLK) for POSIX locks;
// a holder on another host or in another PID namespace is not visible: "another process holds a
// write lock on it").
std::string conflicting_lock_holder(const std::string& path);

}  // namespace wt
