// The fused-epilogue ops (OpsBackend's linear_relu_forward, conv2d_relu_forward,
// relu_backward_column_sums, maxpool2d_relu_backward) against the unfused sequences they replace,
// bit for bit, on the host and the strict device: the graph pass's promise of the same losses.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "bitwise_tensors.hpp"
#include "device/device_context.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

class FusedEpilogueOps : public ::testing::TestWithParam<DeviceKind> {
 protected:
  FusedEpilogueOps() : device_(0, GetParam(), 11) {}

  const OpsBackend& ops() { return device_.ops(); }
  Scratch scratch() { return Scratch{&device_.allocator(), 0}; }
  // Uniform in [lo, hi), with every 7th value exactly 0 (ReLU's edge) when `zeros`.
  Tensor random(int64_t n, float lo = -1.0f, float hi = 1.0f, bool zeros = true) {
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = zeros && i % 7 == 0 ? 0.0f : rng_.uniform(lo, hi);
    Tensor t = Tensor::empty({n}, device_.allocator());
    t.copy_from_host(v.data());
    return t;
  }
  Tensor filled(int64_t n, float value) {
    return testing::filled_tensor(device_.allocator(), n, value);
  }
  Tensor copy(const Tensor& from) {
    Tensor t = Tensor::empty(from.shape(), device_.allocator());
    t.copy_from(from);
    return t;
  }
  void check_conv(const ops::Conv2dGeometry& g, const char* what);
  void check_pool(const ops::Pool2dGeometry& g, const char* what);

  DeviceContext device_;
  Rng rng_{2026};
};

TEST_P(FusedEpilogueOps, LinearReluForwardIsLinearThenRelu) {
  const int64_t rows = 37, in = 50, out = 24;
  Tensor x = random(rows * in), w = random(out * in), b = random(out);
  Tensor fused = filled(rows * out, -1), unfused = filled(rows * out, -1);
  ops().linear_relu_forward(x.device_ptr(), w.device_ptr(), b.device_ptr(), rows, in, out,
                            fused.device_ptr());
  ops().linear_forward(x.device_ptr(), w.device_ptr(), b.device_ptr(), rows, in, out,
                       unfused.device_ptr());
  ops().relu_forward(unfused.device_ptr(), unfused.device_ptr(), rows * out);
  testing::expect_bitwise_equal(fused, unfused, "linear_relu_forward");
  const std::vector<float> y = fused.to_host();
  EXPECT_GT(std::count(y.begin(), y.end(), 0.0f), 0);  // the ReLU did clip something
}

void FusedEpilogueOps::check_conv(const ops::Conv2dGeometry& g, const char* what) {
  const int64_t ys = g.batch * g.out_channels * g.out_pixels();
  Tensor x = random(g.batch * g.in_channels * g.in_h * g.in_w);
  Tensor w = random(g.out_channels * g.col_rows()), b = random(g.out_channels);
  Tensor fused = filled(ys, -1), unfused = filled(ys, -1);
  ops().conv2d_relu_forward(g, x.device_ptr(), w.device_ptr(), b.device_ptr(), fused.device_ptr(),
                            scratch());
  ops().conv2d_forward(g, x.device_ptr(), w.device_ptr(), b.device_ptr(), unfused.device_ptr(),
                       scratch());
  ops().relu_forward(unfused.device_ptr(), unfused.device_ptr(), ys);
  testing::expect_bitwise_equal(fused, unfused, what);
}

TEST_P(FusedEpilogueOps, Conv2dReluForwardIsConvThenRelu) {
  // LeNet's conv1 and conv2 shapes (oneDNN's post-op where built with it), and a stride that
  // drops the last input row, which oneDNN declines (im2col, then the ReLU in place).
  check_conv({4, 1, 28, 28, 32, 5, 1, 2}, "conv2d_relu_forward (lenet conv1)");
  check_conv({4, 32, 14, 14, 64, 5, 1, 2}, "conv2d_relu_forward (lenet conv2)");
  check_conv({2, 3, 8, 8, 4, 3, 2, 0}, "conv2d_relu_forward (3x3/2, last row dropped)");
}

TEST_P(FusedEpilogueOps, ReluBackwardColumnSumsIsReluBackwardThenColumnSums) {
  const int64_t rows = 300, width = 70;
  Tensor y = random(rows * width, -1.0f, 1.0f), dy = random(rows * width, -1.0f, 1.0f, false);
  Tensor sums = random(width), unfused_sums = copy(sums);
  Tensor fused = filled(rows * width, -1), unfused = filled(rows * width, -1);
  ops().relu_backward_column_sums(y.device_ptr(), dy.device_ptr(), rows, width, fused.device_ptr(),
                                  sums.device_ptr());
  ops().relu_backward(y.device_ptr(), dy.device_ptr(), unfused.device_ptr(), rows * width);
  ops().add_column_sums(unfused.device_ptr(), rows, width, unfused_sums.device_ptr());
  testing::expect_bitwise_equal(fused, unfused, "relu_backward_column_sums dx");
  testing::expect_bitwise_equal(sums, unfused_sums, "relu_backward_column_sums sums");
}

void FusedEpilogueOps::check_pool(const ops::Pool2dGeometry& g, const char* what) {
  const int64_t xs = g.batch * g.channels * g.in_h * g.in_w;
  // A ReLU's output: a third of it zero, and ties between zeros the first cell wins.
  Tensor x = random(xs, -0.5f, 1.0f);
  ops().relu_forward(x.device_ptr(), x.device_ptr(), xs);
  Tensor dy = random(g.batch * g.channels * g.out_h() * g.out_w(), -1.0f, 1.0f, false);
  Tensor fused = filled(xs, -1), unfused = filled(xs, -1);
  ops().maxpool2d_relu_backward(g, x.device_ptr(), dy.device_ptr(), fused.device_ptr());
  ops().maxpool2d_backward(g, x.device_ptr(), dy.device_ptr(), unfused.device_ptr());
  ops().relu_backward(x.device_ptr(), unfused.device_ptr(), unfused.device_ptr(), xs);
  testing::expect_bitwise_equal(fused, unfused, what);
}

TEST_P(FusedEpilogueOps, MaxPoolReluBackwardIsMaxPoolBackwardThenReluBackward) {
  check_pool({4, 3, 13, 11, 2, 2, 0}, "maxpool2d_relu_backward (2x2/2, odd sizes)");
  check_pool({2, 5, 9, 10, 3, 2, 1}, "maxpool2d_relu_backward (3x3/2, padded)");
}

INSTANTIATE_TEST_SUITE_P(Devices, FusedEpilogueOps,
                         ::testing::Values(DeviceKind::Host, DeviceKind::Strict),
                         [](const ::testing::TestParamInfo<DeviceKind>& info) {
                           return info.param == DeviceKind::Host ? "Host" : "Strict";
                         });

}  // namespace
}  // namespace wt
