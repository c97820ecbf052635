#pragma once
// Max, average and global-average pooling on NCHW float tensors (PyTorch semantics: floor-mode
// output size, max pooling pads with -inf, average pooling counts padded cells in the divisor).
#include <cstdint>

#include "ops/kernel_args.hpp"

namespace wt::ops {

void maxpool2d_forward(const Pool2dGeometry& g, const float* x, float* y);
// Overwrites dx: each dy goes to the first maximal input of its window (recomputed from x, so the
// forward pass keeps no index tensor).
void maxpool2d_backward(const Pool2dGeometry& g, const float* x, const float* dy, float* dx);
// maxpool2d_backward with the mask of the ReLU whose output x is (OpsBackend's
// maxpool2d_relu_backward).
void maxpool2d_relu_backward(const Pool2dGeometry& g, const float* x, const float* dy, float* dx);

void avgpool2d_forward(const Pool2dGeometry& g, const float* x, float* y);
void avgpool2d_backward(const Pool2dGeometry& g, const float* dy, float* dx);

// x[N, C, HW] -> y[N, C] mean over HW, and its adjoint (overwrites dx).
void global_avgpool_forward(int64_t batch, int64_t channels, int64_t pixels, const float* x,
                            float* y);
void global_avgpool_backward(int64_t batch, int64_t channels, int64_t pixels, const float* dy,
                             float* dx);

}  // namespace wt::ops
