// conv2d: finite-difference gradients over strides, padding and chunk tails; forward values
// against a direct convolution loop; the chunked and per-sample paths agree; im2col/col2im are
// adjoint; a null input gradient skips that work but leaves the weight gradient unchanged.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "ops/host/conv2d.hpp"
#include "util/input_error.hpp"

namespace wt::testing {
namespace {

TEST(LayerConv2d, GradientsBasic) {
  check_layer_gradients("type = \"conv2d\"\nout_channels = 3\nkernel = 3", {{2, 5, 5}}, 2);
}

TEST(LayerConv2d, GradientsStridePadding) {
  check_layer_gradients("type = \"conv2d\"\nout_channels = 4\nkernel = 3\nstride = 2\npadding = 1",
                        {{3, 7, 6}}, 3);
}

TEST(LayerConv2d, GradientsPartialLastChunkNoBias) {
  // Batch 5 is not a multiple of the default chunk, so the tail chunk path runs too.
  check_layer_gradients("type = \"conv2d\"\nout_channels = 2\nkernel = 2\nbias = false",
                        {{1, 4, 4}}, 5);
}

TEST(LayerConv2d, GradientsLargePadding) {
  check_layer_gradients("type = \"conv2d\"\nout_channels = 2\nkernel = 5\npadding = 2", {{2, 3, 4}},
                        2);
}

// y[n, o, i, j] = b[o] + sum_{c, u, v} w[o, c, u, v] * x[n, c, i*s - p + u, j*s - p + v]
std::vector<float> direct_conv(const ops::Conv2dGeometry& g, const float* x, const float* w,
                               const float* b) {
  const int64_t Ho = g.out_h(), Wo = g.out_w(), k = g.kernel;
  std::vector<float> y(g.batch * g.out_channels * Ho * Wo);
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t o = 0; o < g.out_channels; ++o)
      for (int64_t i = 0; i < Ho; ++i)
        for (int64_t j = 0; j < Wo; ++j) {
          double acc = b ? b[o] : 0.0;
          for (int64_t c = 0; c < g.in_channels; ++c)
            for (int64_t u = 0; u < k; ++u)
              for (int64_t v = 0; v < k; ++v) {
                const int64_t h = i * g.stride - g.padding + u, ww = j * g.stride - g.padding + v;
                if (h < 0 || h >= g.in_h || ww < 0 || ww >= g.in_w) continue;
                acc += double(w[((o * g.in_channels + c) * k + u) * k + v]) *
                       x[((n * g.in_channels + c) * g.in_h + h) * g.in_w + ww];
              }
          y[((n * g.out_channels + o) * Ho + i) * Wo + j] = float(acc);
        }
  return y;
}

ops::Conv2dGeometry test_geometry() {
  ops::Conv2dGeometry g;
  g.batch = 5;
  g.in_channels = 3;
  g.in_h = 9;
  g.in_w = 8;
  g.out_channels = 4;
  g.kernel = 3;
  g.stride = 2;
  g.padding = 1;
  return g;
}

TEST(LayerConv2d, ForwardMatchesDirectConvolutionForEveryChunk) {
  const ops::Conv2dGeometry g = test_geometry();
  Rng rng(11);
  std::vector<float> x(g.batch * g.in_channels * g.in_h * g.in_w), w(g.out_channels * g.col_rows()),
      b(g.out_channels);
  for (float& v : x) v = rng.uniform(-1, 1);
  for (float& v : w) v = rng.uniform(-1, 1);
  for (float& v : b) v = rng.uniform(-1, 1);
  const std::vector<float> ref = direct_conv(g, x.data(), w.data(), b.data());
  for (int64_t chunk : {1, 2, 3, 5}) {
    std::vector<float> y(ref.size()), ws(ops::conv2d_workspace_floats(g, chunk));
    ops::conv2d_forward(g, x.data(), w.data(), b.data(), y.data(), ws.data(), chunk);
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], ref[i], 1e-4) << "chunk " << chunk << " at " << i;
  }
}

