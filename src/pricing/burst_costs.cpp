#include "pricing/burst_costs.hpp"

#include <algorithm>
#include <stdexcept>

#include "pricing/gradient_sync.hpp"

namespace wt {

std::vector<int> burst_counts(int ranks, int64_t global_batch) {
  std::vector<int> counts;
  for (int g = 1; g <= ranks; g *= 2)
    if (global_batch % g == 0) counts.push_back(g);
  if (counts.back() != ranks && global_batch % ranks == 0) counts.push_back(ranks);
  return counts;
}

namespace {

std::vector<int> ranks_below(int g) {
  std::vector<int> group(static_cast<size_t>(g));
  for (int r = 0; r < g; ++r) group[size_t(r)] = r;
  return group;
}

// DeepPool's calcSyncTime for node n on g ranks, in seconds (see the header).
double deeppool_sync_s(const CostModel& costs, const Graph& graph, int n, int g) {
  const Node& node = graph.nodes[size_t(n)];
  int64_t bytes = 0;
  if (node.type == "linear" && g > 1) {
    bytes = costs.grad_bytes(0, n, n + 1);
  } else if (node.type == "conv2d") {
    const auto specs = node.layer->param_specs();
    const Shape& w = specs.at(0).shape;  // [out, in, kh, kw]
    const int64_t kk = w.size() == 4 ? w[2] * w[3] : 1;
    const int64_t out_h = node.out_shape.size() == 3 ? node.out_shape[1] : 1;
    bytes = (kk * out_h + kk) * 4;
  }
  if (bytes == 0) return 0.0;
  return costs.message_s(bytes, 0, g - 1) - costs.message_s(0, 0, g - 1);  // bytes / beta
}

}  // namespace

BurstCosts burst_cost_table(const CostModel& costs, const std::vector<PlanningUnit>& units,
                            const std::vector<int>& counts, int64_t global_batch) {
  return burst_cost_table(costs, units, counts, global_batch, BurstCostOptions{});
}

BurstCosts burst_cost_table(const CostModel& costs, const std::vector<PlanningUnit>& units,
                            const std::vector<int>& counts, int64_t global_batch,
                            const BurstCostOptions& options) {
  if (options.model != "executor" && options.model != "deeppool")
    throw std::invalid_argument("unknown burst cost model '" + options.model + "'");
  const bool deeppool = options.model == "deeppool";
  if (deeppool && options.graph == nullptr)
    throw std::invalid_argument("the deeppool burst cost model needs the graph");
  BurstCosts t;
  t.counts = counts;
  const size_t n = counts.size();
  for (const PlanningUnit& u : units) {
    std::vector<double> comp, sync;
    std::vector<std::vector<double>> comm(n, std::vector<double>(n, 0.0));
    const std::vector<std::pair<int, int>> layers =
        u.layers.empty() ? std::vector<std::pair<int, int>>{{u.node_begin, u.node_end}} : u.layers;
    std::vector<std::vector<double>> layer_own(layers.size());
    const int64_t row_bytes =
        u.node_begin == 0 ? 0 : costs.saved_bytes(0, u.node_begin - 1, u.node_begin, 1);
    for (size_t k = 0; k < n; ++k) {
      const int g = counts[k];
      const int64_t samples = global_batch / g;
      double unit_sync = 0;
      for (size_t l = 0; l < layers.size(); ++l) {
        const auto [b, e] = layers[l];
        double own = costs.forward_s(0, b, e, samples) + costs.backward_s(0, b, e, samples);
        if (deeppool)
          for (int node = b; node < e; ++node)
            own += deeppool_sync_s(costs, *options.graph, node, g);
        layer_own[l].push_back(own);
      }
      comp.push_back(costs.forward_s(0, u.node_begin, u.node_end, samples) +
                     costs.backward_s(0, u.node_begin, u.node_end, samples));
      if (deeppool)
        for (int node = u.node_begin; node < u.node_end; ++node)
          unit_sync += deeppool_sync_s(costs, *options.graph, node, g);
      else
        unit_sync = segment_sync(costs, 0, u.node_begin, u.node_end, samples, ranks_below(g),
                                 options.bucket_bytes)
                        .exposed_s;
      sync.push_back(unit_sync);
      for (size_t h = 0; h < n; ++h) {
        if (h == k || u.node_begin == 0) continue;
        const int64_t from = global_batch / counts[h], stay = std::min(from, samples);
        const int64_t moved = std::max(from, samples) - stay;  // max(egress, ingress), in rows
        comm[h][k] = 2 * costs.message_s(moved * row_bytes, 0, std::max(counts[h], g) - 1);
      }
    }
    t.comp.push_back(comp);
    t.sync.push_back(sync);
    t.comm.push_back(comm);
    t.layer_own.push_back(layer_own);
  }
  if (!deeppool) {
    t.optimizer_step_s = costs.step_s(0);
    const CostModel* model = &costs;
    const std::vector<PlanningUnit> spans = units;
    const int64_t bucket_bytes = options.bucket_bytes;
    t.segment_sync = [model, spans, counts, global_batch, bucket_bytes](int begin, int end,
                                                                        size_t k) {
      const int g = counts[k];
      return segment_sync(*model, 0, spans[size_t(begin)].node_begin,
                          spans[size_t(end - 1)].node_end, global_batch / g, ranks_below(g),
                          bucket_bytes)
          .exposed_s;
    };
  }
  return t;
}

}  // namespace wt
