// train.precision = "bf16" on the host: the rounding, and the bf16 GEMM and convolution (oneDNN's
// bf16 primitives, and the im2col path's rounded copies) against an FP32 reference computed in
// double on inputs rounded to bf16 first. Tolerance: FP32 accumulation of K products differs
// from the exact sum by at most about K * 2^-24 * sum|a_i b_i| (Higham's gamma_K); the tests
// allow 2 K * 2^-24 * sum|a_i b_i| + 1e-30. Not rounding the inputs errs by up to 2^-9 of
// sum|a_i b_i| per product, hundreds of times more, and each case checks the reference with
// unrounded inputs fails that same bound, so a path that skipped the rounding would fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "ops/host/bf16.hpp"
#include "ops/host/conv2d.hpp"
#include "ops/host/gemm_bf16.hpp"
#include "ops/host/host_ops.hpp"
#include "tensor/rng.hpp"

#if defined(WT_GEMM_DNNL)
#include <dnnl.hpp>
#endif

namespace wt::testing {
namespace {

std::vector<float> uniform(Rng& rng, int64_t n, float scale = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rng.uniform(-scale, scale);
  return v;
}

std::vector<float> rounded(std::vector<float> v) {
  ops::round_to_bf16(v.data(), v.data(), int64_t(v.size()));
  return v;
}

// Checks got against exact (double) within 2 K eps32 sum|products|; returns how many entries of
// `unrounded` (the exact result from FP32 inputs) that bound would reject.
int64_t expect_within(const std::vector<float>& got, const std::vector<double>& exact,
                      const std::vector<double>& abs_sum, const std::vector<double>& unrounded,
                      int64_t k, const std::string& what) {
  const double eps = std::ldexp(1.0, -24);
  int64_t rejected = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound = 2.0 * double(k) * eps * abs_sum[i] + 1e-30;
    const double error = std::abs(double(got[i]) - exact[i]);
    if (!(error <= bound)) {
      ADD_FAILURE() << what << " entry " << i << ": " << got[i] << " against " << exact[i]
                    << ", error " << error << " over the bound " << bound;
      return rejected;
    }
    if (std::abs(unrounded[i] - exact[i]) > bound) ++rejected;
  }
  return rejected;
}

TEST(Bf16Rounding, RoundsToNearestEvenAndKeepsSpecials) {
  EXPECT_EQ(ops::to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(ops::to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // a tie: to the even 1.0
  EXPECT_EQ(ops::to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // a tie: up to even
  EXPECT_EQ(ops::to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(ops::to_bf16(-2.0f), 0xc000);
  EXPECT_TRUE(std::isnan(ops::from_bf16(ops::to_bf16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(ops::from_bf16(ops::to_bf16(INFINITY))));
  // The vector path (vcvtneps2bf16 where built for it) rounds as the scalar one does.
  Rng rng(7);
  const std::vector<float> x = uniform(rng, 1000, 100.0f);
  std::vector<uint16_t> fast(x.size());
  ops::to_bf16_rows(x.data(), 10, 100, 100, fast.data());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(fast[i], ops::to_bf16(x[i])) << i;
}

// x [n, c, hw] rounded into nChw16c by oneDNN's own reorder (what conv2d_dnnl ran before
// to_bf16_nchw16c), or else element by element with to_bf16.
std::vector<uint16_t> reference_nchw16c(const std::vector<float>& x, int64_t n, int64_t c,
                                        int64_t h, int64_t w) {
  const int64_t blocks = (c + 15) / 16, hw = h * w;
  std::vector<uint16_t> y(size_t(n * blocks * 16 * hw), 0);
#if defined(WT_GEMM_DNNL)
  using dnnl::memory;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const memory::dims dims{n, c, h, w};
  memory from({dims, memory::data_type::f32, memory::format_tag::nchw}, engine,
              const_cast<float*>(x.data()));
  memory to({dims, memory::data_type::bf16, memory::format_tag::nChw16c}, engine, y.data());
  EXPECT_EQ(to.get_desc().get_size(), y.size() * sizeof(uint16_t));
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
#else
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p)
        y[size_t(((i * blocks + ch / 16) * hw + p) * 16 + ch % 16)] =
            ops::to_bf16(x[size_t((i * c + ch) * hw + p)]);
#endif
  return y;
}

TEST(Bf16Rounding, IntoTheBlockedLayoutAsOneDnnsReorderDoes) {
  struct Shape {
    int64_t n, c, h, w;
  };
  // LeNet's conv1 output and conv2 input; a channel tail (padding) and a pixel tail; odd sizes;
  // one pixel; fewer channels than a block.
  const Shape shapes[] = {{2, 32, 28, 28}, {2, 64, 14, 14}, {3, 20, 7, 7},
                          {1, 3, 5, 3},    {2, 16, 1, 1},   {1, 33, 4, 5}};
  Rng rng(11);
  for (const Shape& s : shapes) {
    std::vector<float> x = uniform(rng, s.n * s.c * s.h * s.w, 50.0f);
    // Ties both ways, signed zeros, an infinity, the largest finite float (rounds to infinity).
    const float specials[] = {1.0f + std::ldexp(1.0f, -8),
                              1.0f + 3 * std::ldexp(1.0f, -8),
                              -0.0f,
                              0.0f,
                              -INFINITY,
                              3.4028235e38f};
    for (size_t i = 0; i < std::size(specials) && i < x.size(); ++i)
      x[(i * 7919) % x.size()] = specials[i];
    const auto expected = reference_nchw16c(x, s.n, s.c, s.h, s.w);
    std::vector<uint16_t> got(expected.size(), 0xffff);  // padding must be written as zero
    ops::to_bf16_nchw16c(x.data(), s.n, s.c, s.h * s.w, got.data());
    const std::string what = std::to_string(s.n) + "x" + std::to_string(s.c) + "x" +
                             std::to_string(s.h) + "x" + std::to_string(s.w);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], expected[i]) << what << ": element " << i << " of the blocked layout";
  }
}

struct GemmCase {
  bool ta, tb;
  int64_t m, n, k, pad;  // pad: extra columns in each stored row (lda, ldb, ldc > dense)
  float alpha, beta;
};

// C = alpha op(A) op(B) + beta C in double: the products of a and b and their absolute sums.
void reference_gemm(const GemmCase& c, const std::vector<float>& a, int64_t lda,
                    const std::vector<float>& b, int64_t ldb, const std::vector<float>& c0,
                    int64_t ldc, std::vector<double>* out, std::vector<double>* abs_sum) {
  out->assign(size_t(c.m * c.n), 0.0);
  abs_sum->assign(size_t(c.m * c.n), 0.0);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double s = 0, s_abs = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double x = c.ta ? a[size_t(p * lda + i)] : a[size_t(i * lda + p)];
        const double y = c.tb ? b[size_t(j * ldb + p)] : b[size_t(p * ldb + j)];
        s += x * y;
        s_abs += std::abs(x * y);
      }
      const double prior = c0[size_t(i * ldc + j)];
      (*out)[size_t(i * c.n + j)] = c.alpha * s + c.beta * prior;
      (*abs_sum)[size_t(i * c.n + j)] = std::abs(c.alpha) * s_abs + std::abs(c.beta * prior);
    }
}

TEST(Bf16Gemm, MatchesFp32ReferenceOfRoundedInputs) {
#if !defined(WT_GEMM_DNNL)
  GTEST_SKIP() << "bf16 GEMM needs the oneDNN build";
#endif
  if (!ops::host_computes_bf16()) GTEST_SKIP() << "this CPU has no bf16 arithmetic";
  const GemmCase cases[] = {{false, false, 64, 120, 400, 0, 1.0f, 0.0f},
                            {false, true, 64, 84, 120, 0, 1.0f, 1.0f},
                            {true, false, 84, 120, 64, 3, 1.0f, 1.0f},
                            {true, true, 17, 33, 65, 5, 0.125f, 0.5f},
                            {false, true, 1, 1, 1, 0, 1.0f, 0.0f}};
  Rng rng(11);
  int64_t rejected = 0;
  for (const GemmCase& c : cases) {
    const int64_t lda = (c.ta ? c.m : c.k) + c.pad, ldb = (c.tb ? c.k : c.n) + c.pad,
                  ldc = c.n + c.pad;
    const std::vector<float> a = uniform(rng, (c.ta ? c.k : c.m) * lda),
                             b = uniform(rng, (c.tb ? c.n : c.k) * ldb),
                             c0 = uniform(rng, c.m * ldc);
    std::vector<float> got = c0;
    ops::gemm_bf16(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta,
                   got.data(), ldc);
    std::vector<float> dense;
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) dense.push_back(got[size_t(i * ldc + j)]);
    std::vector<double> exact, abs_sum, unrounded, unused;
    reference_gemm(c, rounded(a), lda, rounded(b), ldb, c0, ldc, &exact, &abs_sum);
    reference_gemm(c, a, lda, b, ldb, c0, ldc, &unrounded, &unused);
    const std::string what = "gemm " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                             std::to_string(c.k) + (c.ta ? " A^T" : "") + (c.tb ? " B^T" : "");
    rejected += expect_within(dense, exact, abs_sum, unrounded, c.k, what);
    // Entries of C outside the m x n block stay as they were.
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = c.n; j < ldc; ++j)
        ASSERT_EQ(got[size_t(i * ldc + j)], c0[size_t(i * ldc + j)]) << what;
  }
  EXPECT_GT(rejected, 100) << "the bound would pass unrounded inputs too: it proves nothing";
}

