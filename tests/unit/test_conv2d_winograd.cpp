// Winograd F(2x2, 5x5) against the im2col + GEMM convolution: forward output (with bias and the
// fused ReLU), input gradient, weight and bias gradients accumulating onto non-zero gradients,
// over every padding it takes, odd and non-square sizes (tiles cut at the edges), batch 1, 16 to
// 64 channels (the products' 1 to 4 vectors), more tiles than one group, no bias, a skipped input
// gradient; and which geometries it refuses. Through HostOps: device.conv_algorithm = "auto"
// picks it, "direct" does not, and an NCHW geometry gets bitwise the blocked one's results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "conv_test_util.hpp"
#include "ops/host/channel_blocks.hpp"
#include "ops/host/conv2d.hpp"
#include "ops/host/conv2d_winograd.hpp"
#include "ops/host/host_ops.hpp"
#include "tensor/rng.hpp"

namespace wt::testing {
namespace {

struct Case {
  int64_t batch, in_channels, size_h, size_w, out_channels, padding;
  bool bias, need_dx;
};

ops::Conv2dGeometry geometry_of(const Case& c, bool blocked) {
  ops::Conv2dGeometry g;
  g.batch = c.batch;
  g.in_channels = c.in_channels;
  g.in_h = c.size_h;
  g.in_w = c.size_w;
  g.out_channels = c.out_channels;
  g.kernel = 5;
  g.padding = c.padding;
  g.x_blocked = g.y_blocked = blocked;
  return g;
}

// F(2x2, 5x5)'s transforms (entries up to 16 and down to 1/24) cost a few bits more than the
// direct sum's rounding: 1e-4 of the scale, where a wrong transform entry or tile offset is off by
// the order of the values.
void expect_close(const std::vector<float>& a, const std::vector<float>& b,
                  const std::string& what) {
  testing::expect_close(a, b, what, 1e-4f);
}

void compare_with_im2col(const Case& c) {
  const ops::Conv2dGeometry g = geometry_of(c, false), gb = geometry_of(c, true);
  const std::string name = "batch " + std::to_string(c.batch) + " C " +
                           std::to_string(c.in_channels) + " " + std::to_string(c.size_h) + "x" +
                           std::to_string(c.size_w) + " OC " + std::to_string(c.out_channels) +
                           " p " + std::to_string(c.padding);
  ASSERT_TRUE(ops::conv2d_winograd_supports(gb)) << name;
  Rng rng(c.batch * 131 + c.size_h * 7 + c.padding);
  const int64_t in_pixels = g.in_h * g.in_w;
  const ConvReference ref = conv_reference(g, rng, c.bias, c.need_dx);
  const auto &x = ref.x, &w = ref.w, &dy = ref.dy, &grad0 = ref.grad0, &bias_grad0 = ref.bias_grad0;
  const auto &y_ref = ref.y, &dx_ref = ref.dx, &dw_ref = ref.dw, &db_ref = ref.db;
  const float* bias = c.bias ? ref.b.data() : nullptr;
  std::vector<float> y_relu_ref = y_ref;
  for (float& v : y_relu_ref) v = std::max(v, 0.0f);

  const auto xb = blocked(x, g.batch, g.in_channels, in_pixels);
  const auto dyb = blocked(dy, g.batch, g.out_channels, g.out_pixels());
  std::vector<float> y(dy.size(), 7.0f), y_relu(dy.size(), 7.0f), dx(x.size(), 7.0f);
  std::vector<float> dw = grad0, db = bias_grad0;
  ops::conv2d_winograd_forward(gb, xb.data(), w.data(), bias, y.data(), false);
  ops::conv2d_winograd_forward(gb, xb.data(), w.data(), bias, y_relu.data(), true);
  ops::conv2d_winograd_backward(gb, xb.data(), w.data(), dyb.data(),
                                c.need_dx ? dx.data() : nullptr, dw.data(),
                                c.bias ? db.data() : nullptr);
  expect_close(unblocked(y, g.batch, g.out_channels, g.out_pixels()), y_ref, name + " forward");
  expect_close(unblocked(y_relu, g.batch, g.out_channels, g.out_pixels()), y_relu_ref,
               name + " forward with ReLU");
  expect_close(dw, dw_ref, name + " weight gradient");
  if (c.bias) expect_close(db, db_ref, name + " bias gradient");
  if (c.need_dx) {
    expect_close(unblocked(dx, g.batch, g.in_channels, in_pixels), dx_ref,
                 name + " input gradient");
  } else {
    EXPECT_TRUE(std::all_of(dx.begin(), dx.end(), [](float v) { return v == 7.0f; })) << name;
  }
}

TEST(Conv2dWinograd, MatchesIm2col) {
  const Case cases[] = {
      {4, 32, 14, 14, 64, 2, true, true},  // LeNet's conv2 (smaller batch)
      {1, 16, 7, 7, 16, 2, true, true},    // batch 1, odd size: tiles cut at the edges
      {3, 16, 9, 6, 48, 0, false, true},   // no padding, non-square, 3 output vectors
      {2, 48, 5, 5, 32, 4, true, true},    // the largest padding: the input gradient's is 0
      {2, 32, 8, 11, 16, 1, true, false},  // padding 1, no input gradient
      {2, 16, 6, 6, 32, 3, true, true},    // padding 3
      {9, 16, 12, 12, 64, 2, true, true},  // 324 tiles: several groups of both passes
      {3, 64, 10, 10, 80, 2, true, true},  // 80 output channels: 4 vectors, then 1
      {1, 16, 10, 10, 16, 2, true, true},  // 25 tiles: a group of 18, then 7 (a 1-row block)
      {1, 16, 2, 10, 32, 2, false, true},  // 5 tiles: a 5-row block
  };
  for (const Case& c : cases) compare_with_im2col(c);
}

// A backward in halves (model/backward_part.hpp): the input gradient alone leaves the weight
// and bias gradients untouched, and the weight half alone writes no input gradient; together
// they give the whole backward's bits.
TEST(Conv2dWinograd, BackwardInHalvesIsTheWholeBackward) {
  const ops::Conv2dGeometry g = geometry_of({2, 32, 14, 14, 64, 2, true, true}, true);
  Rng rng(11);
  const auto x = uniform(rng, g.batch * g.in_channels * g.in_h * g.in_w);
  const auto w = uniform(rng, g.out_channels * g.col_rows());
  const auto dy = uniform(rng, g.batch * g.out_channels * g.out_pixels());
  std::vector<float> dx(x.size()), dw(w.size(), 0.f), db(g.out_channels, 0.f);
  ops::conv2d_winograd_backward(g, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data());
  std::vector<float> dx_half(x.size(), 7.f), dw_half(w.size(), 0.f), db_half(g.out_channels, 0.f);
  ops::conv2d_winograd_backward(g, x.data(), w.data(), dy.data(), dx_half.data(), nullptr,
                                db_half.data());
  EXPECT_TRUE(std::all_of(db_half.begin(), db_half.end(), [](float v) { return v == 0.f; }));
  ops::conv2d_winograd_backward(g, x.data(), w.data(), dy.data(), nullptr, dw_half.data(),
                                db_half.data());
  EXPECT_EQ(dx_half, dx);
  EXPECT_EQ(dw_half, dw);
  EXPECT_EQ(db_half, db);
}

TEST(Conv2dWinograd, RefusesWhatItDoesNotImplement) {
  const ops::Conv2dGeometry lenet = geometry_of({4, 32, 14, 14, 64, 2, true, true}, true);
  EXPECT_TRUE(ops::conv2d_winograd_supports(lenet));
  ops::Conv2dGeometry g = lenet;
  g.kernel = 3;
  EXPECT_FALSE(ops::conv2d_winograd_supports(g)) << "3x3 kernel";
  g = lenet;
  g.stride = 2;
  EXPECT_FALSE(ops::conv2d_winograd_supports(g)) << "stride 2";
  g = lenet;
  g.padding = 5;
  EXPECT_FALSE(ops::conv2d_winograd_supports(g)) << "padding beyond the kernel";
  g = lenet;
  g.in_channels = 1;
  EXPECT_FALSE(ops::conv2d_winograd_supports(g)) << "one input channel (LeNet's conv1)";
  g = lenet;
  g.x_blocked = false;
  EXPECT_FALSE(ops::conv2d_winograd_supports(g)) << "NCHW input";
  g = lenet;
  g.in_h = g.in_w = 0;
  g.padding = 1;
  EXPECT_FALSE(ops::conv2d_winograd_supports(g)) << "no outputs";
  EXPECT_THROW(ops::conv2d_winograd_forward(g, nullptr, nullptr, nullptr, nullptr, false),
               std::invalid_argument);
}

// HostOps under "auto" runs Winograd (its results differ from "direct"'s in the last bits) on
// both layouts, relaying NCHW so both give the same bits: model.fuse_epilogues on and off then
// train bitwise the same model.
TEST(Conv2dWinograd, HostOpsPicksItUnderAutoInEitherLayout) {
  if (!winograd_pays_in_this_build()) GTEST_SKIP() << host_conv_description();
  const Case c{3, 32, 14, 14, 64, 2, true, true};
  const ops::Conv2dGeometry g = geometry_of(c, false), gb = geometry_of(c, true);
  Rng rng(5);
  const int64_t in_pixels = g.in_h * g.in_w, out_pixels = g.out_pixels();
  const auto x = uniform(rng, g.batch * g.in_channels * in_pixels);
  const auto w = uniform(rng, g.out_channels * g.col_rows());
  const auto b = uniform(rng, g.out_channels);
  const auto dy = uniform(rng, g.batch * g.out_channels * out_pixels);
  const HostOps autos(Precision::Fp32, ConvAlgorithm::Auto);
  const HostOps direct(Precision::Fp32, ConvAlgorithm::Direct);
  std::vector<float> workspace(std::max(direct.conv2d_scratch_floats(g, true), int64_t{1}));
  Scratch scratch;
  scratch.reserved = workspace.data();
  struct Result {
    std::vector<float> y, dx, dw, db;
  };
  auto run = [&](const HostOps& ops, bool blocked_layout) {
    const ops::Conv2dGeometry& geo = blocked_layout ? gb : g;
    const auto xi = blocked_layout ? blocked(x, g.batch, g.in_channels, in_pixels) : x;
    const auto dyi = blocked_layout ? blocked(dy, g.batch, g.out_channels, out_pixels) : dy;
    Result r{std::vector<float>(dy.size()), std::vector<float>(x.size()),
             std::vector<float>(w.size(), 0.f), std::vector<float>(b.size(), 0.f)};
    ops.conv2d_relu_forward(geo, xi.data(), w.data(), b.data(), r.y.data(), scratch);
    ops.conv2d_backward(geo, xi.data(), w.data(), dyi.data(), r.dx.data(), r.dw.data(), r.db.data(),
                        scratch);
    if (blocked_layout) {
      r.y = unblocked(r.y, g.batch, g.out_channels, out_pixels);
      r.dx = unblocked(r.dx, g.batch, g.in_channels, in_pixels);
    }
    return r;
  };
  const Result nchw = run(autos, false), blocked_auto = run(autos, true), ref = run(direct, false);
  EXPECT_EQ(nchw.y, blocked_auto.y);
  EXPECT_EQ(nchw.dx, blocked_auto.dx);
  EXPECT_EQ(nchw.dw, blocked_auto.dw);
  EXPECT_EQ(nchw.db, blocked_auto.db);
  EXPECT_NE(nchw.dw, ref.dw) << "auto ran the direct convolution";
  expect_close(nchw.y, ref.y, "auto against direct, forward");
  expect_close(nchw.dx, ref.dx, "auto against direct, input gradient");
  expect_close(nchw.dw, ref.dw, "auto against direct, weight gradient");
}

}  // namespace
}  // namespace wt::testing
