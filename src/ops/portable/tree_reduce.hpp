#pragma once
// The structure of the GPU's parallel sums (ops/cuda/cuda_reduce.cuh), as portable functions: which
// indices each block and thread add, and in what order partial sums are joined. The partition is a
// function of the shape alone (never of the device or of timing), and every join happens in a fixed
// tree, so a sum comes out bitwise the same on every run and every GPU, CUDA graphs or not, with no
// atomics. The host runs the same functions serially to test them
// (tests/unit/test_tree_reduce.cpp).
//
// Three shapes of sum:
//   segments: `segments` independent sums of `values` indices each (batch norm's channels; one
//     segment for a flat sum). Each segment is cut into `blocks` contiguous chunks, one GPU block
//     each; thread t of a block takes the chunk's indices begin + t, begin + t + kTreeThreads, ...
//     in increasing order; the block's threads join in a tree (tree_level); the segment's block
//     partials are then joined the same way by one block (thread t takes partials t, t + T, ...).
//   rows (ops/portable/layer_norm.hpp): a warp of kRowLanes lanes a row, lane l taking columns
//     l, l + kRowLanes, ...; the lanes join in the same tree.
//   columns: sums down the columns of a [rows, cols] row-major matrix. A block covers
//     kColumnTile adjacent columns (coalesced reads) by kColumnLanes row lanes over one chunk of
//     rows; lane l takes rows begin + l, begin + l + kColumnLanes, ...; the lanes join in a tree,
//     then each column's chunk partials are added in chunk order.
#include "ops/portable/portable.hpp"