TEST(LayerConv2d, BackwardAgreesAcrossChunksAndWithoutInputGradient) {
  const ops::Conv2dGeometry g = test_geometry();
  Rng rng(12);
  std::vector<float> x(g.batch * g.in_channels * g.in_h * g.in_w), w(g.out_channels * g.col_rows()),
      dy(g.batch * g.out_channels * g.out_pixels());
  for (float& v : x) v = rng.uniform(-1, 1);
  for (float& v : w) v = rng.uniform(-1, 1);
  for (float& v : dy) v = rng.uniform(-1, 1);
  std::vector<float> dx1(x.size()), dw1(w.size(), 0.5f), db1(g.out_channels, 0.25f);
  std::vector<float> ws1(ops::conv2d_workspace_floats(g, 1));
  ops::conv2d_backward(g, x.data(), w.data(), dy.data(), dx1.data(), dw1.data(), db1.data(),
                       ws1.data(), 1);
  for (int64_t chunk : {2, 4}) {
    std::vector<float> dx(x.size()), dw(w.size(), 0.5f), db(g.out_channels, 0.25f);
    std::vector<float> ws(ops::conv2d_workspace_floats(g, chunk));
    ops::conv2d_backward(g, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(),
                         ws.data(), chunk);
    for (size_t i = 0; i < dx.size(); ++i) ASSERT_NEAR(dx[i], dx1[i], 1e-4) << "dx chunk " << chunk;
    for (size_t i = 0; i < dw.size(); ++i) ASSERT_NEAR(dw[i], dw1[i], 1e-4) << "dw chunk " << chunk;
    for (size_t i = 0; i < db.size(); ++i) ASSERT_NEAR(db[i], db1[i], 1e-4) << "db chunk " << chunk;
    // Skipping the input gradient (the model's first layer) must not change the weight gradient.
    std::vector<float> dw_only(w.size(), 0.5f);
    ops::conv2d_backward(g, x.data(), w.data(), dy.data(), nullptr, dw_only.data(), nullptr,
                         ws.data(), chunk);
    for (size_t i = 0; i < dw.size(); ++i) ASSERT_NEAR(dw_only[i], dw1[i], 1e-4);
  }
}

TEST(LayerConv2d, Col2imIsTheAdjointOfIm2col) {
  ops::Conv2dGeometry g = test_geometry();
  g.batch = 1;
  const int64_t cols = g.out_pixels(), rows = g.col_rows();
  Rng rng(13);
  std::vector<float> x(g.in_channels * g.in_h * g.in_w), c(rows * cols), col(rows * cols),
      back(x.size(), 7.0f), scratch(ops::im2col_scratch_floats(g));
  for (float& v : x) v = rng.uniform(-1, 1);
  for (float& v : c) v = rng.uniform(-1, 1);
  ops::im2col(g, x.data(), col.data(), cols, scratch.data());
  ops::col2im(g, c.data(), cols, back.data(), scratch.data());  // overwrites the 7s
  double lhs = 0, rhs = 0;                                      // <im2col(x), c> == <x, col2im(c)>
  for (size_t i = 0; i < c.size(); ++i) lhs += double(col[i]) * c[i];
  for (size_t i = 0; i < x.size(); ++i) rhs += double(x[i]) * back[i];
  EXPECT_NEAR(lhs, rhs, 1e-4);
}

TEST(LayerConv2d, ShapesAndValidation) {
  StandaloneLayer s =
      make_layer("type = \"conv2d\"\nout_channels = 32\nkernel = 5\npadding = 2", {{1, 28, 28}});
  EXPECT_EQ(s.out_shape, (Shape{32, 28, 28}));
  EXPECT_EQ(s.params[0].value.shape(), (Shape{32, 1, 5, 5}));
  EXPECT_EQ(s.params[1].value.shape(), (Shape{32}));
  EXPECT_DOUBLE_EQ(s.layer->flops_per_sample(), 3.0 * 2.0 * 32 * 784 * 25);
  EXPECT_THROW(make_layer("type = \"conv2d\"\nout_channels = 2\nkernel = 7", {{1, 5, 5}}),
               std::invalid_argument);
  EXPECT_THROW(make_layer("type = \"conv2d\"\nout_channels = 2\nkernel = 3", {{25}}),
               std::invalid_argument);
  EXPECT_THROW(make_layer("type = \"conv2d\"\nkernel = 3", {{1, 5, 5}}), InputError);
  EXPECT_THROW(
      make_layer("type = \"conv2d\"\nout_channels = 2\nkernel = 3\nstride = 0", {{1, 5, 5}}),
      InputError);
  EXPECT_THROW(
      make_layer("type = \"conv2d\"\nout_channels = 2\nkernel = 3\npadding = -1", {{1, 5, 5}}),
      InputError);
}

}  // namespace
}  // namespace wt::testing
