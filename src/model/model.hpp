#pragma once
// A Graph cut into contiguous stages. Each stage owns flat parameter and gradient buffers; a
// Param is a slice of them. Parameters are laid out in reverse node order, so the parameters of
// any contiguous node range [a, b) are one contiguous range of the buffer: a gradient bucket that
// backward finishes is one allreduce on one contiguous span.
//
// A stage's values and grads may be released and materialized again (model-parallel schedules
// borrow other ranks' stages only while they compute on them, Wavelet §3.3 "Memory"); the layout
// (offsets, shapes, counts) stays, so Params are re-sliced in place and the layers' bound Param
// pointers stay valid. Buffers (batchnorm statistics, small) are always held.
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
  int64_t param_total = 0;                // elements of values (and grads), held or not
  std::vector<int64_t> param_offsets;     // per params[i]: its first element in values/grads
  std::vector<Shape> param_shapes;        // per params[i]
  CachingAllocator* allocator = nullptr;  // the device memory its storage comes from

  int64_t param_count() const { return param_total; }
  // Allocate zeroed storage (no-op when held) and re-slice every Param onto it.
  // Zeroed storage for a borrowed stage: now (stream < 0, a synchronisation on a device), or
  // allocated and zeroed on `stream` without waiting (the executor's instructions).
  void materialize_values(int stream = -1);
  void materialize_grads(int stream = -1);
  void materialize_storage() {
    materialize_values();
    materialize_grads();
  }
  // Drop the storage and every Param slice of it, so the allocator gets the bytes back.
  void release_values();
  void release_grads();
  void release_storage() {
    release_values();
    release_grads();
  }
  // The contiguous span [offset, offset+count) holding the parameters of nodes [a, b).
  void span_of(int a, int b, int64_t* offset, int64_t* count) const;
};

// Deferred: no stage storage is allocated yet (buffers are); whoever decides which stages this
// rank holds materializes them (the executor), and init() initialises the rest one at a time.
enum class StageStorage { Held, Deferred };

class Model {
 public:
  // cuts: the first node of every stage after the first; empty = one stage. Parameters,
  // gradients and buffers come from `allocator` (the device context's), which must outlive the
  // model.
  Model(Graph graph, CachingAllocator& allocator, const std::vector<int>& cuts = {},
        StageStorage storage = StageStorage::Held);
  Model(Model&&) = default;

  // Deterministic initialisation: every layer draws from Rng(seed).fork(node index). A stage whose
  // values are not held is materialized for its layers' init and released again, so buffers
  // (batchnorm statistics) are initialised everywhere and the peak is one extra stage.
  void init(uint64_t seed);
  void zero_grads();

  Graph graph;
  std::vector<Stage> stages;

  int stage_of(int node) const;
  int64_t param_count() const;
  CachingAllocator& allocator() const { return *allocator_; }

 private:
  CachingAllocator* allocator_;
};

}  // namespace wt
