#pragma once
// 2-D convolution on NCHW float tensors by im2col + GEMM. Samples are processed in chunks: a chunk
// of S samples is unfolded side by side into one column matrix [C*k*k, S*Ho*Wo], so each GEMM is
// S times wider than a per-sample one while the workspace stays bounded (no whole-batch im2col).
#include <cstdint>

#include "ops/kernel_args.hpp"

namespace wt::ops {

// Samples per im2col chunk; 0 picks the default measured in bench/lenet_layers.cpp.
int64_t conv2d_chunk(const Conv2dGeometry& g, int64_t requested = 0);
// Floats of scratch that conv2d_forward/backward need for a given chunk.
int64_t conv2d_workspace_floats(const Conv2dGeometry& g, int64_t chunk);

// Floats of scratch im2col/col2im need (a zero-bordered copy of one sample; 0 if unpadded).
int64_t im2col_scratch_floats(const Conv2dGeometry& g);
// Unfolds one sample x[C, H, W] into col rows (c, ki, kj), columns (oh, ow), row stride ld_col.
void im2col(const Conv2dGeometry& g, const float* x, float* col, int64_t ld_col, float* scratch);
// The adjoint of im2col: overwrites dx[C, H, W] with the sum of col's entries that came from each
// input cell.
void col2im(const Conv2dGeometry& g, const float* col, int64_t ld_col, float* dx, float* scratch);

// y[N, OC, Ho, Wo] = conv(x[N, C, H, W], w[OC, C, k, k]) + bias[OC] (bias may be null).
void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias,
                    float* y, float* workspace, int64_t chunk);

// Given dy, accumulates dw += dL/dw and dbias += dL/dbias (dbias may be null) and, when dx is not
// null, overwrites dx with dL/dx. x is the forward input (im2col is recomputed, not saved). dw
// null: dx alone, dbias untouched (a backward in halves, model/backward_part.hpp).
void conv2d_backward(const Conv2dGeometry& g, const float* x, const float* w, const float* dy,
                     float* dx, float* dw, float* dbias, float* workspace, int64_t chunk);

}  // namespace wt::ops
