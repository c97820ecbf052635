#pragma once
// The ops interface: every kernel that layers, the executor, the optimizers and the non-finite
// guard run, as one object per device (DeviceContext::ops()). Pointers are device memory of the
// caller's device; a backend (host/ today; cuda/ next) implements each with its own libraries.
// Parameter initialisation is not here: it draws from the host's Rng so that every device starts
// from bitwise the same weights (ops/host/elementwise.hpp's fills), then stages them in.
#include <cstdint>

#include "compress/weight_codec.hpp"
#include "mem/caching_allocator.hpp"
#include "ops/kernel_args.hpp"
#include "tensor/rng.hpp"
#include "tensor/tensor.hpp"

namespace wt {

// Where a kernel gets temporary device memory: the caller's allocator and stream, or memory the
// issuing host code reserved for it (a kernel that runs later must not allocate: the strict
// device reserves its workspace when it is issued, as a CUDA host does for cuDNN).
struct Scratch {
  CachingAllocator* memory = nullptr;
  int stream = 0;
  float* reserved = nullptr;  // at least the kernel's *_scratch_floats()
  Tensor floats(int64_t n) const { return Tensor::empty({n}, *memory, stream); }
};

class OpsBackend {
 public:
  virtual ~OpsBackend() = default;
  virtual const char* name() const = 0;

  // Elementwise (n elements).
  virtual void relu_forward(const float* x, float* y, int64_t n) const = 0;
  virtual void relu_backward(const float* y, const float* dy, float* dx, int64_t n) const = 0;
  virtual void gelu_forward(const float* x, float* y, int64_t n) const = 0;
  virtual void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) const = 0;
  virtual void sum_arrays(const float* const* xs, int count, float* y, int64_t n) const = 0;
  virtual void scale(const float* x, float s, float* y, int64_t n) const = 0;
  virtual void accumulate(const float* x, float* y, int64_t n) const = 0;  // y += x
  virtual void scale_in_place(float s, float* y, int64_t n) const = 0;
  virtual void multiply(const float* a, const float* b, float* y, int64_t n) const = 0;
  virtual void fill(float value, float* y, int64_t n) const = 0;
  virtual void copy(const float* x, float* y, int64_t n) const = 0;
  // y = x * s[0] * factor, with s a device scalar (the loss gradient seed).
  virtual void scale_by(const float* x, const float* s, float factor, float* y,
                        int64_t n) const = 0;
  // Bytes to floats through a table of groups x 256 entries (kern::DequantizeU8): a batch of
  // uint8 samples of `row` elements, element e in scaling group e / group.
  virtual void dequantize_u8(const uint8_t* x, int64_t n, int64_t row, int64_t group,
                             const float* table, float* y) const = 0;
  // Inverted-dropout masks of d.rows samples: 0 with probability p, else 1 / (1 - p); counter
  // based, each entry a function of (the sample's seed, its index) alone (ops::DropoutMasks).
  virtual void dropout_masks(const ops::DropoutMasks& d, float* mask) const = 0;

