#include "model/model.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "mem/caching_allocator.hpp"

namespace wt {

void Stage::span_of(int a, int b, int64_t* offset, int64_t* count) const {
  // Reverse layout: node b-1 comes first.
  int64_t lo = INT64_MAX, hi = 0;
  for (int n = a; n < b; ++n) {
    int64_t o = node_offset[n - node_begin];
    lo = std::min(lo, o);
    hi = std::max(hi, o + node_count[n - node_begin]);
  }
  if (lo > hi) lo = hi;
  *offset = lo;
  *count = hi - lo;
}

namespace {

// A stage's storage, named in an out-of-memory error: which tensor, how big, and why it failed.
// stream < 0: zeroed now (a synchronisation on a device); else allocated and zeroed on `stream`.
Tensor stage_tensor(const Stage& stage, int64_t count, const char* what, int stream = -1) {
  try {
    Tensor t = stream < 0 ? Tensor::zeros({count}, *stage.allocator)
                          : Tensor::empty({count}, *stage.allocator, stream);
    if (stream >= 0) t.fill_async(0.0f, stream);
    t.set_label(std::string(what) + " of the stage of nodes " + std::to_string(stage.node_begin) +
                ".." + std::to_string(stage.node_end - 1));
    return t;
  } catch (const OutOfMemory& e) {
    throw OutOfMemory("cannot allocate the " + std::string(what) + " of the stage of nodes " +
                          std::to_string(stage.node_begin) + ".." +
                          std::to_string(stage.node_end - 1) + " (" + std::to_string(count) +
                          " floats, " + std::to_string(count * 4) + " bytes): " + e.what(),
                      size_t(count) * 4);
  }
}

}  // namespace

void Stage::materialize_values(int stream) {
  if (values.defined() || param_total == 0) return;
  values = stage_tensor(*this, param_total, "parameter values", stream);
  for (size_t i = 0; i < params.size(); ++i)
    params[i].value = values.slice(param_offsets[i], param_shapes[i]);
}

void Stage::materialize_grads(int stream) {
  if (grads.defined() || param_total == 0) return;
  grads = stage_tensor(*this, param_total, "parameter gradients", stream);
  for (size_t i = 0; i < params.size(); ++i)
    params[i].grad = grads.slice(param_offsets[i], param_shapes[i]);
}

void Stage::release_values() {
  for (Param& p : params) p.value = Tensor();
  values = Tensor();
}

void Stage::release_grads() {
  for (Param& p : params) p.grad = Tensor();
  grads = Tensor();
}

Model::Model(Graph g, CachingAllocator& allocator, const std::vector<int>& cuts,
             StageStorage storage)
    : graph(std::move(g)), allocator_(&allocator) {
  std::vector<int> bounds{0};
  for (int c : cuts) {
    if (c <= bounds.back() || c >= static_cast<int>(graph.nodes.size()))
      throw std::invalid_argument("stage cuts must be increasing node indices inside the model");
    bounds.push_back(c);
  }
  bounds.push_back(static_cast<int>(graph.nodes.size()));
  for (size_t s = 0; s + 1 < bounds.size(); ++s) {
    Stage st;
    st.allocator = allocator_;
    st.node_begin = bounds[s];
    st.node_end = bounds[s + 1];
    const int count = st.node_end - st.node_begin;
    st.node_offset.assign(count, 0);
    st.node_count.assign(count, 0);
    // Sizes first, in reverse node order.
    int64_t total = 0, total_buf = 0;
    for (int n = st.node_end - 1; n >= st.node_begin; --n) {
      st.node_offset[n - st.node_begin] = total;
      for (const auto& p : graph.nodes[n].layer->param_specs()) total += shape_numel(p.shape);
      st.node_count[n - st.node_begin] = total - st.node_offset[n - st.node_begin];
      for (const auto& b : graph.nodes[n].layer->buffer_specs()) total_buf += shape_numel(b.shape);
    }
    st.param_total = total;
    if (total_buf) st.buffer_values = stage_tensor(st, total_buf, "buffers");
    int64_t off = 0, off_buf = 0;
    // Reserve so Param pointers stay valid.
    size_t np = 0, nb = 0;
    for (int n = st.node_begin; n < st.node_end; ++n) {
      np += graph.nodes[n].layer->param_specs().size();
      nb += graph.nodes[n].layer->buffer_specs().size();
    }
    st.params.reserve(np);
    st.buffers.reserve(nb);
    for (int n = st.node_end - 1; n >= st.node_begin; --n) {
      Layer& layer = *graph.nodes[n].layer;
      for (const auto& spec : layer.param_specs()) {
        st.params.push_back({layer.name() + "." + spec.name, Tensor(), Tensor()});
        st.param_offsets.push_back(off);
        st.param_shapes.push_back(spec.shape);
        off += shape_numel(spec.shape);
      }
      for (const auto& spec : layer.buffer_specs()) {
        st.buffers.push_back(
            {layer.name() + "." + spec.name, st.buffer_values.slice(off_buf, spec.shape)});
        off_buf += shape_numel(spec.shape);
      }
    }
    if (storage == StageStorage::Held) st.materialize_storage();
    stages.push_back(std::move(st));
  }
  // Bind after all stages are in place (vectors no longer move).
  for (auto& st : stages) {
    size_t pi = 0, bi = 0;
    for (int n = st.node_end - 1; n >= st.node_begin; --n) {
      Layer& layer = *graph.nodes[n].layer;
      std::vector<Param*> ps;
      std::vector<Buffer*> bs;
      for (size_t k = 0; k < layer.param_specs().size(); ++k) ps.push_back(&st.params[pi++]);
      for (size_t k = 0; k < layer.buffer_specs().size(); ++k) bs.push_back(&st.buffers[bi++]);
      layer.bind(std::move(ps), std::move(bs));
    }
  }
}

void Model::init(uint64_t seed) {
  // Values are drawn on the host (every device starts from bitwise the same weights) into host
  // copies the layers' params and buffers point at for the while, then staged in: a GPU's memory
  // is not the host's to write.
  CachingAllocator host_memory;
  for (Stage& st : stages) {
    const bool borrowed = !st.values.defined();
    st.materialize_values();
    const Tensor values = Tensor::zeros({std::max<int64_t>(1, st.param_total)}, host_memory);
    const Tensor buffers = st.buffer_values.defined()
                               ? Tensor::zeros({st.buffer_values.numel()}, host_memory)
                               : Tensor();
    std::vector<Tensor> kept_buffers;
    for (size_t i = 0; i < st.params.size(); ++i)
      st.params[i].value = values.slice(st.param_offsets[i], st.param_shapes[i]);
    int64_t at = 0;
    for (Buffer& b : st.buffers) {
      kept_buffers.push_back(b.value);
      b.value = buffers.slice(at, b.value.shape());
      at += b.value.numel();
    }
    for (int n = st.node_begin; n < st.node_end; ++n) {
      Rng r = Rng(seed).fork(n + 1);
      graph.nodes[n].layer->init(r);
    }
    if (st.param_total > 0) st.values.copy_from_host(values.data());
    if (buffers.defined()) st.buffer_values.copy_from_host(buffers.data());
    for (size_t i = 0; i < st.params.size(); ++i)
      st.params[i].value = st.values.slice(st.param_offsets[i], st.param_shapes[i]);
    for (size_t i = 0; i < st.buffers.size(); ++i) st.buffers[i].value = kept_buffers[i];
    if (borrowed) st.release_values();
  }
}

void Model::zero_grads() {
  for (auto& st : stages)
    if (st.grads.defined()) st.grads.fill(0.0f);
}

int Model::stage_of(int node) const {
  for (size_t s = 0; s < stages.size(); ++s)
    if (node >= stages[s].node_begin && node < stages[s].node_end) return static_cast<int>(s);
  throw std::out_of_range("node outside every stage");
}

int64_t Model::param_count() const {
  int64_t n = 0;
  for (const auto& st : stages) n += st.param_count();
  return n;
}

}  // namespace wt
