#pragma once
// The GPU's parallel sums: many blocks, each a fixed slice of the values, joined by fixed trees
// (the structure is ops/portable/tree_reduce.hpp's, tested on the host). Two launches: the blocks'
// partial sums into a small buffer that CudaOps owns (made once with the object, so no launch
// allocates and a stream capture sees only kernels), then one fixed-order join per segment. The
// result is bitwise the same on every run, CUDA graphs or not.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "ops/portable/tree_reduce.hpp"
#include "util/cuda_check.hpp"

namespace wt::cuda {

// The buffer a reduction's block partials go through: device memory owned by CudaOps, reused by
// every reduction on its stream (stream order keeps one reduction's join before the next's writes).
struct Partials {
  void* data = nullptr;
  size_t bytes = 0;
  template <class T>
  int64_t capacity() const {
    return static_cast<int64_t>(bytes / sizeof(T));
  }
  template <class T>
  T* as(int64_t count, const char* op) const {
    if (count > capacity<T>())
      throw std::length_error(std::string(op) + ": " + std::to_string(count) +
                              " partial sums do not fit the reduction buffer (" +
                              std::to_string(capacity<T>()) + ")");
    return static_cast<T*>(data);
  }
};

// Every thread's value joined by the block's tree; every thread gets the total.
template <class Total>
__device__ Total block_tree(const Total& mine) {
  // Raw storage: __shared__ variables take no constructors.
  __shared__ alignas(16) unsigned char storage[sizeof(Total) * kern::kTreeThreads];
  Total* v = reinterpret_cast<Total*>(storage);
  v[threadIdx.x] = mine;
  __syncthreads();
  for (int width = kern::kTreeThreads / 2; width > 0; width /= 2) {
    kern::tree_level(v, width, int(threadIdx.x));
    __syncthreads();
  }
  const Total total = v[0];
  __syncthreads();  // the storage may be used again by the caller's next tree
  return total;
}

// A segment's `count` block partials joined by one block (every thread gets the total).
template <class Total>
__device__ Total join_partials(const Total* partials, int64_t count) {
  return block_tree(kern::combine_share(partials, count, int(threadIdx.x), kern::kTreeThreads));
}

// Pass one: block b of the grid sums its slice of segment b / blocks (share(segment, first, end,
// stride): a thread's Total over its indices) into partials[b].
template <class Total, class Share>
__global__ void segment_partials_kernel(kern::SegmentPlan plan, Share share, Total* partials) {
  const int64_t segment = blockIdx.x / plan.blocks, block = blockIdx.x % plan.blocks;
  const Total total = block_tree(
      share(segment, plan.begin(block) + threadIdx.x, plan.end(block), kern::kTreeThreads));
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Pass two: one block per segment joins its partials; finish(segment, total) on thread 0.
template <class Total, class Finish>
__global__ void segment_join_kernel(int64_t blocks, const Total* partials, Finish finish) {
  const Total total = join_partials(partials + blockIdx.x * blocks, blocks);
  if (threadIdx.x == 0) finish(int64_t(blockIdx.x), total);
}

template <class Total, class Share>
void launch_segment_partials(cudaStream_t stream, const kern::SegmentPlan& plan, const Share& share,
                             Total* partials) {
  segment_partials_kernel<Total>
      <<<unsigned(plan.grid()), kern::kTreeThreads, 0, stream>>>(plan, share, partials);
  WT_CUDA_CHECK(cudaGetLastError());
}

// finish(segment, total) of each segment's sum over the plan's indices.
template <class Total, class Share, class Finish>
void cuda_reduce_segments(cudaStream_t stream, const kern::SegmentPlan& plan, const Share& share,
                          const Finish& finish, const Partials& buffer, const char* op) {
  if (plan.segments <= 0) return;
  Total* partials = buffer.as<Total>(plan.grid(), op);
  launch_segment_partials(stream, plan, share, partials);
  segment_join_kernel<Total>
      <<<unsigned(plan.segments), kern::kTreeThreads, 0, stream>>>(plan.blocks, partials, finish);
  WT_CUDA_CHECK(cudaGetLastError());
}

template <class Finish>
struct FinishFlat {
  Finish finish;
  template <class Total>
  __device__ void operator()(int64_t, const Total& total) const {
    finish(total);
  }
};

// A flat sum: body(i) for i in [0, n) added into a Total, about per_thread values a thread;
// finish(total) on one thread.
template <class Total, class Body, class Finish>
void cuda_reduce(cudaStream_t stream, int64_t n, int64_t per_thread, const Body& body,
                 const Finish& finish, const Partials& buffer, const char* op) {
  const kern::SegmentPlan plan = kern::plan_segments(1, n, per_thread, buffer.capacity<Total>());
  cuda_reduce_segments<Total>(stream, plan, kern::FlatShare<Total, Body>{body},
                              FinishFlat<Finish>{finish}, buffer, op);
}

// Column sums: a block sums kColumnTile columns over one chunk of rows (value(r, j): an Acc per
// element; its lanes joined as Total); one chunk finishes directly, several go through partials
// joined in chunk order by one thread per column. finish(j, total).
template <class Total, class Acc, class Value, class Finish>
__global__ void column_partials_kernel(kern::ColumnPlan plan, Value value, Finish finish,
                                       Total* partials) {
  __shared__ alignas(16) unsigned char storage[sizeof(Total) * kern::kTreeThreads];
  Total* lanes = reinterpret_cast<Total*>(storage);
  const int64_t tile = blockIdx.x % plan.tiles(), chunk = blockIdx.x / plan.tiles();
  const int tx = int(threadIdx.x) % kern::kColumnTile, lane = int(threadIdx.x) / kern::kColumnTile;
  const int64_t j = tile * kern::kColumnTile + tx;
  Total* column = lanes + tx * kern::kColumnLanes;
  column[lane] =
      j < plan.cols ? Total(kern::column_lane_share<Acc>(value, plan, chunk, lane, j)) : Total{};
  __syncthreads();
  for (int width = kern::kColumnLanes / 2; width > 0; width /= 2) {
    kern::tree_level(column, width, lane);
    __syncthreads();
  }
  if (lane != 0 || j >= plan.cols) return;
  if (plan.chunks == 1)
    finish(j, column[0]);
  else
    partials[chunk * plan.cols + j] = column[0];
}

template <class Total, class Finish>
__global__ void column_join_kernel(int64_t chunks, int64_t cols, const Total* partials,
                                   Finish finish) {
  const int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (j >= cols) return;
  finish(j, kern::column_join(partials, chunks, cols, j));
}

template <class Total, class Acc, class Value, class Finish>
void cuda_reduce_columns(cudaStream_t stream, int64_t rows, int64_t cols, const Value& value,
                         const Finish& finish, const Partials& buffer, const char* op) {
  if (rows <= 0 || cols <= 0) return;
  constexpr int64_t kPerLane = 16;
  const kern::ColumnPlan plan = kern::plan_columns(rows, cols, kPerLane, buffer.capacity<Total>());
  Total* partials = plan.chunks > 1 ? buffer.as<Total>(plan.chunks * cols, op) : nullptr;
  column_partials_kernel<Total, Acc>
      <<<unsigned(plan.grid()), kern::kTreeThreads, 0, stream>>>(plan, value, finish, partials);
  WT_CUDA_CHECK(cudaGetLastError());
  if (plan.chunks == 1) return;
  column_join_kernel<Total>
      <<<unsigned(kern::ceil_div(cols, kern::kTreeThreads)), kern::kTreeThreads, 0, stream>>>(
          plan.chunks, cols, partials, finish);
  WT_CUDA_CHECK(cudaGetLastError());
}

// Row sums a warp a row (kern::kRowLanes lanes): the lanes' values joined by shuffles in
// tree_level's tree (lane t adds lane t + width's value, width 16, 8, ..., 1), then broadcast
// from lane 0, so every lane holds the same total.
__device__ inline double shuffle_down(double v, int width) {
  return __shfl_down_sync(0xffffffffu, v, width);
}
__device__ inline double shuffle_from_first(double v) { return __shfl_sync(0xffffffffu, v, 0); }
__device__ inline kern::Sum2d shuffle_down(const kern::Sum2d& v, int width) {
  return kern::Sum2d(shuffle_down(v.a, width), shuffle_down(v.b, width));
}
__device__ inline kern::Sum2d shuffle_from_first(const kern::Sum2d& v) {
  return kern::Sum2d(shuffle_from_first(v.a), shuffle_from_first(v.b));
}

template <class Value>
__device__ Value lane_tree(Value v) {
  for (int width = kern::kRowLanes / 2; width > 0; width /= 2) v += shuffle_down(v, width);
  return shuffle_from_first(v);
}

// body(r, lane) for every row r, a warp a row (the grid's warps stride over the rows).
template <class Body>
__global__ void row_lanes_kernel(int64_t rows, Body body) {
  const int lane = int(threadIdx.x) % kern::kRowLanes;
  const int64_t warps = int64_t(gridDim.x) * blockDim.x / kern::kRowLanes;
  for (int64_t r = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / kern::kRowLanes; r < rows;
       r += warps)
    body(r, lane);
}

template <class Body>
void cuda_for_row_lanes(cudaStream_t stream, int64_t rows, const Body& body) {
  if (rows <= 0) return;
  const int64_t blocks = kern::ceil_div(rows * kern::kRowLanes, kern::kTreeThreads);
  row_lanes_kernel<<<unsigned(kern::min_i64(blocks, 65535)), kern::kTreeThreads, 0, stream>>>(rows,
                                                                                              body);
  WT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wt::cuda
