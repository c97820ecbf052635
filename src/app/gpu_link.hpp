#pragma once
// A GPU rank's link to its device and its peers (device.kind = "cuda"): the GPU it drives
// (job/run_preflight.hpp's place_on_gpu) and the communicator its device buffers move through,
// chosen automatically and logged by rank 0: NCCL, bootstrapped over MPI, when each rank of a node
// has its own GPU; MPI staged through pinned host memory when ranks share one (device.share_gpus),
// since NCCL refuses one device twice in a communicator. Collective: every rank calls it.
#include <memory>

#include "comm/communicator.hpp"
#include "comm/mpi_communicator.hpp"
#include "deck/run_config.hpp"
#include "job/run_preflight.hpp"

namespace wt {

struct GpuLink {
  GpuPlacement placement;
  std::unique_ptr<Communicator> comm;  // nullptr off the GPU: the MPI communicator serves
};

GpuLink open_gpu_link(const RunConfig& cfg, MpiCommunicator& mpi);

}  // namespace wt
