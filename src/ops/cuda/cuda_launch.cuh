#pragma once
// The GPU launchers of the portable kernels (ops/portable/), the counterparts of
// ops/host/host_for.hpp: grid-stride loops, so any n fits a bounded grid, queued on the caller's
// stream. The reductions use one block and a fixed-shape tree, so a sum comes out bitwise the
// same on every run (CUDA graphs or not) with no atomics and no scratch memory.
#include <cuda_runtime.h>

#include <cstdint>

#include "util/cuda_check.hpp"

namespace wt::cuda {

constexpr int kThreads = 256;
constexpr int kReduceThreads = 256;  // one block; a power of two for the tree

inline int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

template <class Body>
__global__ void each_kernel(int64_t n, Body body) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    body(i);
}

template <class Body>
__global__ void rows_cols_kernel(int64_t rows, int64_t cols, Body body) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    body(i / cols, i % cols);
}

template <class Body>
__global__ void columns_kernel(int64_t rows, int64_t cols, Body body) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < cols;
       j += int64_t(gridDim.x) * blockDim.x)
    for (int64_t r = 0; r < rows; ++r) body(r, j);
}

// body(i) for i in [0, n), in any order.
template <class Body>
void cuda_for(cudaStream_t stream, int64_t n, const Body& body) {
  if (n <= 0) return;
  each_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, body);
  WT_CUDA_CHECK(cudaGetLastError());
}

// An element kernel body(r, j) over [rows, cols].
template <class Body>
void cuda_for_rows_cols(cudaStream_t stream, int64_t rows, int64_t cols, const Body& body) {
  if (rows <= 0 || cols <= 0) return;
  rows_cols_kernel<<<blocks_for(rows * cols), kThreads, 0, stream>>>(rows, cols, body);
  WT_CUDA_CHECK(cudaGetLastError());
}

// A column kernel body(r, j): one thread per column, its rows in increasing order.
template <class Body>
void cuda_for_columns(cudaStream_t stream, int64_t rows, int64_t cols, const Body& body) {
  if (rows <= 0 || cols <= 0) return;
  columns_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(rows, cols, body);
  WT_CUDA_CHECK(cudaGetLastError());
}

// Sums value(i) over [0, n) in one block: thread t takes i = t, t + T, ... in order, then a fixed
// tree joins the threads' partials; finish(total) runs on thread 0. Value: a type with +=.
template <class Value, class Body, class Finish>
__global__ void reduce_kernel(int64_t n, Body body, Finish finish) {
  // Raw storage: __shared__ variables take no constructors.
  __shared__ alignas(16) unsigned char storage[sizeof(Value) * kReduceThreads];
  Value* partial = reinterpret_cast<Value*>(storage);
  Value mine{};
  for (int64_t i = threadIdx.x; i < n; i += kReduceThreads) mine += body(i);
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int width = kReduceThreads / 2; width > 0; width /= 2) {
    if (int(threadIdx.x) < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) finish(partial[0]);
}

template <class Value, class Body, class Finish>
void cuda_reduce(cudaStream_t stream, int64_t n, const Body& body, const Finish& finish) {
  reduce_kernel<Value><<<1, kReduceThreads, 0, stream>>>(n, body, finish);
  WT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wt::cuda
