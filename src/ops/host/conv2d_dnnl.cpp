#include "ops/host/conv2d_dnnl.hpp"

#if defined(WT_HAVE_DNNL_CONV)

#include <array>
#include <cstdlib>
#include <dnnl.hpp>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "ops/host/bf16.hpp"
#include "ops/host/elementwise.hpp"

namespace wt::ops {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

// Grow-only 64-byte aligned buffer for activations and weights in oneDNN's layouts. Shared by
// every geometry on a thread, so only the largest conv's copies stay resident.
class Scratch {
 public:
  void* get(size_t bytes) {
    if (bytes > size_) {
      data_.reset(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
      if (!data_) throw std::bad_alloc();
      size_ = bytes;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

// One scratch buffer per role a tensor can play inside a call. Roles whose lifetimes never overlap
// share one: forward's dst is dead before backward's diff_dst is made, and backward's src copy is
// dead once the weight gradient is done, before backward data writes diff_src.
enum Role { kSrc, kWeights, kDst, kDiffDst2, kDiffWeights, kDiffBias, kRoles };
constexpr Role kDiffDst = kDst, kDiffSrc = kSrc;

// Whether from -> to rounds an FP32 activation, NCHW or already channel-blocked, into bf16
// nChw16c, which to_bf16_nchw16c (or, from the blocked layout, plain rounding) does in one pass:
// oneDNN's reorder for it ran at a quarter of its FP32 one's speed.
bool is_rounding_into_bf16_blocked(const memory::desc& from, const memory::desc& to) {
  const memory::dims dims = from.dims();
  return dims.size() == 4 &&
         (from == memory::desc(dims, kF32, Tag::nchw) ||
          from == memory::desc(dims, kF32, Tag::nChw16c)) &&
         to == memory::desc(dims, memory::data_type::bf16, Tag::nChw16c);
}

// A reorder from a plain user layout to (or from) oneDNN's layout, made once. `accumulate` adds to
// the destination (sum post-op) instead of overwriting it: the weight gradient's += contract.
class Relayout {
 public:
  Relayout(const memory::desc& from, const memory::desc& to, const dnnl::engine& engine,
           bool accumulate = false)
      : from_(from),
        to_(to),
        dims_(from.dims()),
        needed_(accumulate || from != to),
        to_bf16_blocked_(!accumulate && is_rounding_into_bf16_blocked(from, to)),
        from_blocked_(dims_.size() == 4 && from == memory::desc(dims_, kF32, Tag::nChw16c)) {
    if (!needed_ || to_bf16_blocked_) return;
    dnnl::primitive_attr attr;
    if (accumulate) {
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      attr.set_post_ops(ops);
    }
    reorder_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to, attr));
  }
  bool needed() const { return needed_; }
  // Runs the reorder; `to` must hold to_.get_size() bytes.
  void run(dnnl::stream& stream, const dnnl::engine& engine, const void* from, void* to) const {
    if (to_bf16_blocked_) {
      stream.wait();  // runs on this thread: after whatever the stream holds
      const auto* x = static_cast<const float*>(from);
      if (from_blocked_) {  // the same order: rounding alone (16 | channels, so no padding)
        const int64_t count = dims_[0] * dims_[1] * dims_[2] * dims_[3];
        to_bf16_rows(x, 1, count, count, static_cast<uint16_t*>(to));
      } else {
        to_bf16_nchw16c(x, dims_[0], dims_[1], dims_[2] * dims_[3], static_cast<uint16_t*>(to));
      }
      return;
    }
    memory src(from_, engine, const_cast<void*>(from)), dst(to_, engine, to);
    reorder_.execute(stream, src, dst);
  }

 private:
  memory::desc from_, to_;
  memory::dims dims_;  // from's, read once (dims() builds a vector each call)
  bool needed_, to_bf16_blocked_, from_blocked_;
  dnnl::reorder reorder_;
};

struct ConvPrimitives {
  dnnl::convolution_forward forward;
  // forward with a ReLU post-op; empty when oneDNN would run it with another kernel than forward's
  // (then the ReLU is a pass after it, so fused and unfused stay bitwise the same).
  std::optional<dnnl::convolution_forward> forward_relu;
  dnnl::convolution_backward_data backward_data;
  dnnl::convolution_backward_weights backward_weights;
  memory::desc src, weights, bias, dst;                             // forward's layouts
  memory::desc bd_diff_src, bd_weights, bd_diff_dst;                // backward data's
  memory::desc bw_src, bw_diff_weights, bw_diff_bias, bw_diff_dst;  // backward weights'
  std::optional<Relayout> x_to_src, w_to_weights, dst_to_y;         // forward
  std::optional<Relayout> w_to_bd, dy_to_bd, bd_to_dx;              // backward data
  std::optional<Relayout> x_to_bw, dy_to_bw, bw_to_dw;              // backward weights
};

using Key = std::array<int64_t, 13>;

class ConvCache {
 public:
  ConvCache() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

  // The geometry's primitives, or null when oneDNN cannot implement it.
  const ConvPrimitives* find(const Conv2dGeometry& g, bool has_bias, DnnlConvLayout layout,
                             Precision precision) {
    const Key key{g.batch,         g.in_channels,      g.in_h,
                  g.in_w,          g.out_channels,     g.kernel,
                  g.stride,        g.padding,          has_bias ? 1 : 0,
                  int64_t(layout), int64_t(precision), g.x_blocked,
                  g.y_blocked};
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, create(g, has_bias, layout, precision)).first;
    return it->second.get();
  }
  dnnl::engine& engine() { return engine_; }
  dnnl::stream& stream() { return stream_; }
  void* scratch(Role role, const memory::desc& md) { return scratch_[role].get(md.get_size()); }

 private:
  std::unique_ptr<ConvPrimitives> create(const Conv2dGeometry& g, bool has_bias,
                                         DnnlConvLayout layout, Precision precision);

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::map<Key, std::unique_ptr<ConvPrimitives>> cache_;
  Scratch scratch_[kRoles];
};

ConvCache& cache() {
  thread_local ConvCache instance;
  return instance;
}

memory::desc plain(const memory::dims& dims, Tag tag) { return memory::desc(dims, kF32, tag); }

// `fwd` with a ReLU post-op on the same layouts, if oneDNN gives it the same kernel.
std::optional<dnnl::convolution_forward> with_relu(
    const dnnl::convolution_forward::primitive_desc& fwd,
    const dnnl::convolution_forward::desc& desc, const dnnl::engine& engine) {
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const dnnl::convolution_forward::primitive_desc relu(desc, attr, engine, true);
  if (!relu || std::string(relu.impl_info_str()) != fwd.impl_info_str()) return std::nullopt;
  return dnnl::convolution_forward(relu);
}

std::unique_ptr<ConvPrimitives> ConvCache::create(const Conv2dGeometry& g, bool has_bias,
                                                  DnnlConvLayout layout, Precision precision) {
  using namespace dnnl;
  const int64_t Ho = g.out_h(), Wo = g.out_w();
  // oneDNN wants the padding that makes the output size exact; a stride that skips the last
  // input rows would need it negative, which its kernels reject: leave those to im2col.
  const memory::dims pad_l{g.padding, g.padding},
      pad_r{(Ho - 1) * g.stride + g.kernel - g.in_h - g.padding,
            (Wo - 1) * g.stride + g.kernel - g.in_w - g.padding};
  if (pad_r[0] < 0 || pad_r[1] < 0) return nullptr;
  const memory::dims strides{g.stride, g.stride};
  const memory::dims x_dims{g.batch, g.in_channels, g.in_h, g.in_w},
      w_dims{g.out_channels, g.in_channels, g.kernel, g.kernel}, b_dims{g.out_channels},
      y_dims{g.batch, g.out_channels, Ho, Wo};
  // The user's layouts: NCHW, or the channel-blocked one where the layers around keep it
  // (model/block_channels.hpp), which is what oneDNN computes in on AVX-512: no reorder there.
  const memory::desc x_md = plain(x_dims, g.x_blocked ? Tag::nChw16c : Tag::nchw),
                     w_md = plain(w_dims, Tag::oihw), b_md = plain(b_dims, Tag::x),
                     y_md = plain(y_dims, g.y_blocked ? Tag::nChw16c : Tag::nchw);
  const bool blocked = layout == DnnlConvLayout::kBlocked;
  const memory::desc x_any = blocked ? plain(x_dims, Tag::any) : x_md,
                     w_any = blocked ? plain(w_dims, Tag::any) : w_md,
                     y_any = blocked ? plain(y_dims, Tag::any) : y_md;
  // What the products read: bf16 copies under bf16 (the reorders from the user's FP32 round them),
  // else the FP32 layouts above. Outputs (dst, diff_src, diff_weights) stay FP32.
  const auto in_type = precision == Precision::Bf16 ? memory::data_type::bf16 : kF32;
  const memory::desc x_in(x_dims, in_type, blocked ? Tag::any : Tag::nchw),
      w_in(w_dims, in_type, blocked ? Tag::any : Tag::oihw),
      dy_in(y_dims, in_type, blocked ? Tag::any : Tag::nchw);
  const memory::desc no_bias;
  const auto direct = algorithm::convolution_direct;
  try {
    auto p = std::make_unique<ConvPrimitives>();
    const convolution_forward::primitive_desc fwd(
        convolution_forward::desc(prop_kind::forward_training, direct, x_in, w_in,
                                  has_bias ? b_md : no_bias, y_any, strides, pad_l, pad_r),
        engine_);
    const convolution_backward_data::primitive_desc bd(
        convolution_backward_data::desc(direct, x_any, w_in, dy_in, strides, pad_l, pad_r), engine_,
        fwd);
    const convolution_backward_weights::primitive_desc bw(
        convolution_backward_weights::desc(direct, x_in, w_any, has_bias ? b_md : no_bias, dy_in,
                                           strides, pad_l, pad_r),
        engine_, fwd);
    p->forward = convolution_forward(fwd);
    p->forward_relu =
        with_relu(fwd,
                  convolution_forward::desc(
                      prop_kind::forward_training, direct, fwd.src_desc(), fwd.weights_desc(),
                      has_bias ? fwd.bias_desc() : no_bias, fwd.dst_desc(), strides, pad_l, pad_r),
                  engine_);
    p->backward_data = convolution_backward_data(bd);
    p->backward_weights = convolution_backward_weights(bw);
    p->src = fwd.src_desc();
    p->weights = fwd.weights_desc();
    p->bias = fwd.bias_desc();
    p->dst = fwd.dst_desc();
    p->bd_diff_src = bd.diff_src_desc();
    p->bd_weights = bd.weights_desc();
    p->bd_diff_dst = bd.diff_dst_desc();
    p->bw_src = bw.src_desc();
    p->bw_diff_weights = bw.diff_weights_desc();
    p->bw_diff_bias = bw.diff_bias_desc();
    p->bw_diff_dst = bw.diff_dst_desc();
    p->x_to_src.emplace(x_md, p->src, engine_);
    p->w_to_weights.emplace(w_md, p->weights, engine_);
    p->dst_to_y.emplace(p->dst, y_md, engine_);
    p->w_to_bd.emplace(w_md, p->bd_weights, engine_);
    p->dy_to_bd.emplace(y_md, p->bd_diff_dst, engine_);
    p->bd_to_dx.emplace(p->bd_diff_src, x_md, engine_);
    p->x_to_bw.emplace(x_md, p->bw_src, engine_);
    p->dy_to_bw.emplace(y_md, p->bw_diff_dst, engine_);
    p->bw_to_dw.emplace(p->bw_diff_weights, w_md, engine_, /*accumulate=*/true);
    return p;
  } catch (const dnnl::error&) {
    return nullptr;  // no implementation for this geometry
  }
}

// `user` itself when no reorder is needed, else `user` reordered into the role's scratch.
const void* to_internal(ConvCache& c, const Relayout& r, Role role, const memory::desc& md,
                        const void* user) {
  if (!r.needed()) return user;
  void* internal = c.scratch(role, md);
  r.run(c.stream(), c.engine(), user, internal);
  return internal;
}

memory wrap(ConvCache& c, const memory::desc& md, const void* data) {
  return memory(md, c.engine(), const_cast<void*>(data));
}

const ConvPrimitives& primitives(ConvCache& c, const Conv2dGeometry& g, bool has_bias,
                                 DnnlConvLayout layout, Precision precision) {
  const ConvPrimitives* p = c.find(g, has_bias, layout, precision);
  if (!p) throw std::invalid_argument("oneDNN has no convolution for this geometry");
  return *p;
}

}  // namespace

DnnlConvLayout conv2d_dnnl_default_layout() { return DnnlConvLayout::kBlocked; }

bool conv2d_dnnl_supports(const Conv2dGeometry& g, bool has_bias, DnnlConvLayout layout,
                          Precision precision) {
  return cache().find(g, has_bias, layout, precision) != nullptr;
}

void conv2d_dnnl_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias,
                         float* y, DnnlConvLayout layout, bool relu, Precision precision) {
  ConvCache& c = cache();
  const ConvPrimitives& p = primitives(c, g, bias != nullptr, layout, precision);
  const void* src = to_internal(c, *p.x_to_src, kSrc, p.src, x);
  const void* weights = to_internal(c, *p.w_to_weights, kWeights, p.weights, w);
  void* dst = p.dst_to_y->needed() ? c.scratch(kDst, p.dst) : y;
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, wrap(c, p.src, src)},
                                       {DNNL_ARG_WEIGHTS, wrap(c, p.weights, weights)},
                                       {DNNL_ARG_DST, wrap(c, p.dst, dst)}};
  if (bias) args.emplace(DNNL_ARG_BIAS, wrap(c, p.bias, bias));
  const bool fused = relu && p.forward_relu;
  (fused ? *p.forward_relu : p.forward).execute(c.stream(), args);
  if (p.dst_to_y->needed()) p.dst_to_y->run(c.stream(), c.engine(), dst, y);
  c.stream().wait();
  if (relu && !fused) relu_forward(y, y, g.batch * g.out_channels * g.out_pixels());
}

