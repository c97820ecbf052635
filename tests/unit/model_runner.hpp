#pragma once
// Runs a whole Model forward (and backward) on one batch the way the executor runs one local
// stage, without schedules, data sources or communication: for whole-model tests.
#include <cblas.h>

#include <vector>

#include "model/model.hpp"

namespace wt::testing {

// Returns the batch's mean loss (the loss layer's scaled output). With `backward`, parameter
// gradients accumulate into the model's flat gradient buffers. Dropout draws from Rng(rng_seed),
// so two calls with the same seed see the same masks.
inline double run_model(Model& m, const Tensor& x, const std::vector<int32_t>& labels,
                        bool backward, Mode mode = Mode::Train, uint64_t rng_seed = 1) {
  const auto& nodes = m.graph.nodes;
  const size_t count = nodes.size();
  std::vector<Tensor> out(count), grad(count);
  std::vector<Saved> saved(count);
  Rng rng(rng_seed);
  LayerContext ctx;
  ctx.mode = mode;
  ctx.rng = &rng;
  ctx.labels = labels.data();
  ctx.loss_scale = 1.0f / float(x.dim(0));
  auto inputs_of = [&](const Node& n) {
    std::vector<const Tensor*> in;
    for (int src : n.inputs) in.push_back(src == kGraphInput ? &x : &out[size_t(src)]);
    return in;
  };
  for (size_t i = 0; i < count; ++i)
    nodes[i].layer->forward(inputs_of(nodes[i]), out[i], saved[i], ctx);
  const double loss = out.back().data()[0];
  if (!backward) return loss;
  Tensor seed = Tensor::empty({1});
  seed.fill(1.0f);
  for (size_t i = count; i-- > 0;) {
    const Node& n = nodes[i];
    const Tensor& dout = i + 1 == count ? seed : grad[i];
    if (!dout.defined()) continue;
    std::vector<Tensor> din(n.inputs.size());
    std::vector<Tensor*> din_ptrs;
    for (size_t k = 0; k < n.inputs.size(); ++k)
      din_ptrs.push_back(n.inputs[k] == kGraphInput ? nullptr : &din[k]);
    n.layer->backward(inputs_of(n), out[i], dout, din_ptrs, saved[i], ctx);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int src = n.inputs[k];
      if (src == kGraphInput) continue;
      if (!grad[size_t(src)].defined())
        grad[size_t(src)] = din[k];
      else
        cblas_saxpy(int(din[k].numel()), 1.0f, din[k].data(), 1, grad[size_t(src)].data(), 1);
    }
  }
  return loss;
}

}  // namespace wt::testing
