#pragma once
// Is a file locked by another process, and by which one? HDF5 (1.10 and newer) locks every file
// it opens: flock(2) exclusive for writing, shared for reading, so a file another process holds
// open for writing cannot be opened, and H5Fopen's failure then looks just like a damaged file.
// This probe tells the two apart after such a failure, so that a lock is reported as a lock.
#include <string>

namespace wt {

struct FileLockState {
  bool locked = false;  // another process holds a lock that keeps a reader out
  std::string holder;   // "process PID (COMMAND)" when /proc/locks tells, else ""
};

// Local, takes no lock that outlives the call. Looks for a conflicting flock(2) (LOCK_SH |
// LOCK_NB, released at once) or POSIX record lock (F_GETLK) on `path`; the holder comes from
// /proc/locks (Linux), matched by the file's inode. A file that cannot be opened is not locked.
FileLockState probe_file_lock(const std::string& path);

}  // namespace wt
