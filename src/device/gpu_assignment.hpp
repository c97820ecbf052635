#pragma once
// Which GPU each rank drives, and whether ranks of one node share one (CUDA builds decide with
// it; the rules are plain data, tested on any machine). A rank takes the visible GPU at its rank
// within the node, modulo the visible count: with CUDA_VISIBLE_DEVICES pinning one GPU per rank
// (srun --gpus-per-task=1) every rank takes its device 0, which is a different GPU for each. The
// GPUs' UUIDs, gathered over the node, then tell who really shares: NCCL refuses one device twice
// in a communicator, so sharing is allowed only when the deck says so (device.share_gpus), and
// shared ranks then move their data through MPI over pinned host memory.
#include <string>
#include <vector>

namespace wt {

// The device index a rank opens: its node-local rank modulo the GPUs it can see (visible > 0).
int gpu_for_local_rank(int local_rank, int visible);

struct GpuSharing {
  // Groups of node-local ranks that drive the same GPU (only groups of two or more), with the GPU.
  struct Group {
    std::string gpu;  // its UUID
    std::vector<int> local_ranks;
  };
  std::vector<Group> groups;
  bool any() const { return !groups.empty(); }
};

// uuid_of_local_rank[i]: the GPU node-local rank i drives.
GpuSharing find_sharing(const std::vector<std::string>& uuid_of_local_rank);

// "ranks 0 and 2 share GPU-... (node n1); ranks 1 and 3 share ...": for messages.
std::string describe_sharing(const GpuSharing& sharing, const std::string& node);

}  // namespace wt
