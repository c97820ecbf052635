#include "ops/host/host_ops.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/host/attention.hpp"
#include "ops/host/batchnorm.hpp"
#include "ops/host/bf16.hpp"
#include "ops/host/channel_blocks.hpp"
#include "ops/host/conv2d.hpp"
#include "ops/host/conv2d_dnnl.hpp"
#include "ops/host/conv2d_winograd.hpp"
#include "ops/host/elementwise.hpp"
#include "ops/host/finite_check.hpp"
#include "ops/host/gemm.hpp"
#include "ops/host/host_for.hpp"
#include "ops/host/layer_norm.hpp"
#include "ops/host/linear.hpp"
#include "ops/host/optimizer_updates.hpp"
#include "ops/host/pool2d.hpp"
#include "ops/host/pool2d_blocked.hpp"
#include "ops/host/rows.hpp"
#include "ops/host/softmax_xent.hpp"
#include "ops/portable/elementwise.hpp"
#include "ops/portable/rows.hpp"
#include "ops/portable/softmax_xent.hpp"

namespace wt {

namespace {

// The bf16 im2col path (geometries oneDNN has no kernel for) rounds its inputs into copies held
// as FP32 in front of the workspace: bf16 inputs with FP32 accumulation, as oneDNN's would be.
int64_t rounded_input_floats(const ops::Conv2dGeometry& g, Precision precision) {
  if (precision != Precision::Bf16) return 0;
  return g.batch * g.in_channels * g.in_h * g.in_w +
         g.out_channels * g.in_channels * g.kernel * g.kernel +
         g.batch * g.out_channels * g.out_pixels();
}

// x, w and dy (any may be null) replaced by their rounded copies at the head of `ws`; returns
// the workspace that follows them.
float* round_conv_inputs(const ops::Conv2dGeometry& g, const float** x, const float** w,
                         const float** dy, float* ws) {
  const int64_t sizes[] = {g.batch * g.in_channels * g.in_h * g.in_w,
                           g.out_channels * g.in_channels * g.kernel * g.kernel,
                           g.batch * g.out_channels * g.out_pixels()};
  const float** inputs[] = {x, w, dy};
  for (int i = 0; i < 3; ++i) {
    if (inputs[i] && *inputs[i]) {
      ops::round_to_bf16(*inputs[i], ws, sizes[i]);
      *inputs[i] = ws;
    }
    ws += sizes[i];
  }
  return ws;
}

// v in the channel-blocked layout: v itself when it is, else a relaid copy held in `storage`.
const float* blocked_view(const float* v, bool blocked, int64_t n, int64_t c, int64_t pixels,
                          std::vector<float>& storage) {
  if (blocked) return v;
  storage.resize(n * c * pixels);
  ops::nchw_to_blocked(v, n, c, pixels, storage.data());
  return storage.data();
}

// Winograd (blocked in, blocked out) for a geometry of either layout: NCHW tensors are relaid.
void winograd_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                      const float* bias, float* y, bool relu) {
  ops::Conv2dGeometry b = g;
  b.x_blocked = b.y_blocked = true;
  std::vector<float> xs, ys;
  const float* xb = blocked_view(x, g.x_blocked, g.batch, g.in_channels, g.in_h * g.in_w, xs);
  if (!g.y_blocked) ys.resize(g.batch * g.out_channels * g.out_pixels());
  ops::conv2d_winograd_forward(b, xb, w, bias, g.y_blocked ? y : ys.data(), relu);
  if (!g.y_blocked) ops::blocked_to_nchw(ys.data(), g.batch, g.out_channels, g.out_pixels(), y);
}

void winograd_backward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                       const float* dy, float* dx, float* dw, float* dbias) {
  ops::Conv2dGeometry b = g;
  b.x_blocked = b.y_blocked = true;
  const int64_t in_pixels = g.in_h * g.in_w;
  std::vector<float> xs, dys, dxs;
  const float* xb = dw ? blocked_view(x, g.x_blocked, g.batch, g.in_channels, in_pixels, xs) : x;
  const float* dyb = blocked_view(dy, g.y_blocked, g.batch, g.out_channels, g.out_pixels(), dys);
  if (dx && !g.x_blocked) dxs.resize(g.batch * g.in_channels * in_pixels);
  ops::conv2d_winograd_backward(b, xb, w, dyb, dx && !g.x_blocked ? dxs.data() : dx, dw, dbias);
  if (dx && !g.x_blocked) ops::blocked_to_nchw(dxs.data(), g.batch, g.in_channels, in_pixels, dx);
}

}  // namespace

