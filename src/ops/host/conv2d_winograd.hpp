#pragma once
// 2-D convolution by Winograd's minimal filtering F(2x2, 5x5) (Lavin and Gray, "Fast Algorithms
// for Convolutional Neural Networks", 2016) on the host, for 5x5 stride-1 convolutions between
// channel-blocked (nChw16c) activations: LeNet's conv2. Each 2x2 block of outputs is computed from
// a 6x6 input tile with 36 products per channel pair instead of 100, as 36 GEMMs over the tiles;
// the weight gradient uses F(5x5, 2x2) on the same tiles. The transforms use the points
// 0, 1, -1, 2, -2 and infinity, those of the F(4x4, 3x3) that cuDNN and oneDNN ship: results
// differ from the direct convolution's in the last bits (bounded in
// tests/unit/test_conv2d_winograd.cpp). HostOps runs it under device.conv_algorithm = "auto".
#include "ops/kernel_args.hpp"

namespace wt::ops {

// Whether F(2x2, 5x5) implements this geometry: kernel 5, stride 1, padding at most 4, x and y
// channel-blocked (so both channel counts are multiples of 16).
bool conv2d_winograd_supports(const Conv2dGeometry& g);

// y = conv(x, w) + bias (bias may be null), with `relu` relu of that; x, y nChw16c, w OIHW.
void conv2d_winograd_forward(const Conv2dGeometry& g, const float* x, const float* w,
                             const float* bias, float* y, bool relu);

// conv2d_backward's contract: dw += dL/dw, dbias += dL/dbias (may be null), dx overwritten with
// dL/dx unless null; dw null: dx alone. x, dy and dx nChw16c.
void conv2d_winograd_backward(const Conv2dGeometry& g, const float* x, const float* w,
                              const float* dy, float* dx, float* dw, float* dbias);

}  // namespace wt::ops
