#pragma once
// One pass of a whole Model over one batch, node by node on this rank, outside any schedule, data
// source or communication: the layer profiler times it, and whole-model tests use it as the plain
// reference the executor must agree with.
#include <cstdint>
#include <vector>

#include "model/model.hpp"

namespace wt {

// Per node, the seconds its forward and backward calls took (backward includes summing the
// input gradients of tensors with several readers).
struct NodeSeconds {
  std::vector<double> forward, backward;
};

// `ops`: the kernels of the device the model lives on. Returns the batch's mean loss (the loss
// layer's scaled output). With `backward`, parameter gradients accumulate into the model's flat
// gradient buffers. Dropout draws from Rng(rng_seed), so two calls with the same seed see the same
// masks. `times`, when given, receives each call's seconds (the clock is read only then).
double run_graph_pass(Model& model, const OpsBackend& ops, const Tensor& x,
                      const std::vector<int32_t>& labels, bool backward, Mode mode = Mode::Train,
                      uint64_t rng_seed = 1, NodeSeconds* times = nullptr);

// Forward in evaluation mode up to the loss layer, which is not run: returns its input (a
// classifier's logits, [N, classes]). What --evaluate and --predict read the model's answer from.
Tensor forward_to_loss_input(Model& model, const OpsBackend& ops, const Tensor& x);

}  // namespace wt