HostOps::HostOps(Precision precision, ConvAlgorithm conv_algorithm)
    : precision_(precision), conv_algorithm_(conv_algorithm) {}

bool HostOps::takes_blocked_activations() const {
#if defined(WT_HAVE_DNNL_CONV)
  return true;
#else
  return false;
#endif
}

bool HostOps::conv_by_dnnl(const ops::Conv2dGeometry& g, bool bias) const {
#if defined(WT_HAVE_DNNL_CONV)
  return ops::conv2d_dnnl_supports(g, bias, ops::conv2d_dnnl_default_layout(), precision_);
#else
  (void)g;
  (void)bias;
  return false;
#endif
}

// Winograd on the channel-blocked layout; an NCHW geometry (model.fuse_epilogues = false) is
// relaid around it, so its results are bitwise those of the blocked graph.
bool HostOps::conv_by_winograd(const ops::Conv2dGeometry& g) const {
  ops::Conv2dGeometry blocked = g;
  blocked.x_blocked = blocked.y_blocked = true;
  return conv_algorithm_ == ConvAlgorithm::Auto && precision_ == Precision::Fp32 &&
         winograd_pays_in_this_build() && ops::conv2d_winograd_supports(blocked);
}

int64_t HostOps::conv2d_scratch_floats(const ops::Conv2dGeometry& g, bool bias) const {
  if (conv_by_winograd(g) || conv_by_dnnl(g, bias)) return 0;
  return rounded_input_floats(g, precision_) +
         ops::conv2d_workspace_floats(g, ops::conv2d_chunk(g));
}

// oneDNN where it supports the geometry, else chunked im2col + GEMM with scratch memory.
void HostOps::conv2d_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                             const float* bias, float* y, const Scratch& scratch) const {
  if (conv_by_winograd(g)) return winograd_forward(g, x, w, bias, y, false);
#if defined(WT_HAVE_DNNL_CONV)
  if (conv_by_dnnl(g, bias != nullptr))
    return ops::conv2d_dnnl_forward(g, x, w, bias, y, ops::conv2d_dnnl_default_layout(), false,
                                    precision_);
#endif
  if (g.x_blocked || g.y_blocked) {  // a geometry oneDNN has no kernel for: im2col on NCHW copies
    std::vector<float> xs, ys;
    float* y_nchw = ops::nchw_result(y, g.y_blocked, g.batch, g.out_channels, g.out_pixels(), ys);
    conv2d_forward(g.nchw(),
                   ops::nchw_view(x, g.x_blocked, g.batch, g.in_channels, g.in_h * g.in_w, xs), w,
                   bias, y_nchw, scratch);
    ops::store_nchw_result(ys, g.y_blocked, g.batch, g.out_channels, g.out_pixels(), y);
    return;
  }
  Tensor workspace;
  float* ws = scratch.reserved;
  if (!ws)
    ws = (workspace = scratch.floats(conv2d_scratch_floats(g, bias != nullptr))).device_ptr();
  if (precision_ == Precision::Bf16) ws = round_conv_inputs(g, &x, &w, nullptr, ws);
  ops::conv2d_forward(g, x, w, bias, y, ws, ops::conv2d_chunk(g));
}

