// The GPU's pooling backwards over output windows (kern::*Tiled, where windows tile the image) run
// here on the host, one index at a time as a GPU thread would: bit for bit the per-cell gathers
// the host and the ops parity check against, on every shape the rule admits (odd sizes whose
// last rows and columns no window covers, one window, ties, a ReLU's zeros), and the rule refuses
// the shapes the gathers must keep (overlapping, padded).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ops/portable/pool2d.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

template <class Kernel>
std::vector<float> run_each(int64_t n, size_t outputs, Kernel kernel_of_out) {
  std::vector<float> out(outputs, -7.0f);  // a cell left unwritten keeps it, and differs
  const auto kernel = kernel_of_out(out.data());
  for (int64_t i = 0; i < n; ++i) kernel(i);
  return out;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void expect_tiled_matches_gather(int64_t h, int64_t w, int64_t k) {
  ops::Pool2dGeometry g;
  g.batch = 3;
  g.channels = 2;
  g.in_h = h;
  g.in_w = w;
  g.kernel = g.stride = k;
  ASSERT_TRUE(kern::pool_windows_tile(g));
  const int64_t cells = g.batch * g.channels * h * w;
  const int64_t outs = g.batch * g.channels * g.out_h() * g.out_w();
  Rng rng(uint64_t(h * 100 + w * 10 + k));
  std::vector<float> x(static_cast<size_t>(cells)), dy(static_cast<size_t>(outs));
  for (auto& v : x) v = rng.uniform(-1.0f, 1.0f);
  for (size_t i = 0; i < x.size(); i += 3) x[i] = 0.0f;  // a ReLU's zeros: ties and masked cells
  x[1] = NAN;                                            // the first-maximum rule with a NaN
  for (auto& v : dy) v = rng.uniform(-1.0f, 1.0f);
  dy[0] = -0.0f;
  const std::string shape = std::to_string(h) + "x" + std::to_string(w) + " /" + std::to_string(k);
  const size_t n = x.size();
  EXPECT_TRUE(
      bitwise_equal(run_each(outs, n,
                             [&](float* dx) {
                               return kern::MaxPoolBackwardTiled<false>{g, x.data(), dy.data(), dx};
                             }),
                    run_each(cells, n,
                             [&](float* dx) {
                               return kern::MaxPoolBackward{g, x.data(), dy.data(), dx};
                             })))
      << "max pooling's backward, " << shape;
  EXPECT_TRUE(
      bitwise_equal(run_each(outs, n,
                             [&](float* dx) {
                               return kern::MaxPoolBackwardTiled<true>{g, x.data(), dy.data(), dx};
                             }),
                    run_each(cells, n,
                             [&](float* dx) {
                               return kern::MaxPoolReluBackward{{g, x.data(), dy.data(), dx}};
                             })))
      << "max pooling's backward with the ReLU's mask, " << shape;
  EXPECT_TRUE(bitwise_equal(run_each(outs, n,
                                     [&](float* dx) {
                                       return kern::AvgPoolBackwardTiled{g, dy.data(), dx};
                                     }),
                            run_each(cells, n,
                                     [&](float* dx) {
                                       return kern::AvgPoolBackward{g, dy.data(), dx};
                                     })))
      << "average pooling's backward, " << shape;
}

TEST(PoolTiledKernels, BitwiseTheGathersWhereWindowsTile) {
  expect_tiled_matches_gather(28, 28, 2);  // lenet's pool1
  expect_tiled_matches_gather(13, 11, 2);  // odd sizes: a last row and column no window covers
  expect_tiled_matches_gather(7, 7, 7);    // one window a plane (a global pool)
  expect_tiled_matches_gather(10, 9, 3);   // a 3x3 tiling with uncovered edges
  expect_tiled_matches_gather(3, 5, 3);    // one row of windows
  expect_tiled_matches_gather(8, 8, 3);    // an uncovered strip two cells wide
  expect_tiled_matches_gather(5, 4, 1);    // 1x1 windows: every cell its own
}

TEST(PoolTiledKernels, OverlappingOrPaddedWindowsKeepTheGather) {
  ops::Pool2dGeometry g;
  g.batch = g.channels = 1;
  g.in_h = g.in_w = 9;
  g.kernel = 3;
  g.stride = 2;
  EXPECT_FALSE(kern::pool_windows_tile(g));  // overlapping
  g.stride = 3;
  g.padding = 1;
  EXPECT_FALSE(kern::pool_windows_tile(g));  // padded
  g.padding = 0;
  g.in_h = 2;
  EXPECT_FALSE(kern::pool_windows_tile(g));  // smaller than a window (one clipped output row)
}

}  // namespace
}  // namespace wt
