#include "plan/layer_profiler.hpp"

#include <algorithm>
#include <fstream>

#include "model/graph_pass.hpp"
#include "model/layers/embedding.hpp"
#include "tensor/rng.hpp"

namespace wt {

namespace {

// Other processes on the machine only ever add time to a call, so the fastest of several
// passes is the steadiest estimate of what the layer itself costs (the median moved by 2x under
// a busy neighbour where the minimum moved by a few percent).
double fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// A synthetic batch the graph accepts: token ids below every embedding's vocabulary when the
// model input feeds embeddings, standard normal values otherwise.
Tensor synthetic_input(const Model& model, int64_t batch, Rng& rng) {
  const Graph& graph = model.graph;
  Shape shape{batch};
  shape.insert(shape.end(), graph.input_shape.begin(), graph.input_shape.end());
  Tensor x = Tensor::empty(shape, model.allocator());
  int64_t vocab = 0;  // 0: the input is not token ids
  for (const Node& n : graph.nodes)
    for (int src : n.inputs)
      if (src == kGraphInput)
        if (auto* e = dynamic_cast<const Embedding*>(n.layer.get()))
          vocab = vocab ? std::min(vocab, e->vocab()) : e->vocab();
  std::vector<float> values(size_t(x.numel()));
  for (float& v : values) v = vocab ? float(rng.below(uint64_t(vocab))) : rng.normal();
  x.copy_from_host(values.data());  // staged: a GPU's memory is not the host's to write
  return x;
}

struct Timings {
  std::vector<double> forward, backward;
};

Timings measure_at(Model& model, const OpsBackend& ops, int64_t batch, int repeats, Rng& rng) {
  const Graph& g = model.graph;
  const Tensor x = synthetic_input(model, batch, rng);
  const int64_t per_sample = g.nodes.back().layer->labels_per_sample();
  std::vector<int32_t> labels(size_t(batch * per_sample));
  for (int32_t& l : labels) l = int32_t(rng.below(uint64_t(std::max(g.classes, 1))));
  const size_t n = g.nodes.size();
  std::vector<std::vector<double>> fwd(n), bwd(n);
  NodeSeconds t;
  // Warm-up first: caches, allocator, BLAS buffers.
  run_graph_pass(model, ops, x, labels, true, Mode::Train, 1, &t);
  for (int r = 0; r < repeats; ++r) {
    run_graph_pass(model, ops, x, labels, true, Mode::Train, uint64_t(r) + 2, &t);
    for (size_t i = 0; i < n; ++i) {
      fwd[i].push_back(t.forward[i]);
      bwd[i].push_back(t.backward[i]);
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

LayerProfile measure_layer_profile(Model& model, const OpsBackend& ops, int64_t batch, int repeats,
                                   std::vector<int64_t> also_at) {
  const int64_t small = std::max<int64_t>(1, batch / 4);
  const int64_t large = std::max(batch, small + 1);
  repeats = std::max(repeats, 1);
  Rng rng(0x9e0f11e);
  // Each layer is timed to completion, so profiling is synchronous device work on any device.
  model.allocator().synchronize_device();
  DeviceWorkScope device_work;
  const Timings at_large = measure_at(model, ops, large, repeats, rng);
  const Timings at_small = measure_at(model, ops, small, repeats, rng);
  // More batch sizes, when asked: every size measured, the two above included.
  std::vector<int64_t> sizes;
  std::vector<Timings> at;
  if (!also_at.empty()) {
    also_at.push_back(small);
    also_at.push_back(large);
    std::sort(also_at.begin(), also_at.end());
    also_at.erase(std::unique(also_at.begin(), also_at.end()), also_at.end());
    for (int64_t b : also_at) {
      if (b < 1) continue;
      sizes.push_back(b);
      at.push_back(b == small   ? at_small
                   : b == large ? at_large
                                : measure_at(model, ops, b, repeats, rng));
    }
  }
  model.zero_grads();

  LayerProfile p;
  p.model = model.graph.name;
  p.device = profiling_device_name();
  p.batches = sizes;
  for (size_t i = 0; i < model.graph.nodes.size(); ++i) {
    p.nodes.push_back(model.graph.nodes[i].name);
    LayerTiming t;
    fit(at_small.forward[i], at_large.forward[i], small, large, &t.forward_fixed_s,
        &t.forward_per_sample_s);
    fit(at_small.backward[i], at_large.backward[i], small, large, &t.backward_fixed_s,
        &t.backward_per_sample_s);
    for (const Timings& m : at) {
      t.forward_at.push_back(m.forward[i]);
      t.backward_at.push_back(m.backward[i]);
    }
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
