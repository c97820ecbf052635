#include "ops/host/linear.hpp"

#include "ops/host/elementwise.hpp"
#include "ops/host/gemm.hpp"
#include "ops/host/rows.hpp"

namespace wt::ops {

void linear_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t in,
                    int64_t out, float* y, Precision precision) {
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