void HostOps::conv2d_backward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                              const float* dy, float* dx, float* dw, float* dbias,
                              const Scratch& scratch) const {
  if (conv_by_winograd(g)) return winograd_backward(g, x, w, dy, dx, dw, dbias);
#if defined(WT_HAVE_DNNL_CONV)
  if (conv_by_dnnl(g, dbias != nullptr))
    return ops::conv2d_dnnl_backward(g, x, w, dy, dx, dw, dbias, ops::conv2d_dnnl_default_layout(),
                                     precision_);
#endif
  if (g.x_blocked || g.y_blocked) {  // as conv2d_forward
    const int64_t in_pixels = g.in_h * g.in_w;
    std::vector<float> xs, dys, dxs;
    float* dx_nchw =
        dx ? ops::nchw_result(dx, g.x_blocked, g.batch, g.in_channels, in_pixels, dxs) : nullptr;
    conv2d_backward(g.nchw(), ops::nchw_view(x, g.x_blocked, g.batch, g.in_channels, in_pixels, xs),
                    w,
                    ops::nchw_view(dy, g.y_blocked, g.batch, g.out_channels, g.out_pixels(), dys),
                    dx_nchw, dw, dbias, scratch);
    if (dx) ops::store_nchw_result(dxs, g.x_blocked, g.batch, g.in_channels, in_pixels, dx);
    return;
  }
  Tensor workspace;
  float* ws = scratch.reserved;
  if (!ws)
    ws = (workspace = scratch.floats(conv2d_scratch_floats(g, dbias != nullptr))).device_ptr();
  if (precision_ == Precision::Bf16) ws = round_conv_inputs(g, &x, &w, &dy, ws);
  ops::conv2d_backward(g, x, w, dy, dx, dw, dbias, ws, ops::conv2d_chunk(g));
}

// oneDNN's ReLU post-op where it supports the geometry, else the ReLU in place after im2col.
void HostOps::conv2d_relu_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                                  const float* bias, float* y, const Scratch& scratch) const {
  if (conv_by_winograd(g)) return winograd_forward(g, x, w, bias, y, true);
#if defined(WT_HAVE_DNNL_CONV)
  if (conv_by_dnnl(g, bias != nullptr))
    return ops::conv2d_dnnl_forward(g, x, w, bias, y, ops::conv2d_dnnl_default_layout(), true,
                                    precision_);
#endif
  conv2d_forward(g, x, w, bias, y, scratch);
  ops::relu_forward(y, y, g.batch * g.out_channels * g.out_pixels());
}

void HostOps::linear_relu_forward(const float* x, const float* w, const float* b, int64_t rows,
                                  int64_t in, int64_t out, float* y) const {
  ops::linear_relu_forward(x, w, b, rows, in, out, y, precision_);
}

void HostOps::relu_backward_column_sums(const float* y, const float* dy, int64_t rows,
                                        int64_t width, float* dx, float* sums) const {
  ops::relu_backward_column_sums(y, dy, rows, width, dx, sums);
}

void HostOps::maxpool2d_relu_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                                      float* dx) const {
  if (g.x_blocked || g.y_blocked) return ops::maxpool2d_backward_blocked(g, x, dy, dx, true);
  ops::maxpool2d_relu_backward(g, x, dy, dx);
}

void HostOps::relu_forward(const float* x, float* y, int64_t n) const {
  ops::relu_forward(x, y, n);
}

void HostOps::relu_backward(const float* y, const float* dy, float* dx, int64_t n) const {
  ops::relu_backward(y, dy, dx, n);
}

void HostOps::gelu_forward(const float* x, float* y, int64_t n) const {
  ops::gelu_forward(x, y, n);
}

void HostOps::gelu_backward(const float* x, const float* dy, float* dx, int64_t n) const {
  ops::gelu_backward(x, dy, dx, n);
}

void HostOps::sum_arrays(const float* const* xs, int count, float* y, int64_t n) const {
  ops::sum_arrays(xs, count, y, n);
}

void HostOps::scale(const float* x, float s, float* y, int64_t n) const { ops::scale(x, s, y, n); }

