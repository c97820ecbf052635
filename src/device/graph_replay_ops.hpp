#pragma once
// The kernels of a replayed graph step (device.cuda_graphs) on a GPU: the host issues the step as
// usual, for its bookkeeping, but the device runs the captured graph instead, so each kernel call
// launches nothing. Queries that decide host bookkeeping (a convolution's scratch size) and the
// host's own input checks still run; kernels whose results the host waits for cannot be in a
// graph. The strict device models the same replay by running the captured closures
// (device/strict_graph.hpp).
#include <stdexcept>

#include "ops/host/softmax_xent.hpp"
#include "ops/ops_backend.hpp"

namespace wt {

class GraphReplayOps final : public OpsBackend {
 public:
  explicit GraphReplayOps(const OpsBackend& real) : real_(real) {}
  const char* name() const override { return "graph replay"; }

  void relu_forward(const float*, float*, int64_t) const override {}
  void relu_backward(const float*, const float*, float*, int64_t) const override {}
  void gelu_forward(const float*, float*, int64_t) const override {}
  void gelu_backward(const float*, const float*, float*, int64_t) const override {}
  void sum_arrays(const float* const*, int, float*, int64_t) const override {}
  void scale(const float*, float, float*, int64_t) const override {}
  void accumulate(const float*, float*, int64_t) const override {}
  void scale_in_place(float, float*, int64_t) const override {}
  void multiply(const float*, const float*, float*, int64_t) const override {}
  void fill(float, float*, int64_t) const override {}
  void copy(const float*, float*, int64_t) const override {}
  void scale_by(const float*, const float*, float, float*, int64_t) const override {}
  void dequantize_u8(const uint8_t*, int64_t, int64_t, int64_t, const float*,
                     float*) const override {}
  void dropout_masks(const ops::DropoutMasks&, float*) const override {}
  void gemm(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
            int64_t, float, float*, int64_t) const override {}
  void gemm_batched(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, int64_t,
                    const float*, int64_t, int64_t, float, float*, int64_t, int64_t,
                    int64_t) const override {}
  void linear_forward(const float*, const float*, const float*, int64_t, int64_t, int64_t,
                      float*) const override {}
  void linear_backward(const float*, const float*, const float*, int64_t, int64_t, int64_t, float*,
                       float*, float*) const override {}
  void add_row(const float*, const float*, int64_t, int64_t, float*) const override {}
  void add_column_sums(const float*, int64_t, int64_t, float*) const override {}
  void gather_rows(const float*, const int64_t*, int64_t, int64_t, float*) const override {}
  void token_ids(const float*, int64_t, int64_t, int64_t*, float*) const override {}
  void scatter_add_rows(const float*, const int64_t*, int64_t, int64_t, float*,
                        int64_t) const override {}
  void conv2d_forward(const ops::Conv2dGeometry&, const float*, const float*, const float*, float*,
                      const Scratch&) const override {}
  void conv2d_backward(const ops::Conv2dGeometry&, const float*, const float*, const float*, float*,
                       float*, float*, const Scratch&) const override {}
  int64_t conv2d_scratch_floats(const ops::Conv2dGeometry& g, bool bias) const override {
    return real_.conv2d_scratch_floats(g, bias);
  }
  void maxpool2d_forward(const ops::Pool2dGeometry&, const float*, float*) const override {}
  void maxpool2d_backward(const ops::Pool2dGeometry&, const float*, const float*,
                          float*) const override {}
  void avgpool2d_forward(const ops::Pool2dGeometry&, const float*, float*) const override {}
  void avgpool2d_backward(const ops::Pool2dGeometry&, const float*, float*) const override {}
  void global_avgpool_forward(int64_t, int64_t, int64_t, const float*, float*) const override {}
  void global_avgpool_backward(int64_t, int64_t, int64_t, const float*, float*) const override {}
  void linear_relu_forward(const float*, const float*, const float*, int64_t, int64_t, int64_t,
                           float*) const override {}
  void conv2d_relu_forward(const ops::Conv2dGeometry&, const float*, const float*, const float*,
                           float*, const Scratch&) const override {}
  void relu_backward_column_sums(const float*, const float*, int64_t, int64_t, float*,
                                 float*) const override {}
  void maxpool2d_relu_backward(const ops::Pool2dGeometry&, const float*, const float*,
                               float*) const override {}
  void batchnorm_forward_train(const float*, const ops::BatchNormShape&, const float*, const float*,
                               float, float, float*, float*, float*, float*,
                               float*) const override {}
  void batchnorm_forward_eval(const float*, const ops::BatchNormShape&, const float*, const float*,
                              const float*, const float*, float, float*, float*,
                              float*) const override {}
  void batchnorm_backward(const float*, const float*, const ops::BatchNormShape&, const float*,
                          const float*, const float*, bool, float*, float*, float*) const override {
  }
  void layer_norm_forward(const float*, const float*, const float*, int64_t, int64_t, double,
                          float*, float*) const override {}
  void layer_norm_backward(const float*, const float*, const float*, const float*, int64_t, int64_t,
                           float*, float*, float*) const override {}
  void causal_softmax(float*, int64_t, int64_t) const override {}
  void causal_softmax_backward(const float*, float*, int64_t, int64_t) const override {}
  void softmax_xent_forward(const float*, const int32_t* labels, int64_t n, int64_t k, float*,
                            const ops::XentOutputs&) const override {
    ops::check_labels(labels, n, k);  // the host's check, as CudaOps makes it before its copy
  }
  void count_nonfinite_into(const float*, int64_t, float*) const override {}
  int64_t encode_weights(const WeightCodec&, const float*, int64_t, uint32_t*,
                         float*) const override {
    throw std::logic_error("a graph replay cannot run encode_weights, which the host waits for");
  }
  int64_t decode_weights(const WeightCodec&, const uint32_t*, int64_t, const float*,
                         float*) const override {
    throw std::logic_error("a graph replay cannot run decode_weights, which the host waits for");
  }
  void sgd_update(const ops::SgdUpdate&, int64_t, float*, const float*, float*,
                  const float*) const override {}
  void adamw_update(const ops::AdamWUpdate&, int64_t, float*, const float*, float*, float*,
                    const float*) const override {}

 private:
  const OpsBackend& real_;  // its queries
};

}  // namespace wt
