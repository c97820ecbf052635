// The GPU's parallel sums (ops/cuda/cuda_reduce.cuh, cuda_batchnorm.cu) run here on the host: the
// grid executed serially, block by block and thread by thread, through the same portable functions
// (ops/portable/tree_reduce.hpp, batchnorm_blocks.hpp) that the kernels call. CI has no GPU; this
// is where the partition and the join order are proven: every index summed once, results close to
// a double-precision reference, and bitwise the same whatever order the blocks and threads run in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "ops/host/batchnorm.hpp"
#include "ops/host/layer_norm.hpp"
#include "ops/portable/batchnorm_blocks.hpp"
#include "ops/portable/elementwise.hpp"
#include "ops/portable/layer_norm.hpp"
#include "ops/portable/rows.hpp"
#include "ops/portable/tree_reduce.hpp"

namespace wt::kern {
namespace {

constexpr int T = kTreeThreads;

// The order a serial run takes blocks and threads in: as numbered, reversed, or shuffled by a seed.
struct RunOrder {
  int kind = 0;  // 0 in order, 1 reversed, 2 shuffled
  unsigned seed = 0;
  std::vector<int64_t> of(int64_t n) const {
    std::vector<int64_t> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), 0);
    if (kind == 1) std::reverse(v.begin(), v.end());
    if (kind == 2) std::shuffle(v.begin(), v.end(), std::mt19937(seed));
    return v;
  }
};

const RunOrder kOrders[] = {{0, 0}, {1, 0}, {2, 1}, {2, 2}};

// A block's tree run serially: the threads of each level in `order`, levels in sequence.
template <class Value>
Value serial_tree(std::vector<Value> v, const RunOrder& order) {
  for (int width = int(v.size()) / 2; width > 0; width /= 2)
    for (int64_t t : order.of(int64_t(v.size()))) tree_level(v.data(), width, int(t));
  return v[0];
}

// cuda_reduce.cuh's segment_partials_kernel, then one join per segment, as segment_join_kernel
// and the batch-norm kernels do it: the totals of every segment.
template <class Total, class Share>
std::vector<Total> run_segments(const SegmentPlan& plan, const Share& share,
                                const RunOrder& order) {
  std::vector<Total> partials(static_cast<size_t>(plan.grid()));
  for (int64_t b : order.of(plan.grid())) {
    const int64_t segment = b / plan.blocks, block = b % plan.blocks;
    std::vector<Total> v(T);
    for (int64_t t : order.of(T)) v[t] = share(segment, plan.begin(block) + t, plan.end(block), T);
    partials[b] = serial_tree(v, order);
  }
  std::vector<Total> totals(static_cast<size_t>(plan.segments));
  for (int64_t s : order.of(plan.segments)) {
    std::vector<Total> v(T);
    for (int64_t t : order.of(T))
      v[t] = combine_share(partials.data() + s * plan.blocks, plan.blocks, int(t), T);
    totals[s] = serial_tree(v, order);
  }
  return totals;
}

// cuda_reduce.cuh's column_partials_kernel and column_join_kernel: every column's total.
template <class Total, class Acc, class Value>
std::vector<Total> run_columns(const ColumnPlan& plan, const Value& value, const RunOrder& order) {
  std::vector<Total> partials(static_cast<size_t>(plan.chunks * plan.cols)), totals(plan.cols);
  for (int64_t b : order.of(plan.grid())) {
    const int64_t tile = b % plan.tiles(), chunk = b / plan.tiles();
    for (int64_t tx : order.of(kColumnTile)) {
      const int64_t j = tile * kColumnTile + tx;
      if (j >= plan.cols) continue;
      std::vector<Total> lanes(kColumnLanes);
      for (int64_t lane : order.of(kColumnLanes))
        lanes[lane] = Total(column_lane_share<Acc>(value, plan, chunk, int(lane), j));
      (plan.chunks == 1 ? totals[j] : partials[chunk * plan.cols + j]) = serial_tree(lanes, order);
    }
  }
  if (plan.chunks > 1)
    for (int64_t j : order.of(plan.cols))
      totals[j] = column_join(partials.data(), plan.chunks, plan.cols, j);
  return totals;
}

