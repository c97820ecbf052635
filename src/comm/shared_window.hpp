#pragma once
// What an MPI-3 shared-memory window needs from the machine: it is one file for the whole node
// (in /dev/shm or Open MPI's session directory), so every rank's file size limit (ulimit -f)
// must allow it, or
// MPI_Win_allocate_shared ends the job with SIGXFSZ.
#include <mpi.h>

namespace wt {

// Collective over `comm` (the ranks that will share the window): whether a window of
// `window_bytes` in all fits under every rank's file size limit, with room for Open MPI's own
// bookkeeping. Every rank gets the same answer.
bool shared_window_fits(MPI_Comm comm, double window_bytes);

// Collective over the window's ranks: ends the lock_all epoch it was opened with and frees it
// (nothing when it is MPI_WIN_NULL). Never while an exception unwinds (util/unwinding.hpp).
void free_shared_window(MPI_Win& win);

}  // namespace wt
