#pragma once
// Whether the calling destructor runs because an exception is unwinding the stack.
//
// A type that wraps an MPI or NCCL resource whose release can wait for other ranks (MPI_Win_free,
// MPI_Comm_free, a wait on a pending request, ncclCommDestroy) must not release it then: the
// error unwinding this rank may be its alone, the other ranks may be waiting in a step's receive
// or broadcast, and a collective release would wait for them for ever. Such a destructor leaves
// the resource to the end of the process (MPI_Finalize or MPI_Abort reclaims it) and releases it
// normally only when no exception is in flight. tests/mpi/test_unwinding_release.cpp holds every
// such type to this; tests/lint/unwinding.py finds the destructors that need it.
#include <exception>

namespace wt {

inline bool exception_unwinding() { return std::uncaught_exceptions() > 0; }

}  // namespace wt