std::vector<float> random_values(int64_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(rng);
  return v;
}

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

struct FloatValue {
  const float* x;
  float operator()(int64_t i) const { return x[i]; }
};

// Records which indices a thread visited, in what order.
struct Visits {
  std::vector<int64_t> seen;
  Visits& operator+=(const Visits& o) {
    seen.insert(seen.end(), o.seen.begin(), o.seen.end());
    return *this;
  }
};
struct VisitShare {
  Visits operator()(int64_t, int64_t first, int64_t end, int64_t stride) const {
    Visits v;
    for (int64_t i = first; i < end; i += stride) v.seen.push_back(i);
    return v;
  }
};

TEST(TreeReduce, EverySegmentIndexIsSummedOnce) {
  for (int64_t values : {1, 255, 256, 4097, 131072 + 3}) {
    const SegmentPlan plan = plan_segments(3, values, 16, 1 << 20);
    EXPECT_EQ(plan.blocks, ceil_div(values, plan.chunk));  // no empty block
    EXPECT_GT(plan.end(plan.blocks - 1), plan.begin(plan.blocks - 1));
    for (const Visits& v : run_segments<Visits>(plan, VisitShare{}, kOrders[0])) {
      std::vector<int64_t> seen = v.seen;
      std::sort(seen.begin(), seen.end());
      std::vector<int64_t> all(static_cast<size_t>(values));
      std::iota(all.begin(), all.end(), 0);
      EXPECT_EQ(seen, all) << values << " values";
    }
  }
}

TEST(TreeReduce, PlansStayWithinThePartialsBuffer) {
  const SegmentPlan roomy = plan_segments(64, 128 * 1024, 16, 1 << 20);
  EXPECT_EQ(roomy.blocks, 32);  // 131072 / (256 * 16)
  const SegmentPlan tight = plan_segments(64, 128 * 1024, 16, 1000);
  EXPECT_LE(tight.grid(), 1000);
  EXPECT_EQ(tight.blocks, 15);
  EXPECT_EQ(plan_segments(5000, 100, 16, 1000).blocks, 1);  // at least one block a segment
  const ColumnPlan columns = plan_columns(4096, 256, 16, 1 << 20);
  EXPECT_EQ(columns.chunks, 32);  // 4096 / (8 lanes * 16)
  EXPECT_EQ(columns.tiles(), 8);
  EXPECT_LE(plan_columns(4096, 256, 16, 1000).chunks * 256, 1000);
  EXPECT_EQ(plan_columns(64, 256, 16, 1 << 20).chunks, 1);  // one chunk: no partials at all
}

TEST(TreeReduce, FlatSumMatchesDoubleAndIgnoresRunOrder) {
  const int64_t n = 1'000'003;
  const auto x = random_values(n, 3, -1.0f, 2.0f);
  double want = 0, magnitude = 0;
  for (float v : x) want += v, magnitude += std::fabs(v);
  const SegmentPlan plan = plan_segments(1, n, 16, 1 << 17);
  ASSERT_GT(plan.blocks, 200);  // many blocks, many levels of joining
  const FlatShare<double, FloatValue> share{FloatValue{x.data()}};
  const auto first = run_segments<double>(plan, share, kOrders[0]);
  EXPECT_NEAR(first[0], want, 1e-12 * magnitude);
  for (const RunOrder& order : kOrders)
    EXPECT_TRUE(bitwise_equal(run_segments<double>(plan, share, order), first)) << order.kind;
}

// The bug class the run-order check exists for: partials added into one total as blocks finish
// (what an atomicAdd does) give a result that depends on the order, which the check sees.
TEST(TreeReduce, AnArrivalOrderSumFailsTheRunOrderCheck) {
  const int64_t n = 200'000;
  const auto x = random_values(n, 4, -1.0f, 2.0f);
  const SegmentPlan plan = plan_segments(1, n, 16, 1 << 17);
  auto arrival_sum = [&](const RunOrder& order) {
    float total = 0.0f;
    for (int64_t b : order.of(plan.grid())) {
      float block = 0.0f;
      for (int64_t i = plan.begin(b); i < plan.end(b); ++i) block += x[i];
      total += block;
    }
    return std::vector<float>{total};
  };
  bool differs = false;
  for (const RunOrder& order : kOrders)
    differs |= !bitwise_equal(arrival_sum(order), arrival_sum(kOrders[0]));
  EXPECT_TRUE(differs);
}

