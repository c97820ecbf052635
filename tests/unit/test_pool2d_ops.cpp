// The 2x2 stride-2 max-pool backward has its own branch-free kernel; it must route every gradient
// exactly as a plain first-maximum scan does, including ties (ReLU outputs are full of zeros) and
// odd sizes whose last row/column no window covers.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ops/host/pool2d.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

// Reference: scan each window in row-major order, the first strict maximum wins.
std::vector<float> naive_maxpool_backward(const ops::Pool2dGeometry& g, const std::vector<float>& x,
                                          const std::vector<float>& dy) {
  std::vector<float> dx(x.size(), 0.0f);
  const int64_t Ho = g.out_h(), Wo = g.out_w();
  for (int64_t p = 0; p < g.batch * g.channels; ++p)
    for (int64_t oh = 0; oh < Ho; ++oh)
      for (int64_t ow = 0; ow < Wo; ++ow) {
        int64_t best = -1;
        for (int64_t kh = 0; kh < g.kernel; ++kh)
          for (int64_t kw = 0; kw < g.kernel; ++kw) {
            const int64_t i =
                p * g.in_h * g.in_w + (oh * g.stride + kh) * g.in_w + ow * g.stride + kw;
            if (best < 0 || x[i] > x[best]) best = i;
          }
        dx[best] += dy[(p * Ho + oh) * Wo + ow];
      }
  return dx;
}

void expect_matches_naive(int64_t batch, int64_t channels, int64_t h, int64_t w, bool ties) {
  ops::Pool2dGeometry g;
  g.batch = batch;
  g.channels = channels;
  g.in_h = h;
  g.in_w = w;
  g.kernel = g.stride = 2;
  Rng rng(7);
  std::vector<float> x(batch * channels * h * w), dy(batch * channels * g.out_h() * g.out_w());
  // With ties, values come from {-1, 0, 1}, so most windows hold equal maxima.
  for (float& v : x) v = ties ? float(int64_t(rng.uniform(0.0f, 3.0f)) - 1) : rng.uniform(-1, 1);
  for (float& v : dy) v = rng.uniform(-1, 1);
  std::vector<float> dx(x.size(), 123.0f);  // garbage: the kernel must overwrite every cell
  ops::maxpool2d_backward(g, x.data(), dy.data(), dx.data());
  const std::vector<float> want = naive_maxpool_backward(g, x, dy);
  for (size_t i = 0; i < dx.size(); ++i) ASSERT_EQ(dx[i], want[i]) << "at " << i;
}

TEST(MaxPool2x2Backward, MatchesFirstMaximumScan) {
  expect_matches_naive(2, 3, 8, 6, false);
  expect_matches_naive(2, 3, 28, 28, false);
}

TEST(MaxPool2x2Backward, TiesGoToTheFirstCell) { expect_matches_naive(3, 2, 6, 10, true); }

TEST(MaxPool2x2Backward, OddSizesZeroTheUncoveredEdge) {
  expect_matches_naive(2, 2, 7, 5, false);
  expect_matches_naive(1, 3, 5, 9, true);
}

}  // namespace
}  // namespace wt
