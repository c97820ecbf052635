#pragma once
// Helpers of the convolution path tests (test_conv2d_dnnl.cpp, test_conv2d_winograd.cpp,
// test_channel_blocks.cpp): random inputs, the im2col path's results as the reference, relayouts
// between NCHW and the channel-blocked layout, and results compared at their own scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/host/channel_blocks.hpp"
#include "ops/host/conv2d.hpp"
#include "tensor/rng.hpp"

namespace wt::testing {

inline std::vector<float> uniform(Rng& rng, int64_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(-1, 1);
  return v;
}

inline std::vector<float> blocked(const std::vector<float>& nchw, int64_t n, int64_t c,
                                  int64_t pixels) {
  std::vector<float> out(nchw.size());
  ops::nchw_to_blocked(nchw.data(), n, c, pixels, out.data());
  return out;
}

inline std::vector<float> unblocked(const std::vector<float>& b, int64_t n, int64_t c,
                                    int64_t pixels) {
  std::vector<float> out(b.size());
  ops::blocked_to_nchw(b.data(), n, c, pixels, out.data());
  return out;
}

// A convolution's random inputs (NCHW), drawn in this order, and the im2col path's results on
// them: the reference the other paths are held to. Gradients accumulate onto grad0 and
// bias_grad0, as the layers' do; dx stays zero unless need_dx.
struct ConvReference {
  std::vector<float> x, w, b, dy, grad0, bias_grad0;
  std::vector<float> y, dx, dw, db;
};

inline ConvReference conv_reference(const ops::Conv2dGeometry& g, Rng& rng, bool bias,
                                    bool need_dx) {
  ConvReference r;
  r.x = uniform(rng, g.batch * g.in_channels * g.in_h * g.in_w);
  r.w = uniform(rng, g.out_channels * g.col_rows());
  r.b = uniform(rng, g.out_channels);
  r.dy = uniform(rng, g.batch * g.out_channels * g.out_pixels());
  r.grad0 = uniform(rng, g.out_channels * g.col_rows());
  r.bias_grad0 = uniform(rng, g.out_channels);
  const int64_t chunk = ops::conv2d_chunk(g);
  std::vector<float> ws(ops::conv2d_workspace_floats(g, chunk));
  r.y.resize(r.dy.size());
  r.dx.resize(r.x.size());
  r.dw = r.grad0;
  r.db = r.bias_grad0;
  ops::conv2d_forward(g, r.x.data(), r.w.data(), bias ? r.b.data() : nullptr, r.y.data(), ws.data(),
                      chunk);
  ops::conv2d_backward(g, r.x.data(), r.w.data(), r.dy.data(), need_dx ? r.dx.data() : nullptr,
                       r.dw.data(), bias ? r.db.data() : nullptr, ws.data(), chunk);
  return r;
}

// Max |a - b| relative to the largest |b| at most `tolerance` (sums of many products: compare at
// their scale).
inline void expect_close(const std::vector<float>& a, const std::vector<float>& b,
                         const std::string& what, float tolerance) {
  ASSERT_EQ(a.size(), b.size()) << what;
  float scale = 1e-6f, worst = 0.0f;
  for (size_t i = 0; i < b.size(); ++i) {
    scale = std::max(scale, std::fabs(b[i]));
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  }
  EXPECT_LE(worst / scale, tolerance) << what << ": max abs difference " << worst;
}

}  // namespace wt::testing
