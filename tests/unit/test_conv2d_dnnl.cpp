// The oneDNN convolution path against the im2col + GEMM path: forward output, input gradient,
// weight and bias gradients (both accumulating into non-zero grads), over strides, padding, odd
// sizes, batch 1, no bias and a skipped input gradient; in both layouts oneDNN offers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "conv_test_util.hpp"
#include "gradcheck.hpp"
#include "ops/host/conv2d.hpp"
#include "ops/host/conv2d_dnnl.hpp"
#include "tensor/rng.hpp"

namespace wt::testing {
namespace {

#if defined(WT_HAVE_DNNL_CONV)

struct Case {
  int64_t batch, in_channels, in_h, in_w, out_channels, kernel, stride, padding;
  bool bias, need_dx;
};

ops::Conv2dGeometry geometry_of(const Case& c) {
  ops::Conv2dGeometry g;
  g.batch = c.batch;
  g.in_channels = c.in_channels;
  g.in_h = c.in_h;
  g.in_w = c.in_w;
  g.out_channels = c.out_channels;
  g.kernel = c.kernel;
  g.stride = c.stride;
  g.padding = c.padding;
  return g;
}

// oneDNN's sums against im2col's: both direct, in other orders.
void expect_close(const std::vector<float>& a, const std::vector<float>& b,
                  const std::string& what) {
  testing::expect_close(a, b, what, 2e-5f);
}

void compare_paths(const Case& c, ops::DnnlConvLayout layout) {
  const ops::Conv2dGeometry g = geometry_of(c);
  const std::string name = "batch " + std::to_string(c.batch) + " C " +
                           std::to_string(c.in_channels) + " " + std::to_string(c.in_h) + "x" +
                           std::to_string(c.in_w) + " OC " + std::to_string(c.out_channels) +
                           " k " + std::to_string(c.kernel) + " s " + std::to_string(c.stride) +
                           " p " + std::to_string(c.padding) +
                           (layout == ops::DnnlConvLayout::kPlain ? " nchw" : " any");
  ASSERT_TRUE(ops::conv2d_dnnl_supports(g, c.bias, layout)) << name;
  Rng rng(c.batch * 131 + c.in_h * 7 + c.stride);
  const ConvReference ref = conv_reference(g, rng, c.bias, c.need_dx);
  const auto &x = ref.x, &w = ref.w, &dy = ref.dy, &grad0 = ref.grad0, &bias_grad0 = ref.bias_grad0;
  const auto &y_ref = ref.y, &dx_ref = ref.dx, &dw_ref = ref.dw, &db_ref = ref.db;
  const float* bias = c.bias ? ref.b.data() : nullptr;

  std::vector<float> y(dy.size(), 7.0f), dx(x.size(), 7.0f), dw = grad0, db = bias_grad0;
  ops::conv2d_dnnl_forward(g, x.data(), w.data(), bias, y.data(), layout);
  ops::conv2d_dnnl_backward(g, x.data(), w.data(), dy.data(), c.need_dx ? dx.data() : nullptr,
                            dw.data(), c.bias ? db.data() : nullptr, layout);
  expect_close(y, y_ref, name + " forward");
  expect_close(dw, dw_ref, name + " weight gradient");
  if (c.bias) expect_close(db, db_ref, name + " bias gradient");
  if (c.need_dx) {
    expect_close(dx, dx_ref, name + " input gradient");
  } else {
    EXPECT_TRUE(std::all_of(dx.begin(), dx.end(), [](float v) { return v == 7.0f; })) << name;
  }
}

const Case kCases[] = {
    {4, 32, 14, 14, 64, 5, 1, 2, true, true},  // LeNet conv2 (smaller batch)
    {3, 1, 28, 28, 32, 5, 1, 2, true, false},  // LeNet conv1: no input gradient
    {1, 3, 9, 9, 5, 3, 2, 1, true, true},      // batch 1, stride 2, odd size
    {2, 5, 11, 7, 6, 3, 2, 1, false, true},    // non-square, no bias
    {5, 17, 6, 5, 19, 1, 1, 0, true, true},    // 1x1 kernel, odd channel counts
    {2, 16, 8, 8, 16, 4, 2, 1, true, true},    // even kernel, stride 2
    {3, 2, 5, 6, 3, 5, 1, 3, true, true},      // padding larger than half the kernel
};

TEST(Conv2dDnnl, MatchesIm2colInBothLayouts) {
  for (const Case& c : kCases)
    for (auto layout : {ops::DnnlConvLayout::kPlain, ops::DnnlConvLayout::kBlocked})
      compare_paths(c, layout);
}

TEST(Conv2dDnnl, PrimitivesAreReusedAcrossBatchSizes) {
  // Interleave geometries that differ only in batch: each must use its own cached primitives.
  for (int rep = 0; rep < 2; ++rep)
    for (int64_t batch : {4, 1, 3}) {
      Case c = kCases[0];
      c.batch = batch;
      compare_paths(c, ops::conv2d_dnnl_default_layout());
    }
}

TEST(Conv2dDnnl, StrideThatSkipsTheLastRowsIsLeftToIm2col) {
  // 8 rows, kernel 3, stride 2, no padding: 3 windows cover rows 0..6 only; oneDNN would need a
  // negative right padding, so the layer falls back to im2col, whose gradients must still check.
  EXPECT_FALSE(ops::conv2d_dnnl_supports(geometry_of({2, 2, 8, 8, 3, 3, 2, 0, true, true}), true));
  check_layer_gradients("type = \"conv2d\"\nout_channels = 3\nkernel = 3\nstride = 2", {{2, 8, 8}},
                        2);
}

#else

TEST(Conv2dDnnl, NotBuiltWithOneDnn) { GTEST_SKIP() << "built without oneDNN"; }

#endif

}  // namespace
}  // namespace wt::testing
