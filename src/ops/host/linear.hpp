#pragma once
// A fully connected map on a [rows, in] matrix, as the linear layer and attention's projections
// use it: y[rows, out] = x[rows, in] * W[out, in]^T (+ b), and its gradients. `precision`: the
// products' inputs (ops/precision.hpp); the bias and the outputs are FP32 either way.
#include <cstdint>

#include "ops/precision.hpp"

namespace wt::ops {

// b may be null (no bias).
void linear_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t in,
                    int64_t out, float* y, Precision precision = Precision::Fp32);
// y = relu(x W^T + b): the ReLU in place on y right after the GEMM.
void linear_relu_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t in,
                         int64_t out, float* y, Precision precision = Precision::Fp32);
// dW += dy^T x; db += column sums of dy (db may be null); dx = dy W (dx may be null).
void linear_backward(const float* x, const float* w, const float* dy, int64_t rows, int64_t in,
                     int64_t out, float* dw, float* db, float* dx,
                     Precision precision = Precision::Fp32);

}  // namespace wt::ops
