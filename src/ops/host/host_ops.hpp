#pragma once
// The host backend of the ops interface: oneDNN and a BLAS for convolution and GEMM, Kokkos
// kernels over the host execution space for the rest (the free functions of this folder). The
// host and strict devices both run it.
#include "ops/conv_algorithm.hpp"
#include "ops/ops_backend.hpp"
#include "ops/precision.hpp"

namespace wt {

class HostOps : public OpsBackend {
 public:
  // precision: the inputs of GEMM and convolution (train.precision); every other kernel is FP32.
  // conv_algorithm: whether 5x5 convolutions may run as Winograd (device.conv_algorithm).
  explicit HostOps(Precision precision = Precision::Fp32,
                   ConvAlgorithm conv_algorithm = ConvAlgorithm::Auto);
  Precision precision() const { return precision_; }
  const char* name() const override { return "host"; }
  // Where oneDNN runs the convolutions: they compute in the channel-blocked layout.
  bool takes_blocked_activations() const override;
  void relu_forward(const float* x, float* y, int64_t n) const override;
  void relu_backward(const float* y, const float* dy, float* dx, int64_t n) const override;
  void gelu_forward(const float* x, float* y, int64_t n) const override;
  void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) const override;
  void sum_arrays(const float* const* xs, int count, float* y, int64_t n) const override;
  void scale(const float* x, float s, float* y, int64_t n) const override;
  void accumulate(const float* x, float* y, int64_t n) const override;
  void scale_in_place(float s, float* y, int64_t n) const override;
  void multiply(const float* a, const float* b, float* y, int64_t n) const override;
  void fill(float value, float* y, int64_t n) const override;
  void copy(const float* x, float* y, int64_t n) const override;
  void scale_by(const float* x, const float* s, float factor, float* y, int64_t n) const override;
  void dequantize_u8(const uint8_t* x, int64_t n, int64_t row, int64_t group, const float* table,
                     float* y) const override;
  void dropout_masks(const ops::DropoutMasks& d, float* mask) const override;
  void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
            int64_t ldc) const override;
  void linear_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t in,
                      int64_t out, float* y) const override;
  void linear_backward(const float* x, const float* w, const float* dy, int64_t rows, int64_t in,
                       int64_t out, float* dw, float* db, float* dx) const override;
  void add_row(const float* x, const float* row, int64_t rows, int64_t width,
               float* y) const override;
  void add_column_sums(const float* x, int64_t rows, int64_t width, float* sums) const override;
  void gather_rows(const float* table, const int64_t* ids, int64_t rows, int64_t width,
                   float* y) const override;
  void token_ids(const float* x, int64_t n, int64_t vocab, int64_t* ids,
                 float* check) const override;
  void scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                        float* table, int64_t table_rows) const override;
  void conv2d_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                      const float* bias, float* y, const Scratch& scratch) const override;
  void conv2d_backward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                       const float* dy, float* dx, float* dw, float* dbias,
                       const Scratch& scratch) const override;
  int64_t conv2d_scratch_floats(const ops::Conv2dGeometry& g, bool bias) const override;
  void linear_relu_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t in,
                           int64_t out, float* y) const override;
  void conv2d_relu_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                           const float* bias, float* y, const Scratch& scratch) const override;
  void relu_backward_column_sums(const float* y, const float* dy, int64_t rows, int64_t width,
                                 float* dx, float* sums) const override;
  void maxpool2d_relu_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                               float* dx) const override;
  void maxpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const override;
  void maxpool2d_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                          float* dx) const override;
  void avgpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const override;
  void avgpool2d_backward(const ops::Pool2dGeometry& g, const float* dy, float* dx) const override;
  void global_avgpool_forward(int64_t batch, int64_t channels, int64_t pixels, const float* x,
                              float* y) const override;
  void global_avgpool_backward(int64_t batch, int64_t channels, int64_t pixels, const float* dy,
                               float* dx) const override;
  void batchnorm_forward_train(const float* x, const ops::BatchNormShape& s, const float* gamma,
                               const float* beta, float eps, float momentum, float* running_mean,
                               float* running_var, float* mean, float* invstd,
                               float* y) const override;
  void batchnorm_forward_eval(const float* x, const ops::BatchNormShape& s, const float* gamma,
                              const float* beta, const float* running_mean,
                              const float* running_var, float eps, float* mean, float* invstd,
                              float* y) const override;
  void batchnorm_backward(const float* x, const float* dy, const ops::BatchNormShape& s,
                          const float* gamma, const float* mean, const float* invstd,
                          bool batch_stats, float* dx, float* dgamma, float* dbeta) const override;
  void layer_norm_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t dim,
                          double eps, float* y, float* stats) const override;
  void layer_norm_backward(const float* x, const float* dy, const float* w, const float* stats,
                           int64_t rows, int64_t dim, float* dw, float* db,
                           float* dx) const override;
  void causal_softmax(float* p, int64_t T, int64_t count) const override;
  void causal_softmax_backward(const float* p, float* g, int64_t T, int64_t count) const override;
  void softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n, int64_t k,
                            float* grad, const ops::XentOutputs& out) const override;
  void count_nonfinite_into(const float* x, int64_t n, float* count) const override;
  int64_t encode_weights(const WeightCodec& codec, const float* x, int64_t n, uint32_t* words,
                         float* side) const override;
  int64_t decode_weights(const WeightCodec& codec, const uint32_t* words, int64_t n,
                         const float* side, float* y) const override;
  void sgd_update(const ops::SgdUpdate& u, int64_t n, float* w, const float* g, float* b,
                  const float* skip) const override;
  void adamw_update(const ops::AdamWUpdate& u, int64_t n, float* w, const float* g, float* m,
                    float* v, const float* skip) const override;

 private:
  bool conv_by_dnnl(const ops::Conv2dGeometry& g, bool bias) const;  // else im2col
  bool conv_by_winograd(const ops::Conv2dGeometry& g) const;         // before oneDNN
  Precision precision_;
  ConvAlgorithm conv_algorithm_;
};

}  // namespace wt
