#include "model/graph_pass.hpp"

#include <chrono>

#include "tensor/rng.hpp"

namespace wt {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The context of one pass: the model's device, dropout from `rng`, the batch's labels.
LayerContext pass_context(Model& model, const OpsBackend& ops, Mode mode, Rng& rng,
                          const std::vector<int32_t>& labels, int64_t batch) {
  LayerContext ctx;
  ctx.mode = mode;
  ctx.rng = &rng;
  ctx.labels = labels.data();
  ctx.loss_scale = 1.0f / float(batch);
  ctx.allocator = &model.allocator();
  ctx.ops = &ops;
  return ctx;
}

std::vector<const Tensor*> inputs_of(const Node& n, const Tensor& x,
                                     const std::vector<Tensor>& out) {
  std::vector<const Tensor*> in;
  for (int src : n.inputs) in.push_back(src == kGraphInput ? &x : &out[size_t(src)]);
  return in;
}

}  // namespace

Tensor forward_to_loss_input(Model& model, const OpsBackend& ops, const Tensor& x) {
  const auto& nodes = model.graph.nodes;
  const size_t loss = size_t(model.graph.loss_node());
  std::vector<Tensor> out(nodes.size());
  std::vector<Saved> saved(nodes.size());
  Rng rng(1);  // unused in evaluation mode (dropout passes through)
  LayerContext ctx = pass_context(model, ops, Mode::Eval, rng, {}, x.dim(0));
  for (size_t i = 0; i < loss; ++i) {
    ctx.node = static_cast<int>(i);
    nodes[i].layer->forward(inputs_of(nodes[i], x, out), out[i], saved[i], ctx);
  }
  const int src = nodes[loss].inputs.at(0);
  return src == kGraphInput ? x : out[size_t(src)];
}

double run_graph_pass(Model& model, const OpsBackend& ops, const Tensor& x,
                      const std::vector<int32_t>& labels, bool backward, Mode mode,
                      uint64_t rng_seed, NodeSeconds* times) {
  const auto& nodes = model.graph.nodes;
  const size_t count = nodes.size();
  if (times) {
    times->forward.assign(count, 0.0);
    times->backward.assign(count, 0.0);
  }
  std::vector<Tensor> out(count), grad(count);
  std::vector<Saved> saved(count);
  Rng rng(rng_seed);
  LayerContext ctx = pass_context(model, ops, mode, rng, labels, x.dim(0));
  for (size_t i = 0; i < count; ++i) {
    const std::vector<const Tensor*> in = inputs_of(nodes[i], x, out);
    ctx.node = static_cast<int>(i);
    const Clock::time_point t0 = times ? Clock::now() : Clock::time_point();
    nodes[i].layer->forward(in, out[i], saved[i], ctx);
    if (times) times->forward[i] = since(t0);
  }
  const double loss = out.back().to_host()[0];
  if (!backward) return loss;
  Tensor seed = Tensor::empty({1}, model.allocator());
  seed.fill(1.0f);
  const std::vector<char> needed = model.graph.output_gradient_needed();  // as the executor
  for (size_t i = count; i-- > 0;) {
    const Node& n = nodes[i];
    const Tensor& dout = i + 1 == count ? seed : grad[i];
    if (!dout.defined()) continue;
    const std::vector<const Tensor*> in = inputs_of(n, x, out);
    std::vector<Tensor> din(n.inputs.size());
    std::vector<Tensor*> din_ptrs;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int src = n.inputs[k];
      din_ptrs.push_back(src != kGraphInput && needed[size_t(src)] ? &din[k] : nullptr);
    }
    const Clock::time_point t0 = times ? Clock::now() : Clock::time_point();
    n.layer->backward(in, out[i], dout, din_ptrs, saved[i], ctx);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int src = n.inputs[k];
      if (!din_ptrs[k]) continue;
      if (!grad[size_t(src)].defined())
        grad[size_t(src)] = din[k];
      else
        ops.accumulate(din[k].device_ptr(), grad[size_t(src)].device_ptr(), din[k].numel());
    }
    if (times) times->backward[i] = since(t0);
  }
  return loss;
}

}  // namespace wt
