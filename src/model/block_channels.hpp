#pragma once
// The graph pass that keeps activations in the channel-blocked layout (ops/host/channel_blocks.hpp)
// between layers that compute in it, for a device whose kernels take it (the host with oneDNN:
// OpsBackend::takes_blocked_activations). oneDNN's AVX-512 convolutions compute in nChw16c; with
// NCHW tensors between layers every convolution relaid its input, output and their gradients at
// its boundary (LeNet: 1 ms of a 15 ms step at batch 32). A tensor is kept blocked when its
// producer can write it so, every layer reading it (looking through folded ReLUs) can read it so,
// and it has a multiple of 16 channels (so it has the NCHW tensor's size: the executor, the
// allocator and the pipelines' transfers see bytes of the same count). The arithmetic is the
// same, so losses are bitwise those of the NCHW graph. Run after fuse_epilogues; the deck's
// model.fuse_epilogues turns both off.
#include "model/graph.hpp"

namespace wt {

// Returns how many tensors are kept blocked.
int block_channels(Graph& graph);

}  // namespace wt
