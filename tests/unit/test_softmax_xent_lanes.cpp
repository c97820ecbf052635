// The loss's row maximum as the GPU's warp takes it (ops/cuda/cuda_loss_optim.cu): lane l scans
// columns l, l + 32, ..., and the lanes join in the shuffle tree. Run here lane by lane, it must
// name the same column as the host's one scan (`x[j] > x[argmax]`), including ties across lanes,
// NaNs (skipped, except at column 0, which the scan then keeps), infinities and signed zeros; and
// the host's row functor, rewritten around that maximum, must give the bits it gave before.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ops/portable/softmax_xent.hpp"
#include "ops/portable/tree_reduce.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

// The host's scan before the lanes: the first maximum, NaN at column 0 kept.
int64_t scan_argmax(const float* x, int64_t k) {
  int64_t argmax = 0;
  for (int64_t j = 1; j < k; ++j)
    if (x[j] > x[argmax]) argmax = j;
  return argmax;
}

// The warp: each lane's maximum, then shuffle_down's tree (lane t joins lane t + width).
kern::RowMax lanes_max(const kern::SoftmaxXentRow& f, int64_t r) {
  std::vector<kern::RowMax> lane(kern::kRowLanes);
  for (int l = 0; l < kern::kRowLanes; ++l) lane[size_t(l)] = f.row_max<kern::kRowLanes>(r, l);
  for (int width = kern::kRowLanes / 2; width > 0; width /= 2)
    for (int t = 0; t < width; ++t)
      lane[size_t(t)] = kern::join_max(lane[size_t(t)], lane[size_t(t + width)]);
  return lane[0];
}

// Rows drawn from a few values, so ties are common, with NaNs, infinities and signed zeros.
std::vector<float> awkward_rows(Rng& rng, int64_t rows, int64_t k) {
  const float pool[] = {1.0f, 2.0f, -3.0f, 0.0f, -0.0f, 2.0f, INFINITY, -INFINITY, NAN, 0.5f};
  std::vector<float> x(size_t(rows * k));
  for (auto& v : x) v = rng.below(4) == 0 ? pool[rng.below(10)] : float(rng.below(3));
  x[0] = NAN;                              // row 0: NaN at column 0 wins
  if (rows > 1) x[size_t(k)] = -INFINITY;  // row 1 starts at -inf
  return x;
}

TEST(SoftmaxXentLanes, WarpMaximumNamesTheScansColumn) {
  Rng rng(20261129);
  for (int64_t k : {1, 2, 5, 10, 31, 32, 33, 64, 73, 100}) {
    const int64_t rows = 400;
    const auto x = awkward_rows(rng, rows, k);
    std::vector<int32_t> labels(size_t(rows), 0);
    std::vector<float> grad(x.size());
    const kern::SoftmaxXentRow f{x.data(), labels.data(), k, grad.data()};
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t expected = scan_argmax(x.data() + r * k, k);
      const kern::RowMax one = f.row_max<1>(r, 0), warp = lanes_max(f, r);
      ASSERT_EQ(one.at, expected) << "k " << k << ", row " << r;
      ASSERT_EQ(warp.at, expected) << "k " << k << ", row " << r;
      const float want = x[size_t(r * k + expected)];
      ASSERT_EQ(std::memcmp(&warp.value, &want, sizeof want), 0) << "k " << k << ", row " << r;
    }
  }
}

TEST(SoftmaxXentLanes, JoinIsAnOrderOnColumns) {
  // Any joining order gives the same answer: the warp's tree is one of many.
  const kern::RowMax none, a{2.0f, 7}, b{2.0f, 3}, c{5.0f, 9}, nan0{NAN, 0}, ninf{-INFINITY, 1};
  for (const auto& p : {none, a, b, c, nan0, ninf})
    for (const auto& q : {none, a, b, c, nan0, ninf}) {
      const kern::RowMax pq = kern::join_max(p, q), qp = kern::join_max(q, p);
      EXPECT_EQ(pq.at, qp.at) << p.at << " against " << q.at;
    }
  EXPECT_EQ(kern::join_max(a, b).at, 3);           // a tie: the earlier column
  EXPECT_EQ(kern::join_max(c, nan0).at, 0);        // column 0's NaN, as the scan keeps it
  EXPECT_EQ(kern::offer_column(a, NAN, 8).at, 7);  // a later NaN is skipped
}

// The row functor as it was before the maximum became a RowMax.
kern::XentRow old_row(const float* x, int32_t label, int64_t k, float* g) {
  const int64_t argmax = scan_argmax(x, k);
  const float mx = x[argmax];
  float denom = 0.0f;
  for (int64_t j = 0; j < k; ++j) {
    g[j] = expf(x[j] - mx);
    denom += g[j];
  }
  const float inv = 1.0f / denom;
  for (int64_t j = 0; j < k; ++j) g[j] *= inv;
  g[label] -= 1.0f;
  return kern::XentRow{log(static_cast<double>(denom)) - static_cast<double>(x[label] - mx),
                       argmax == label ? 1 : 0};
}

TEST(SoftmaxXentLanes, HostRowGivesTheSameBitsAsBefore) {
  Rng rng(7);
  const int64_t rows = 500, k = 73;
  std::vector<float> x(size_t(rows * k));
  for (auto& v : x) v = rng.uniform(-5.0f, 5.0f);
  for (int64_t r = 0; r < rows; r += 3) x[size_t(r * k + 40)] = x[size_t(r * k + 8)] = 7.0f;
  std::vector<int32_t> labels(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) labels[size_t(r)] = int32_t(r % 2 ? 8 : rng.below(k));
  std::vector<float> grad(x.size()), want(x.size());
  const kern::SoftmaxXentRow f{x.data(), labels.data(), k, grad.data()};
  for (int64_t r = 0; r < rows; ++r) {
    const kern::XentRow got = f(r);
    const kern::XentRow old = old_row(x.data() + r * k, labels[size_t(r)], k, want.data() + r * k);
    ASSERT_EQ(std::memcmp(&got.loss, &old.loss, sizeof got.loss), 0) << "row " << r;
    ASSERT_EQ(got.hit, old.hit) << "row " << r;
  }
  EXPECT_EQ(std::memcmp(grad.data(), want.data(), grad.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace wt
