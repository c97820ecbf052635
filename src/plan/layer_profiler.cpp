#include "plan/layer_profiler.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "model/layers/embedding.hpp"
#include "tensor/rng.hpp"

namespace wt {

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Other processes on the machine only ever add time to a call, so the fastest of several
// passes is the steadiest estimate of what the layer itself costs (the median moved by 2x under
// a busy neighbour where the minimum moved by a few percent).
double fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// A synthetic batch the graph accepts: token ids below every embedding's vocabulary when the
// model input feeds embeddings, standard normal values otherwise.
Tensor synthetic_input(const Graph& graph, int64_t batch, Rng& rng) {
  Shape shape{batch};
  shape.insert(shape.end(), graph.input_shape.begin(), graph.input_shape.end());
  Tensor x = Tensor::empty(shape);
  int64_t vocab = 0;  // 0: the input is not token ids
  for (const Node& n : graph.nodes)
    for (int src : n.inputs)
      if (src == kGraphInput)
        if (auto* e = dynamic_cast<const Embedding*>(n.layer.get()))
          vocab = vocab ? std::min(vocab, e->vocab()) : e->vocab();
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data()[i] = vocab ? float(rng.below(uint64_t(vocab))) : rng.normal();
  return x;
}

// One forward and backward pass over every node, adding each call's seconds to fwd / bwd.
void timed_pass(Model& model, const Tensor& x, const std::vector<int32_t>& labels, uint64_t seed,
                std::vector<double>& fwd, std::vector<double>& bwd) {
  const auto& nodes = model.graph.nodes;
  const size_t count = nodes.size();
  std::vector<Tensor> out(count), grad(count);
  std::vector<Saved> saved(count);
  Rng rng(seed);
  LayerContext ctx;
  ctx.rng = &rng;
  ctx.labels = labels.data();
  ctx.loss_scale = 1.0f / float(x.dim(0));
  auto inputs_of = [&](const Node& n) {
    std::vector<const Tensor*> in;
    for (int src : n.inputs) in.push_back(src == kGraphInput ? &x : &out[size_t(src)]);
    return in;
  };
  for (size_t i = 0; i < count; ++i) {
    const std::vector<const Tensor*> in = inputs_of(nodes[i]);
    const auto t0 = Clock::now();
    nodes[i].layer->forward(in, out[i], saved[i], ctx);
    fwd[i] = seconds(t0, Clock::now());
  }
  Tensor seed_grad = Tensor::empty({1});
  seed_grad.fill(1.0f);
  for (size_t i = count; i-- > 0;) {
    const Node& n = nodes[i];
    const Tensor& dout = i + 1 == count ? seed_grad : grad[i];
    bwd[i] = 0;
    if (!dout.defined()) continue;
    const std::vector<const Tensor*> in = inputs_of(n);
    std::vector<Tensor> din(n.inputs.size());
    std::vector<Tensor*> din_ptrs;
    for (size_t k = 0; k < n.inputs.size(); ++k)
      din_ptrs.push_back(n.inputs[k] == kGraphInput ? nullptr : &din[k]);
    const auto t0 = Clock::now();
    n.layer->backward(in, out[i], dout, din_ptrs, saved[i], ctx);
    // Summing gradients where a tensor has several readers is part of this layer's backward.
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int src = n.inputs[k];
      if (src == kGraphInput) continue;
      if (!grad[size_t(src)].defined())
        grad[size_t(src)] = din[k];
      else
        cblas_saxpy(int(din[k].numel()), 1.0f, din[k].data(), 1, grad[size_t(src)].data(), 1);
    }
    bwd[i] = seconds(t0, Clock::now());
  }
}

struct Timings {
  std::vector<double> forward, backward;
};

Timings measure_at(Model& model, int64_t batch, int repeats, Rng& rng) {
  const Graph& g = model.graph;
  const Tensor x = synthetic_input(g, batch, rng);
  const int64_t per_sample = g.nodes.back().layer->labels_per_sample();
  std::vector<int32_t> labels(size_t(batch * per_sample));
  for (int32_t& l : labels) l = int32_t(rng.below(uint64_t(std::max(g.classes, 1))));
  const size_t n = g.nodes.size();
  std::vector<std::vector<double>> fwd(n), bwd(n);
  std::vector<double> f(n), b(n);
  timed_pass(model, x, labels, 1, f, b);  // warm-up: caches, allocator, BLAS buffers
  for (int r = 0; r < repeats; ++r) {
    timed_pass(model, x, labels, uint64_t(r) + 2, f, b);
    for (size_t i = 0; i < n; ++i) {
      fwd[i].push_back(f[i]);
      bwd[i].push_back(b[i]);
    }
  }
  Timings m;
  for (size_t i = 0; i < n; ++i) {
    m.forward.push_back(fastest(fwd[i]));
    m.backward.push_back(fastest(bwd[i]));
  }
  return m;
}

// The line through (small, t_small) and (large, t_large), with neither part below zero.
void fit(double t_small, double t_large, int64_t small, int64_t large, double* fixed,
         double* per_sample) {
  *per_sample = std::max(0.0, (t_large - t_small) / double(large - small));
  *fixed = std::max(0.0, t_large - *per_sample * double(large));
}

}  // namespace

LayerProfile measure_layer_profile(Model& model, int64_t batch, int repeats) {
  const int64_t small = std::max<int64_t>(1, batch / 4);
  const int64_t large = std::max(batch, small + 1);
  repeats = std::max(repeats, 1);
  Rng rng(0x9e0f11e);
  const Timings at_large = measure_at(model, large, repeats, rng);
  const Timings at_small = measure_at(model, small, repeats, rng);
  model.zero_grads();

  LayerProfile p;
  p.model = model.graph.name;
  p.device = profiling_device_name();
  for (size_t i = 0; i < model.graph.nodes.size(); ++i) {
    p.nodes.push_back(model.graph.nodes[i].name);
    LayerTiming t;
    fit(at_small.forward[i], at_large.forward[i], small, large, &t.forward_fixed_s,
        &t.forward_per_sample_s);
    fit(at_small.backward[i], at_large.backward[i], small, large, &t.backward_fixed_s,
        &t.backward_per_sample_s);
    p.timing.push_back(t);
  }
  return p;
}

std::string profiling_device_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, name = "unknown processor";
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) name = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  return "cpu: " + name + ", 1 thread";
}

}  // namespace wt
