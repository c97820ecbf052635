#pragma once
// The communicators of GPU ranks (CUDA builds), without CUDA or NCCL types: what main() picks
// from for device.kind = "cuda".
//   NCCL, bootstrapped over MPI (nccl_communicator.hpp): one GPU per rank; device buffers move
//   on the communicator's stream, ordered after the producing stream by events.
//   MPI staged through pinned host memory (staged_communicator.hpp): ranks that share one GPU
//   (NCCL refuses one device twice in a communicator), so every multi-rank schedule can run on a
//   one-GPU machine.
// Both carry host data (metrics, bytes) over MPI. `gpu` is the device index this rank drives.
#include <mpi.h>

#include <memory>

#include "comm/communicator.hpp"

namespace wt::cuda {

std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm world, int gpu);
std::unique_ptr<Communicator> make_staged_communicator(MPI_Comm world, int gpu);

}  // namespace wt::cuda