  // Matrices, row-major: C = alpha op(A) op(B) + beta C.
  virtual void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                    int64_t ldc) const = 0;
  void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, const float* b, float beta, float* c) const {
    gemm(trans_a, trans_b, m, n, k, alpha, a, trans_a ? m : k, b, trans_b ? k : n, beta, c, n);
  }
  // `batch` such GEMMs, the i-th on a + i * stride_a, b + i * stride_b, c + i * stride_c:
  // attention's per-head products, one launch on a GPU where a loop would be thousands.
  virtual void gemm_batched(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, int64_t lda, int64_t stride_a,
                            const float* b, int64_t ldb, int64_t stride_b, float beta, float* c,
                            int64_t ldc, int64_t stride_c, int64_t batch) const {
    for (int64_t i = 0; i < batch; ++i)
      gemm(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb, beta,
           c + i * stride_c, ldc);
  }
  virtual void linear_forward(const float* x, const float* w, const float* b, int64_t rows,
                              int64_t in, int64_t out, float* y) const = 0;
  virtual void linear_backward(const float* x, const float* w, const float* dy, int64_t rows,
                               int64_t in, int64_t out, float* dw, float* db, float* dx) const = 0;

  // Rows of a [rows, width] matrix.
  virtual void add_row(const float* x, const float* row, int64_t rows, int64_t width,
                       float* y) const = 0;
  virtual void add_column_sums(const float* x, int64_t rows, int64_t width, float* sums) const = 0;
  virtual void gather_rows(const float* table, const int64_t* ids, int64_t rows, int64_t width,
                           float* y) const = 0;
  // Token ids held as floats -> table rows, checked: each an integer in [0, vocab) (a bad one
  // becomes row 0). check: device memory (ops/portable/rows.hpp's InputCheck) where the first
  // bad one is recorded for the host to read back with the step's results; nullptr: the call
  // throws std::out_of_range naming it (a GPU synchronises to know).
  virtual void token_ids(const float* x, int64_t n, int64_t vocab, int64_t* ids,
                         float* check) const = 0;
  // table[ids[r]] += x[r], rows in increasing order, into a table of table_rows x width.
  virtual void scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                                float* table, int64_t table_rows) const = 0;

  // Convolution and pooling (NCHW, or where this returns true and the geometry says so, the
  // channel-blocked layout of ops/host/channel_blocks.hpp; model/block_channels.hpp decides). The
  // convolution may take scratch memory.
  virtual bool takes_blocked_activations() const { return false; }
  virtual void conv2d_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                              const float* bias, float* y, const Scratch& scratch) const = 0;
  // dw, dbias += their gradients (dbias may be null), dx overwritten; dx null: the parameters'
  // alone; dw null: dx alone, dbias untouched but passed all the same, so that both halves of a
  // backward (model/backward_part.hpp) run the kernels the whole pass does.
  virtual void conv2d_backward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                               const float* dy, float* dx, float* dw, float* dbias,
                               const Scratch& scratch) const = 0;
  // The scratch floats a convolution takes (0: none).
  virtual int64_t conv2d_scratch_floats(const ops::Conv2dGeometry& g, bool bias) const = 0;
  virtual void maxpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const = 0;
  virtual void maxpool2d_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                                  float* dx) const = 0;
  virtual void avgpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const = 0;
  virtual void avgpool2d_backward(const ops::Pool2dGeometry& g, const float* dy,
                                  float* dx) const = 0;
  virtual void global_avgpool_forward(int64_t batch, int64_t channels, int64_t pixels,
                                      const float* x, float* y) const = 0;
  virtual void global_avgpool_backward(int64_t batch, int64_t channels, int64_t pixels,
                                       const float* dy, float* dx) const = 0;

  // Fused epilogues (model/fuse_epilogues.hpp): a ReLU folded into the passes of the layers around
  // it. Each is bitwise the unfused sequence on the same backend (relu(-x) is +0 either way).
  // y = relu(x W^T + b): linear_forward with the ReLU in its output pass.
  virtual void linear_relu_forward(const float* x, const float* w, const float* b, int64_t rows,
                                   int64_t in, int64_t out, float* y) const = 0;
  // y = relu(conv(x, w) + bias): conv2d_forward with the ReLU in its output pass (same scratch).
  virtual void conv2d_relu_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                                   const float* bias, float* y, const Scratch& scratch) const = 0;
  // relu_backward into dx (y: the ReLU's output, [rows, width]) and dx's column sums added to
  // sums (the bias gradient of the linear before it), in one pass.
  virtual void relu_backward_column_sums(const float* y, const float* dy, int64_t rows,
                                         int64_t width, float* dx, float* sums) const = 0;
  // maxpool2d_backward of a pool whose input x is a ReLU's output, with the ReLU's mask applied:
  // dx is the gradient of the ReLU's input.
  virtual void maxpool2d_relu_backward(const ops::Pool2dGeometry& g, const float* x,
                                       const float* dy, float* dx) const = 0;

  // Normalisation.
  virtual void batchnorm_forward_train(const float* x, const ops::BatchNormShape& s,
                                       const float* gamma, const float* beta, float eps,
                                       float momentum, float* running_mean, float* running_var,
                                       float* mean, float* invstd, float* y) const = 0;
  virtual void batchnorm_forward_eval(const float* x, const ops::BatchNormShape& s,
                                      const float* gamma, const float* beta,
                                      const float* running_mean, const float* running_var,
                                      float eps, float* mean, float* invstd, float* y) const = 0;
  virtual void batchnorm_backward(const float* x, const float* dy, const ops::BatchNormShape& s,
                                  const float* gamma, const float* mean, const float* invstd,
                                  bool batch_stats, float* dx, float* dgamma,
                                  float* dbeta) const = 0;
  virtual void layer_norm_forward(const float* x, const float* w, const float* b, int64_t rows,
                                  int64_t dim, double eps, float* y, float* stats) const = 0;
  virtual void layer_norm_backward(const float* x, const float* dy, const float* w,
                                   const float* stats, int64_t rows, int64_t dim, float* dw,
                                   float* db, float* dx) const = 0;

  // Attention: row-wise causal softmax of one [T, T] score matrix, in place.
  // `count` consecutive T x T matrices, row i of each masked beyond column i.
  virtual void causal_softmax(float* p, int64_t T, int64_t count) const = 0;
  virtual void causal_softmax_backward(const float* p, float* g, int64_t T,
                                       int64_t count) const = 0;

  // The loss: softmax cross-entropy of [n, k] logits and its gradient; the loss and the step's
  // totals stay in device memory (ops::XentOutputs).
  virtual void softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n,
                                    int64_t k, float* grad, const ops::XentOutputs& out) const = 0;

  // The non-finite guard: the number of NaN and Inf values of x[0, n), stored at `count` in device
  // memory (ops::store_count: kCountFloats floats), so no host synchronisation is needed; the
  // count then serves as an optimizer update's skip flag.
  virtual void count_nonfinite_into(const float* x, int64_t n, float* count) const = 0;

  // Weight codecs (compress/weight_codec.hpp): a stage owner's parameters into 32-bit words (and
  // raw mode's side list, room for n + 2 floats; returns the floats used), and back.
  virtual int64_t encode_weights(const WeightCodec& codec, const float* x, int64_t n,
                                 uint32_t* words, float* side) const = 0;
  virtual int64_t decode_weights(const WeightCodec& codec, const uint32_t* words, int64_t n,
                                 const float* side, float* y) const = 0;

  // Optimizer updates. `skip`: nullptr, or a count in device memory (ops::load_count); when it is
  // nonzero the update changes nothing (a non-finite gradient, decided on the device).
  virtual void sgd_update(const ops::SgdUpdate& u, int64_t n, float* w, const float* g, float* b,
                          const float* skip) const = 0;
  virtual void adamw_update(const ops::AdamWUpdate& u, int64_t n, float* w, const float* g,
                            float* m, float* v, const float* skip) const = 0;
};

}  // namespace wt
