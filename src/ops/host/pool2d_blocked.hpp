#pragma once
// Max pooling with channel-blocked activations (Pool2dGeometry's x_blocked and y_blocked; x and dx
// in one layout, y and dy in one; ops/host/channel_blocks.hpp). The same windows, tie rule (the
// first maximum) and ReLU mask as ops/host/pool2d.hpp's NCHW kernels, so results are bitwise
// theirs, relaid.
#include "ops/kernel_args.hpp"

namespace wt::ops {

void maxpool2d_forward_blocked(const Pool2dGeometry& g, const float* x, float* y);
// relu_mask: x is a ReLU's output and dx the gradient of the ReLU's input
// (maxpool2d_relu_backward).
void maxpool2d_backward_blocked(const Pool2dGeometry& g, const float* x, const float* dy, float* dx,
                                bool relu_mask);

}  // namespace wt::ops