void conv2d_dnnl_backward(const Conv2dGeometry& g, const float* x, const float* w, const float* dy,
                          float* dx, float* dw, float* dbias, DnnlConvLayout layout,
                          Precision precision) {
  ConvCache& c = cache();
  const ConvPrimitives& p = primitives(c, g, dbias != nullptr, layout, precision);
  // Weight gradient: computed into scratch, then added into dw by the accumulating reorder.
  const void* bw_src = nullptr;
  const void* bw_dy = nullptr;
  float* diff_b = nullptr;
  if (dw) {
    bw_src = to_internal(c, *p.x_to_bw, kSrc, p.bw_src, x);
    bw_dy = to_internal(c, *p.dy_to_bw, kDiffDst, p.bw_diff_dst, dy);
    void* diff_w = c.scratch(kDiffWeights, p.bw_diff_weights);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, wrap(c, p.bw_src, bw_src)},
        {DNNL_ARG_DIFF_DST, wrap(c, p.bw_diff_dst, bw_dy)},
        {DNNL_ARG_DIFF_WEIGHTS, wrap(c, p.bw_diff_weights, diff_w)}};
    if (dbias) {
      diff_b = static_cast<float*>(c.scratch(kDiffBias, p.bw_diff_bias));
      args.emplace(DNNL_ARG_DIFF_BIAS, wrap(c, p.bw_diff_bias, diff_b));
    }
    p.backward_weights.execute(c.stream(), args);
    p.bw_to_dw->run(c.stream(), c.engine(), diff_w, dw);
  }
  if (dx) {
    // dy in backward data's layout: reuse the weight pass's copy when the layouts agree.
    const void* bd_dy = bw_dy && p.bd_diff_dst == p.bw_diff_dst
                            ? bw_dy
                            : to_internal(c, *p.dy_to_bd, kDiffDst2, p.bd_diff_dst, dy);
    const void* bd_w = to_internal(c, *p.w_to_bd, kWeights, p.bd_weights, w);
    void* diff_src = p.bd_to_dx->needed() ? c.scratch(kDiffSrc, p.bd_diff_src) : dx;
    p.backward_data.execute(c.stream(), {{DNNL_ARG_DIFF_DST, wrap(c, p.bd_diff_dst, bd_dy)},
                                         {DNNL_ARG_WEIGHTS, wrap(c, p.bd_weights, bd_w)},
                                         {DNNL_ARG_DIFF_SRC, wrap(c, p.bd_diff_src, diff_src)}});
    if (p.bd_to_dx->needed()) p.bd_to_dx->run(c.stream(), c.engine(), diff_src, dx);
  }
  c.stream().wait();
  if (diff_b)
    for (int64_t oc = 0; oc < g.out_channels; ++oc) dbias[oc] += diff_b[oc];
}

}  // namespace wt::ops

#endif  // WT_HAVE_DNNL_CONV
