#pragma once
// Open MPI settings that wavetrain's overlapped communication depends on, applied before
// MPI_Init as defaults: a variable the user exported wins, other MPI libraries ignore them.

namespace wt {

// Sets each tuned OMPI_MCA_* variable that is not already in the environment. Call before
// MPI_Init; returns how many it set.
int apply_open_mpi_defaults();

}  // namespace wt