struct ConvSums {  // exact results and the absolute sums of their products, in double
  std::vector<double> y, y_abs, dx, dx_abs, dw, dw_abs, db, db_abs;
};

// Direct convolution in double: y = conv(x, w) + b, dx, dw = grad0 + dL/dw, db = bias0 + sum dy.
ConvSums reference_conv(const ops::Conv2dGeometry& g, const std::vector<float>& x,
                        const std::vector<float>& w, const std::vector<float>& b,
                        const std::vector<float>& dy, const std::vector<float>& grad0,
                        const std::vector<float>& bias0) {
  ConvSums r;
  const int64_t C = g.in_channels, H = g.in_h, W = g.in_w, OC = g.out_channels, K = g.kernel;
  const int64_t Ho = g.out_h(), Wo = g.out_w();
  r.y.assign(size_t(g.batch * OC * Ho * Wo), 0.0);
  r.y_abs = r.y;
  r.dx.assign(x.size(), 0.0);
  r.dx_abs = r.dx;
  r.dw.assign(grad0.begin(), grad0.end());
  r.dw_abs.assign(grad0.size(), 0.0);
  for (size_t i = 0; i < grad0.size(); ++i) r.dw_abs[i] = std::abs(grad0[i]);
  r.db.assign(bias0.begin(), bias0.end());
  r.db_abs.assign(bias0.size(), 0.0);
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          const size_t yi = size_t(((n * OC + oc) * Ho + oh) * Wo + ow);
          const double d = dy[yi];
          r.y[yi] = b[size_t(oc)];
          r.y_abs[yi] = std::abs(b[size_t(oc)]);
          r.db[size_t(oc)] += d;
          r.db_abs[size_t(oc)] += std::abs(d);
          for (int64_t c = 0; c < C; ++c)
            for (int64_t kh = 0; kh < K; ++kh)
              for (int64_t kw = 0; kw < K; ++kw) {
                const int64_t ih = oh * g.stride - g.padding + kh,
                              iw = ow * g.stride - g.padding + kw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const size_t xi = size_t(((n * C + c) * H + ih) * W + iw),
                             wi = size_t(((oc * C + c) * K + kh) * K + kw);
                r.y[yi] += double(x[xi]) * w[wi];
                r.y_abs[yi] += std::abs(double(x[xi]) * w[wi]);
                r.dw[wi] += d * x[xi];
                r.dw_abs[wi] += std::abs(d * x[xi]);
                r.dx[xi] += d * w[wi];
                r.dx_abs[xi] += std::abs(d * w[wi]);
              }
        }
  return r;
}