TEST(TreeReduce, NonFiniteCountIsExactInEveryBlock) {
  const int64_t n = 1 << 20;
  auto x = random_values(n, 5, -1.0f, 1.0f);
  const int64_t bad[] = {0, 4095, 4096, 300'001, n - 1};  // first, block edges, middle, last
  for (int64_t i : bad) x[size_t(i)] = (i % 2) ? NAN : INFINITY;
  const SegmentPlan plan = plan_segments(1, n, 16, 1 << 17);
  for (const RunOrder& order : kOrders)
    EXPECT_EQ(
        run_segments<int64_t>(plan, FlatShare<int64_t, NonFinite>{NonFinite{x.data()}}, order)[0],
        5);
}

TEST(TreeReduce, ColumnSumsMatchDoubleAndIgnoreRunOrder) {
  const int64_t rows = 1000, cols = 70;  // 8 chunks of 125 rows; 3 tiles, the last partial
  const auto x = random_values(rows * cols, 6, -1.0f, 1.0f);
  const ColumnPlan plan = plan_columns(rows, cols, 16, 1 << 17);
  ASSERT_EQ(plan.chunks, 8);
  const MatrixEntry value{x.data(), cols};
  const auto first = run_columns<double, float>(plan, value, kOrders[0]);
  for (int64_t j = 0; j < cols; ++j) {
    double want = 0;
    for (int64_t r = 0; r < rows; ++r) want += x[r * cols + j];
    EXPECT_NEAR(first[j], want, 1e-5) << "column " << j;
  }
  for (const RunOrder& order : kOrders)
    EXPECT_TRUE(bitwise_equal(run_columns<double, float>(plan, value, order), first));
}

TEST(TreeReduce, LayerNormParameterGradientsAgreeWithTheHost) {
  const int64_t rows = 4096, dim = 96;
  const auto x = random_values(rows * dim, 7, -2.0f, 2.0f),
             dy = random_values(rows * dim, 8, -1, 1);
  std::vector<float> stats(2 * rows);
  for (int64_t r = 0; r < rows; ++r) stats[2 * r] = 0.01f * float(r % 7), stats[2 * r + 1] = 1.3f;
  std::vector<float> host_dw(dim, 0.5f), host_db(dim, -0.5f), dx(rows * dim);
  const std::vector<float> w(dim, 1.0f);
  ops::layer_norm_backward(x.data(), dy.data(), w.data(), stats.data(), rows, dim, host_dw.data(),
                           host_db.data(), dx.data());
  const ColumnPlan plan = plan_columns(rows, dim, 16, 1 << 17);
  ASSERT_GT(plan.chunks, 1);
  const auto totals = run_columns<Sum2d, Sum2f>(
      plan, LayerNormParamTerms{x.data(), dy.data(), stats.data(), dim}, kOrders[2]);
  std::vector<float> dw(dim, 0.5f), db(dim, -0.5f);
  for (int64_t j = 0; j < dim; ++j) AddLayerNormParamTotals{dw.data(), db.data()}(j, totals[j]);
  for (int64_t j = 0; j < dim; ++j) {
    double want_w = 0.5, want_b = -0.5, magnitude = 1;
    for (int64_t r = 0; r < rows; ++r) {
      const double xhat = (double(x[r * dim + j]) - stats[2 * r]) * stats[2 * r + 1];
      want_w += dy[r * dim + j] * xhat;
      want_b += dy[r * dim + j];
      magnitude += std::fabs(dy[r * dim + j] * xhat) + std::fabs(dy[r * dim + j]);
    }
    EXPECT_NEAR(dw[j], want_w, 1e-6 * magnitude) << j;
    EXPECT_NEAR(db[j], want_b, 1e-6 * magnitude) << j;
    // The host adds 4096 floats in row order: further from the reference, within float rounding.
    EXPECT_NEAR(dw[j], host_dw[j], 1e-4 * magnitude) << j;
    EXPECT_NEAR(db[j], host_db[j], 1e-4 * magnitude) << j;
  }
}

// Layer norm's row form (a warp a row, the lanes joined in the tree), run serially, against the
// host's one-thread-a-row kernels: the same formulas, the row sums in another order.
TEST(TreeReduce, LayerNormRowFormAgreesWithTheHost) {
  const int64_t rows = 64, dim = 200;  // 200 columns: lanes take 7 or 6
  const auto x = random_values(rows * dim, 13, 2.0f, 6.0f),
             dy = random_values(rows * dim, 14, -1, 1);
  const auto w = random_values(dim, 15, 0.5f, 1.5f), b = random_values(dim, 16, -1, 1);
  std::vector<float> host_y(rows * dim), host_stats(2 * rows), host_dx(rows * dim);
  std::vector<float> y(rows * dim), stats(2 * rows), dx(rows * dim), dw(dim), db(dim);
  ops::layer_norm_forward(x.data(), w.data(), b.data(), rows, dim, 1e-5, host_y.data(),
                          host_stats.data());
  ops::layer_norm_backward(x.data(), dy.data(), w.data(), host_stats.data(), rows, dim, dw.data(),
                           db.data(), host_dx.data());
  const LayerNormForward f{x.data(), w.data(), b.data(), dim, 1e-5, y.data(), stats.data()};
  const LayerNormInputGrad g{x.data(), dy.data(), w.data(), host_stats.data(), dim, dx.data()};
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> lanes(kRowLanes);
    std::vector<Sum2d> grads(kRowLanes);
    for (int l = 0; l < kRowLanes; ++l) lanes[l] = f.sum<kRowLanes>(r, l);
    const float mean = f.mean_of(serial_tree(lanes, kOrders[1]));
    for (int l = 0; l < kRowLanes; ++l) lanes[l] = f.centred_squares<kRowLanes>(r, l, mean);
    const float rstd = f.rstd_of(serial_tree(lanes, kOrders[2]));
    for (int l = kRowLanes - 1; l >= 0; --l) f.write<kRowLanes>(r, l, mean, rstd);
    for (int l = 0; l < kRowLanes; ++l) grads[l] = g.sums<kRowLanes>(r, l);
    const Sum2d total = serial_tree(grads, kOrders[0]);
    for (int l = 0; l < kRowLanes; ++l) g.write<kRowLanes>(r, l, total);
  }
  for (int64_t i = 0; i < 2 * rows; ++i)
    EXPECT_NEAR(stats[i], host_stats[i], 1e-6 * std::fabs(host_stats[i]));
  for (int64_t i = 0; i < rows * dim; ++i) {
    ASSERT_NEAR(y[i], host_y[i], 1e-5) << i;
    ASSERT_NEAR(dx[i], host_dx[i], 1e-5) << i;
  }
}

