#include "ops/host/linear.hpp"

#include <vector>

#include "ops/host/elementwise.hpp"
#include "ops/host/gemm.hpp"
#include "ops/host/rows.hpp"

namespace wt::ops {
namespace {

// dnnl_sgemm packs the transposed operand of X * W^T, the weight, on every call; when the weight
// outgrows the core's L2 and the batch is small, packing it costs as much as the product (LeNet's
// fc1, 3136 x 256 = 3.2 MB at 32 rows: 98 GFLOP/s). Computed as (W * X^T)^T, the weight streams
// unpacked and only the batch is packed: 180 GFLOP/s there; at mlp's and the transformer's shapes
// both ways run alike (bench/results/host-kernels.md).
bool streams_the_weight(int64_t rows, int64_t in, int64_t out, Precision precision) {
  constexpr int64_t kL2Bytes = 1 << 20;
  return precision == Precision::Fp32 && rows >= 16 && rows < out &&
         in * out * int64_t(sizeof(float)) > kL2Bytes;
}

// y = x W^T (+ b) as y^T = W x^T (+ b per row), then transposed into y. The bias goes in as the
// GEMM's beta = 1 onto a bias-filled output, as in the other formulation: added after the GEMM
// instead, burst's row splits (some take one formulation, some the other) no longer trained
// bitwise as gang (e2e.burst_lenet).
void linear_forward_streaming_weight(const float* x, const float* w, const float* b, int64_t rows,
                                     int64_t in, int64_t out, float* y) {
  thread_local std::vector<float> transposed;
  transposed.resize(size_t(rows * out));
  float* yt = transposed.data();
  if (b)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t r = 0; r < rows; ++r) yt[o * rows + r] = b[o];
  gemm(false, true, out, rows, in, 1.0f, w, in, x, in, b ? 1.0f : 0.0f, yt, rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) y[r * out + o] = yt[o * rows + r];
}

}  // namespace

void linear_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t in,
                    int64_t out, float* y, Precision precision) {
  if (streams_the_weight(rows, in, out, precision))
    return linear_forward_streaming_weight(x, w, b, rows, in, out, y);
  if (b) broadcast_rows(b, rows, out, y);
  gemm(precision, false, true, rows, out, in, 1.0f, x, w, b ? 1.0f : 0.0f, y);
}

void linear_relu_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t in,
                         int64_t out, float* y, Precision precision) {
  // The ReLU runs in place on the GEMM's output while it is still in cache (a batch of 64 x 256
  // floats is 64 KiB), with no tensor of its own and no pass of its own from memory.
  linear_forward(x, w, b, rows, in, out, y, precision);
  relu_forward(y, y, rows * out);
}

void linear_backward(const float* x, const float* w, const float* dy, int64_t rows, int64_t in,
                     int64_t out, float* dw, float* db, float* dx, Precision precision) {
  gemm(precision, true, false, out, in, rows, 1.0f, dy, x, 1.0f, dw);
  if (db) add_column_sums(dy, rows, out, db);
  if (dx) gemm(precision, false, false, rows, in, out, 1.0f, dy, w, 0.0f, dx);
}

}  // namespace wt::ops