struct ConvCase {
  int64_t batch, in_channels, in_h, in_w, out_channels, kernel, stride, padding;
  bool by_dnnl;  // oneDNN's bf16 kernels, or the im2col path's rounded copies
};

TEST(Bf16Conv2d, MatchesFp32ReferenceOfRoundedInputs) {
  if (!ops::host_computes_bf16()) GTEST_SKIP() << "this CPU has no bf16 arithmetic";
  const ConvCase cases[] = {
      {4, 6, 14, 14, 16, 5, 1, 0, true},  // LeNet-like conv2
      {3, 1, 28, 28, 8, 5, 1, 2, true},   // LeNet-like conv1
      {2, 16, 9, 9, 32, 3, 2, 1, true},   // stride 2, odd size (resnet's downsampling 3x3)
      {2, 16, 8, 8, 32, 1, 2, 0, false},  // 1x1 stride 2 on an even size: im2col
      {2, 5, 7, 6, 3, 3, 1, 1, true},     // odd channel counts, non-square
  };
  const HostOps ops(Precision::Bf16);
  Rng rng(5);
  int64_t rejected = 0;
  for (const ConvCase& c : cases) {
    ops::Conv2dGeometry g;
    g.batch = c.batch, g.in_channels = c.in_channels, g.in_h = c.in_h, g.in_w = c.in_w;
    g.out_channels = c.out_channels, g.kernel = c.kernel, g.stride = c.stride;
    g.padding = c.padding;
    const std::string what = "conv C " + std::to_string(c.in_channels) + " " +
                             std::to_string(c.in_h) + "x" + std::to_string(c.in_w) + " k " +
                             std::to_string(c.kernel) + " s " + std::to_string(c.stride);
    const auto x = uniform(rng, g.batch * g.in_channels * g.in_h * g.in_w);
    const auto w = uniform(rng, g.out_channels * g.col_rows());
    const auto b = uniform(rng, g.out_channels);
    const auto dy = uniform(rng, g.batch * g.out_channels * g.out_pixels());
    const auto grad0 = uniform(rng, g.out_channels * g.col_rows());
    const auto bias0 = uniform(rng, g.out_channels);
    std::vector<float> reserved(size_t(std::max<int64_t>(1, ops.conv2d_scratch_floats(g, true))));
    EXPECT_EQ(ops.conv2d_scratch_floats(g, true) == 0, c.by_dnnl) << what;
    Scratch scratch;
    scratch.reserved = reserved.data();
    std::vector<float> y(dy.size()), dx(x.size()), dw = grad0, db = bias0;
    ops.conv2d_forward(g, x.data(), w.data(), b.data(), y.data(), scratch);
    ops.conv2d_backward(g, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(), scratch);
    // oneDNN's bias gradient sums the bf16 dy it is given; the im2col path's, its rounded copy.
    const ConvSums exact = reference_conv(g, rounded(x), rounded(w), b, rounded(dy), grad0, bias0);
    const ConvSums unrounded = reference_conv(g, x, w, b, dy, grad0, bias0);
    const int64_t pixels = g.batch * g.out_pixels();
    rejected += expect_within(y, exact.y, exact.y_abs, unrounded.y, g.col_rows(), what + " y");
    rejected += expect_within(dx, exact.dx, exact.dx_abs, unrounded.dx,
                              g.out_channels * g.kernel * g.kernel, what + " dx");
    rejected += expect_within(dw, exact.dw, exact.dw_abs, unrounded.dw, pixels, what + " dw");
    rejected += expect_within(db, exact.db, exact.db_abs, unrounded.db, pixels, what + " db");
  }
  EXPECT_GT(rejected, 100) << "the bound would pass unrounded inputs too: it proves nothing";
}

}  // namespace
}  // namespace wt::testing