// Batch norm's block form, run serially: the statistics, y, and the backward's dgamma, dbeta, dx
// against the host's channel kernels (ops/host/batchnorm.cpp) and a double-precision reference.
void check_batchnorm(const ops::BatchNormShape& s, int64_t max_partials, int64_t blocks) {
  SCOPED_TRACE(::testing::Message() << "n " << s.n << " c " << s.c << " hw " << s.hw);
  const int64_t count = s.n * s.c * s.hw;
  const auto x = random_values(count, 9, 1.0f, 3.0f), dy = random_values(count, 10, -1, 1);
  const auto gamma = random_values(s.c, 11, 0.5f, 1.5f), beta = random_values(s.c, 12, -1, 1);
  std::vector<float> rm(s.c, 0.1f), rv(s.c, 1.0f), mean(s.c), invstd(s.c), y(count);
  std::vector<float> host_rm = rm, host_rv = rv, host_mean(s.c), host_invstd(s.c), host_y(count);
  ops::batchnorm_forward_train(x.data(), s, gamma.data(), beta.data(), 1e-5f, 0.1f, host_rm.data(),
                               host_rv.data(), host_mean.data(), host_invstd.data(), host_y.data());
  const SegmentPlan plan = plan_segments(s.c, s.n * s.hw, 16, max_partials);
  ASSERT_EQ(plan.blocks, blocks);
  const BatchNormStatistics stats{x.data(),  s,         1e-5f,       0.1f,
                                  rm.data(), rv.data(), mean.data(), invstd.data()};
  const auto moments = run_segments<Moments>(plan, BatchNormMomentsShare{x.data(), s}, kOrders[1]);
  for (int64_t c = 0; c < s.c; ++c) {
    stats.store(c, float(moments[c].mean), moments[c].m2);
    const AffineTerms t = batchnorm_affine(gamma.data(), beta.data(), c, mean[c], invstd[c]);
    for (int64_t b = 0; b < plan.blocks; ++b)
      for (int th = 0; th < T; ++th)
        batchnorm_normalise_share(x.data(), s, c, plan.begin(b) + th, plan.end(b), T, t, y.data());
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < s.n * s.hw; ++i) sum += x[(i / s.hw * s.c + c) * s.hw + i % s.hw];
    const double mu = sum / double(s.n * s.hw);
    for (int64_t i = 0; i < s.n * s.hw; ++i)
      sq += std::pow(x[(i / s.hw * s.c + c) * s.hw + i % s.hw] - mu, 2);
    EXPECT_NEAR(moments[c].mean, mu, 1e-6);
    EXPECT_NEAR(moments[c].m2, sq, 1e-5 * sq);
    EXPECT_NEAR(mean[c], host_mean[c], 1e-6);
    EXPECT_NEAR(invstd[c], host_invstd[c], 1e-5 * host_invstd[c]);
    EXPECT_NEAR(rv[c], host_rv[c], 1e-6);
  }
  for (int64_t i = 0; i < count; ++i) ASSERT_NEAR(y[i], host_y[i], 1e-5) << i;

  std::vector<float> dg(s.c, 0.25f), dbe(s.c, -0.25f), dx(count), host_dg = dg, host_db = dbe,
                                                                  host_dx(count);
  ops::batchnorm_backward(x.data(), dy.data(), s, gamma.data(), mean.data(), invstd.data(), true,
                          host_dx.data(), host_dg.data(), host_db.data());
  const BatchNormBackward bwd{x.data(),      dy.data(), s,         gamma.data(), mean.data(),
                              invstd.data(), true,      dx.data(), dg.data(),    dbe.data()};
  const auto sums = run_segments<Sum2d>(
      plan, BatchNormGradShare{x.data(), dy.data(), s, mean.data()}, kOrders[2]);
  for (int64_t c = 0; c < s.c; ++c) {
    bwd.accumulate_param_grads(c, sums[c].a, sums[c].b);
    for (int64_t b = 0; b < plan.blocks; ++b)
      for (int th = 0; th < T; ++th)
        batchnorm_dx_share(x.data(), dy.data(), s, c, plan.begin(b) + th, plan.end(b), T,
                           bwd.dx_terms(c, sums[c].a, sums[c].b), dx.data());
    EXPECT_NEAR(dg[c], host_dg[c], 1e-3);
    EXPECT_NEAR(dbe[c], host_db[c], 1e-3);
  }
  for (int64_t i = 0; i < count; ++i) ASSERT_NEAR(dx[i], host_dx[i], 1e-5) << i;
  EXPECT_TRUE(
      bitwise_equal(run_segments<Sum2d>(
                        plan, BatchNormGradShare{x.data(), dy.data(), s, mean.data()}, kOrders[0]),
                    sums));
}

TEST(TreeReduce, BatchNormBlockFormAgreesWithTheHost) {
  check_batchnorm({16, 4, 784}, 1 << 16, 4);  // 12544 values a channel, rows of 784
  check_batchnorm({300, 3, 1}, 1 << 16, 1);   // one pixel: a thread's stride crosses 256 samples
  check_batchnorm({8, 5, 50}, 1 << 16, 1);    // stride 256 = 5 rows + 6 pixels: wraps mid-row
  check_batchnorm({64, 8, 196}, 16, 2);       // the buffer allows 2 blocks a channel, not 4
}

}  // namespace
}  // namespace wt::kern