void HostOps::accumulate(const float* x, float* y, int64_t n) const { ops::accumulate(x, y, n); }

void HostOps::scale_in_place(float s, float* y, int64_t n) const { ops::scale_in_place(s, y, n); }

void HostOps::multiply(const float* a, const float* b, float* y, int64_t n) const {
  ops::multiply(a, b, y, n);
}

void HostOps::token_ids(const float* x, int64_t n, int64_t vocab, int64_t* ids,
                        float* check) const {
  const kern::TokenIds kernel{x, vocab, ids};
  kern::FirstBad bad;
  for (int64_t r = 0; r < n; ++r)
    if (!kernel(r) && bad.at > r) bad.at = r;
  if (bad.at == kern::FirstBad{}.at) return;
  if (!check) throw std::out_of_range(ops::token_id_error(x[bad.at], bad.at, vocab));
  kern::RecordFirstBad{reinterpret_cast<kern::InputCheck*>(check), x, vocab}(bad);
}

void HostOps::fill(float value, float* y, int64_t n) const {
  ops::host_for("wt::fill", n, kern::Fill{value, y});
}

void HostOps::copy(const float* x, float* y, int64_t n) const {
  if (n > 0 && x != y) std::memcpy(y, x, size_t(n) * sizeof(float));
}

void HostOps::dequantize_u8(const uint8_t* x, int64_t n, int64_t row, int64_t group,
                            const float* table, float* y) const {
  ops::host_for("wt::dequantize_u8", n, kern::DequantizeU8{x, row, group, table, y});
}

void HostOps::scale_by(const float* x, const float* s, float factor, float* y, int64_t n) const {
  ops::host_for("wt::scale_by", n, kern::ScaleByDeviceScalar{x, s, factor, y});
}

void HostOps::dropout_masks(const ops::DropoutMasks& d, float* mask) const {
  ops::dropout_masks(d, mask);
}

void HostOps::gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                   int64_t ldc) const {
  ops::gemm(precision_, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void HostOps::linear_forward(const float* x, const float* w, const float* b, int64_t rows,
                             int64_t in, int64_t out, float* y) const {
  ops::linear_forward(x, w, b, rows, in, out, y, precision_);
}

void HostOps::linear_backward(const float* x, const float* w, const float* dy, int64_t rows,
                              int64_t in, int64_t out, float* dw, float* db, float* dx) const {
  ops::linear_backward(x, w, dy, rows, in, out, dw, db, dx, precision_);
}

void HostOps::add_row(const float* x, const float* row, int64_t rows, int64_t width,
                      float* y) const {
  ops::add_row(x, row, rows, width, y);
}

void HostOps::add_column_sums(const float* x, int64_t rows, int64_t width, float* sums) const {
  ops::add_column_sums(x, rows, width, sums);
}

void HostOps::gather_rows(const float* table, const int64_t* ids, int64_t rows, int64_t width,
                          float* y) const {
  ops::gather_rows(table, ids, rows, width, y);
}

void HostOps::scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                               float* table, int64_t) const {
  ops::scatter_add_rows(x, ids, rows, width, table);
}

void HostOps::maxpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const {
  if (g.x_blocked || g.y_blocked) return ops::maxpool2d_forward_blocked(g, x, y);
  ops::maxpool2d_forward(g, x, y);
}

void HostOps::maxpool2d_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                                 float* dx) const {
  if (g.x_blocked || g.y_blocked) return ops::maxpool2d_backward_blocked(g, x, dy, dx, false);
  ops::maxpool2d_backward(g, x, dy, dx);
}

void HostOps::avgpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const {
  ops::avgpool2d_forward(g, x, y);
}

void HostOps::avgpool2d_backward(const ops::Pool2dGeometry& g, const float* dy, float* dx) const {
  ops::avgpool2d_backward(g, dy, dx);
}

void HostOps::global_avgpool_forward(int64_t batch, int64_t channels, int64_t pixels,
                                     const float* x, float* y) const {
  ops::global_avgpool_forward(batch, channels, pixels, x, y);
}

