#include "app/gpu_link.hpp"

#include <iostream>

#include "comm/failure_agreement.hpp"
#ifdef WAVETRAIN_HAVE_CUDA
#include "comm/cuda/gpu_communicators.hpp"
#endif

namespace wt {

GpuLink open_gpu_link(const RunConfig& cfg, MpiCommunicator& mpi) {
  GpuLink link;
  if (cfg.device.kind != "cuda") return link;
  agree_on_failure(mpi, [&] { link.placement = place_on_gpu(cfg); });
#ifdef WAVETRAIN_HAVE_CUDA
  agree_on_failure(mpi, [&] {
    link.comm = link.placement.shared
                    ? cuda::make_staged_communicator(mpi.world(), link.placement.gpu)
                    : cuda::make_nccl_communicator(mpi.world(), link.placement.gpu);
  });
  if (mpi.rank() == 0)
    std::cout << "wavetrain: rank 0 drives GPU " << link.placement.gpu << " ("
              << link.placement.name << "); device transfers "
              << (link.placement.shared
                      ? "through MPI over pinned host memory (ranks of a node share a GPU)"
                      : "through NCCL")
              << std::endl;
#endif
  return link;
}

}  // namespace wt