namespace wt::kern {

constexpr int kTreeThreads = 256;  // a reduction block's threads: a power of two for the tree
constexpr int kColumnTile = 32;    // a column block's columns (one warp's coalesced row segment)
constexpr int kColumnLanes = 8;    // its row lanes: kColumnTile * kColumnLanes = kTreeThreads
constexpr int kRowLanes = 32;      // a row kernel's lanes (one warp a row): joined by tree_level

WT_HD int64_t min_i64(int64_t a, int64_t b) { return b < a ? b : a; }
WT_HD int64_t max_i64(int64_t a, int64_t b) { return a < b ? b : a; }
WT_HD int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One level of a block's tree over `v[0, 2 * width)`: thread t < width adds v[t + width] into
// v[t]. The threads of one level touch disjoint entries, so their order does not matter; the
// levels run width = kTreeThreads / 2, ..., 1 with a barrier between them, leaving the total in
// v[0].
template <class Value>
WT_HD void tree_level(Value* v, int width, int t) {
  if (t < width) v[t] += v[t + width];
}

// Thread t's share of a segment plan's combine: partials t, t + threads, ... of `count`, in order.
template <class Value>
WT_HD Value combine_share(const Value* partials, int64_t count, int t, int threads) {
  Value mine{};
  for (int64_t i = t; i < count; i += threads) mine += partials[i];
  return mine;
}

struct SegmentPlan {
  int64_t segments = 1, values = 0;
  int64_t blocks = 1;  // per segment
  int64_t chunk = 0;   // indices per block (the last block's chunk may be shorter)
  WT_HD int64_t begin(int64_t block) const { return min_i64(values, block * chunk); }
  WT_HD int64_t end(int64_t block) const { return min_i64(values, (block + 1) * chunk); }
  WT_HD int64_t grid() const { return segments * blocks; }  // blocks in all: partials needed
};

// The size of the pieces that cut `count` indices into pieces of about `wanted` each, but into
// no more than `most` pieces (and at least one).
inline int64_t piece_size(int64_t count, int64_t wanted, int64_t most) {
  const int64_t n = max_i64(count, 1);
  return ceil_div(n, min_i64(ceil_div(n, max_i64(wanted, 1)), max_i64(most, 1)));
}

// Cuts each segment into blocks of about kTreeThreads * per_thread indices, at most
// max_partials / segments blocks per segment (the partials' buffer), at least one.
inline SegmentPlan plan_segments(int64_t segments, int64_t values, int64_t per_thread,
                                 int64_t max_partials) {
  SegmentPlan p;
  p.segments = segments;
  p.values = values;
  p.chunk = piece_size(values, kTreeThreads * per_thread, max_partials / max_i64(segments, 1));
  p.blocks = ceil_div(max_i64(values, 1), p.chunk);  // no empty trailing blocks
  return p;
}

// A flat sum's thread share (one segment): body(i) over the thread's indices, in order.
template <class Total, class Body>
struct FlatShare {
  Body body;
  WT_HD Total operator()(int64_t, int64_t first, int64_t end, int64_t stride) const {
    Total mine{};
    for (int64_t i = first; i < end; i += stride) mine += body(i);
    return mine;
  }
};

struct ColumnPlan {
  int64_t rows = 0, cols = 0;
  int64_t chunks = 1;  // row chunks
  int64_t chunk = 0;   // rows per chunk (the last may be shorter)
  WT_HD int64_t tiles() const { return ceil_div(cols, kColumnTile); }
  WT_HD int64_t grid() const { return tiles() * chunks; }
  WT_HD int64_t begin(int64_t c) const { return min_i64(rows, c * chunk); }
  WT_HD int64_t end(int64_t c) const { return min_i64(rows, (c + 1) * chunk); }
};

// Chunks of about kColumnLanes * per_lane rows, at most max_partials / cols of them (at least
// one: a single chunk writes its columns' sums directly, needing no partials).
inline ColumnPlan plan_columns(int64_t rows, int64_t cols, int64_t per_lane, int64_t max_partials) {
  ColumnPlan p;
  p.rows = rows;
  p.cols = cols;
  p.chunk = piece_size(rows, kColumnLanes * per_lane, max_partials / max_i64(cols, 1));
  p.chunks = ceil_div(max_i64(rows, 1), p.chunk);
  return p;
}

// Lane `lane`'s share of column j over row chunk `chunk`: value(r, j) for its rows, in order.
template <class Acc, class Value>
WT_HD Acc column_lane_share(const Value& value, const ColumnPlan& plan, int64_t chunk, int lane,
                            int64_t j) {
  Acc mine{};
  for (int64_t r = plan.begin(chunk) + lane; r < plan.end(chunk); r += kColumnLanes)
    mine += value(r, j);
  return mine;
}

// Column j's chunk partials (partials[chunk * cols + j]) joined in chunk order.
template <class Total>
WT_HD Total column_join(const Total* partials, int64_t chunks, int64_t cols, int64_t j) {
  Total total{};
  for (int64_t c = 0; c < chunks; ++c) total += partials[c * cols + j];
  return total;
}

// Two sums at once (layer norm's dw and db, batch norm's sum(dy) and sum(dy * (x - mean))): float
// within a thread (as the host's lanes), double once partials meet.
struct Sum2f {
  float a = 0.0f, b = 0.0f;
  WT_HD Sum2f& operator+=(const Sum2f& o) {
    a += o.a;
    b += o.b;
    return *this;
  }
};

struct Sum2d {
  double a = 0.0, b = 0.0;
  Sum2d() = default;
  WT_HD Sum2d(double a_, double b_) : a(a_), b(b_) {}
  WT_HD explicit Sum2d(const Sum2f& f) : a(f.a), b(f.b) {}
  WT_HD Sum2d& operator+=(const Sum2d& o) {
    a += o.a;
    b += o.b;
    return *this;
  }
};

// Count, mean and sum of squared deviations of some values, joined by Chan et al.'s pairwise
// update: as accurate as a two-pass variance (no E[x^2] - E[x]^2 cancellation), in one read.
struct Moments {
  double n = 0.0, mean = 0.0, m2 = 0.0;
  WT_HD Moments& operator+=(const Moments& o) {
    if (o.n == 0.0) return *this;
    if (n == 0.0) return *this = o;
    const double total = n + o.n, delta = o.mean - mean;
    mean += delta * (o.n / total);
    m2 += o.m2 + delta * delta * (n * o.n / total);
    n = total;
    return *this;
  }
};

}  // namespace wt::kern