void HostOps::global_avgpool_backward(int64_t batch, int64_t channels, int64_t pixels,
                                      const float* dy, float* dx) const {
  ops::global_avgpool_backward(batch, channels, pixels, dy, dx);
}

void HostOps::batchnorm_forward_train(const float* x, const ops::BatchNormShape& s,
                                      const float* gamma, const float* beta, float eps,
                                      float momentum, float* running_mean, float* running_var,
                                      float* mean, float* invstd, float* y) const {
  ops::batchnorm_forward_train(x, s, gamma, beta, eps, momentum, running_mean, running_var, mean,
                               invstd, y);
}

void HostOps::batchnorm_forward_eval(const float* x, const ops::BatchNormShape& s,
                                     const float* gamma, const float* beta,
                                     const float* running_mean, const float* running_var, float eps,
                                     float* mean, float* invstd, float* y) const {
  ops::batchnorm_forward_eval(x, s, gamma, beta, running_mean, running_var, eps, mean, invstd, y);
}

void HostOps::batchnorm_backward(const float* x, const float* dy, const ops::BatchNormShape& s,
                                 const float* gamma, const float* mean, const float* invstd,
                                 bool batch_stats, float* dx, float* dgamma, float* dbeta) const {
  ops::batchnorm_backward(x, dy, s, gamma, mean, invstd, batch_stats, dx, dgamma, dbeta);
}

void HostOps::layer_norm_forward(const float* x, const float* w, const float* b, int64_t rows,
                                 int64_t dim, double eps, float* y, float* stats) const {
  ops::layer_norm_forward(x, w, b, rows, dim, eps, y, stats);
}

void HostOps::layer_norm_backward(const float* x, const float* dy, const float* w,
                                  const float* stats, int64_t rows, int64_t dim, float* dw,
                                  float* db, float* dx) const {
  ops::layer_norm_backward(x, dy, w, stats, rows, dim, dw, db, dx);
}

void HostOps::causal_softmax(float* p, int64_t T, int64_t count) const {
  ops::causal_softmax(p, T, count);
}

void HostOps::causal_softmax_backward(const float* p, float* g, int64_t T, int64_t count) const {
  ops::causal_softmax_backward(p, g, T, count);
}

void HostOps::softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n, int64_t k,
                                   float* grad, const ops::XentOutputs& out) const {
  const ops::XentStats stats = ops::softmax_xent_forward(logits, labels, n, k, grad);
  kern::store_xent(stats.loss_sum, stats.correct, out.per_row, out.loss_scale, out.loss,
                   out.totals);
}

// The vectorised scan first: the count (not vectorised) only runs on a bad gradient.
void HostOps::count_nonfinite_into(const float* x, int64_t n, float* count) const {
  ops::store_count(count, wt::all_finite(x, n) ? 0.0 : double(wt::count_nonfinite(x, n)));
}

// The codecs' loops run as they are: a triple's word depends on its three values only, but raw
// mode's side list is a running index (a scan), and a broadcast encodes once per step.
int64_t HostOps::encode_weights(const WeightCodec& codec, const float* x, int64_t n,
                                uint32_t* words, float* side) const {
  return wt::encode_weights(codec, x, n, words, side);
}

int64_t HostOps::decode_weights(const WeightCodec& codec, const uint32_t* words, int64_t n,
                                const float* side, float* y) const {
  return wt::decode_weights(codec, words, n, side, y);
}

void HostOps::sgd_update(const ops::SgdUpdate& u, int64_t n, float* w, const float* g, float* b,
                         const float* skip) const {
  ops::sgd_update(u, n, w, g, b, skip);
}

void HostOps::adamw_update(const ops::AdamWUpdate& u, int64_t n, float* w, const float* g, float* m,
                           float* v, const float* skip) const {
  ops::adamw_update(u, n, w, g, m, v, skip);
}

}  // namespace wt
