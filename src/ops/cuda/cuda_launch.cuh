#pragma once
// The GPU launchers of the portable kernels (ops/portable/), the counterparts of
// ops/host/host_for.hpp: grid-stride loops, so any n fits a bounded grid, queued on the caller's
// stream. Sums across many indices are cuda_reduce.cuh's fixed-shape trees.
#include <cuda_runtime.h>

#include <cstdint>

#include "util/cuda_check.hpp"

namespace wt::cuda {

constexpr int kThreads = 256;

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

// Pass one: body.four(q) for the n / 4 quads, 16-byte accesses; the last n % 4 elements by
// body(i) on the grid's first threads.
template <class Body>
__global__ void each4_kernel(int64_t quads, int64_t n, Body body) {
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (int64_t q = first; q < quads; q += int64_t(gridDim.x) * blockDim.x) body.four(q);
  if (4 * quads + first < n) body(4 * quads + first);
}

// body(i) for i in [0, n), four elements a thread through 16-byte loads and stores where the
// functor's arrays are all 16-byte aligned (the allocator's blocks are; a view into one may not
// be), else one a thread: the same arithmetic either way.
template <class Body>
void cuda_for4(cudaStream_t stream, int64_t n, const Body& body) {
  if (n <= 0) return;
  if (!body.aligned()) return cuda_for(stream, n, body);
  const int64_t quads = n / 4;
  each4_kernel<<<blocks_for(quads > 0 ? quads : 1), kThreads, 0, stream>>>(quads, n, body);
  WT_CUDA_CHECK(cudaGetLastError());
}

// body(plane, p) over planes x pixels: planes on the grid's second dimension, pixels on the first,
// so no index is divided (an NCHW tensor's (sample, channel) planes).
template <class Body>
__global__ void planes_kernel(int64_t planes, int64_t pixels, Body body) {
  for (int64_t plane = blockIdx.y; plane < planes; plane += gridDim.y)
    for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < pixels;
         p += int64_t(gridDim.x) * blockDim.x)
      body(plane, p);
}

template <class Body>
void cuda_for_planes(cudaStream_t stream, int64_t planes, int64_t pixels, const Body& body) {
  if (planes <= 0 || pixels <= 0) return;
  const dim3 grid(unsigned(blocks_for(pixels)), unsigned(planes < 65535 ? planes : 65535));
  planes_kernel<<<grid, kThreads, 0, stream>>>(planes, pixels, body);
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

}  // namespace wt::cuda
