#pragma once
// A Graph cut into contiguous stages. Each stage owns flat parameter and gradient buffers; a
// Param is a slice of them. Parameters are laid out in reverse node order, so the parameters of
// any contiguous node range [a, b) are one contiguous range of the buffer: a gradient bucket that
// backward finishes is one allreduce on one contiguous span.
#include <string>
#include <vector>

#include "model/graph.hpp"

namespace wt {

struct Stage {
  int node_begin = 0;
  int node_end = 0;  // exclusive
  Tensor values;     // flat parameters
  Tensor grads;      // flat gradients, same layout
  std::vector<Param> params;
  Tensor buffer_values;  // flat non-trained state (batchnorm running stats)
  std::vector<Buffer> buffers;
  // Element offset of each node's first parameter in `values` (nodes without params: the offset
  // where they would start). Index: node - node_begin.
  std::vector<int64_t> node_offset;
  std::vector<int64_t> node_count;

  int64_t param_count() const { return values.defined() ? values.numel() : 0; }
  // The contiguous span [offset, offset+count) holding the parameters of nodes [a, b).
  void span_of(int a, int b, int64_t* offset, int64_t* count) const;
};

class Model {
 public:
  // cuts: the first node of every stage after the first; empty = one stage.
  Model(Graph graph, const std::vector<int>& cuts = {});
  Model(Model&&) = default;

  // Deterministic initialisation: every layer draws from Rng(seed).fork(node index).
  void init(uint64_t seed);
  void zero_grads();

  Graph graph;
  std::vector<Stage> stages;

  int stage_of(int node) const;
  int64_t param_count() const;
};

}  // namespace wt
