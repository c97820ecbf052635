#pragma once
// Reserving a file's disk blocks before a collective write, so that the write cannot run out of
// space half-way.
//
// Why: a parallel HDF5 write that meets a full disk fails on whichever rank's write lands there
// first, in an independent write, a metadata flush inside a collective call, or the collective
// close. The ranks then leave the write at different points (one hangs in a collective its peers
// never join) or HDF5 keeps a file it could not close, and MPI_Finalize crashes closing it. A
// reservation made by one rank before the file is opened moves every out-of-space failure to one
// place, before any collective: the ranks agree on its outcome and fail alike, with the reason.
//
// The blocks are reserved past the file's end (fallocate FALLOC_FL_KEEP_SIZE: the file stays
// empty, so the writer sees a new file and HDF5 does not truncate it) and the writes that follow
// fill them. release_reserved_tail gives back what the file did not use.
#include <cstdint>
#include <string>

namespace wt {

struct SpaceReservation {
  bool reserved = false;  // the blocks are the file's: writes up to `bytes` cannot meet ENOSPC
  std::string error;      // why the file could not be created or the space reserved ("" = none)
};

// Creates (truncates) `path` and reserves `bytes` of blocks for it. Out of space or quota gives
// the system's reason and the bytes wanted against the bytes free, e.g. "No space left on device
// (reserving 2243928 bytes for the file, 1048576 free on its file system)", and removes the file.
// A file system that cannot reserve (EOPNOTSUPP: some network file systems) gives reserved =
// false: with fewer bytes free than `bytes` that is the same ENOSPC error, otherwise none, and the
// write goes ahead unprotected against another process filling the disk meanwhile.
SpaceReservation reserve_file_space(const std::string& path, uint64_t bytes);

// Frees the reserved blocks past the file's end (truncating it to its own size). Best effort.
void release_reserved_tail(const std::string& path);

}  // namespace wt
