// Checks the CUDA backend and the NCCL communicator against the host implementations on a real
// GPU: every op of the ops interface on random data (ops_parity.cpp), ReLU over more elements than
// one grid covers, and an NCCL allreduce; then prints two figures, cuBLAS sgemm GFLOP/s at 4096^3
// and the host gemm's at 1024^3 for reference. Built whenever CMake finds CUDA, so CI compiles and
// links this code; it exits with 77 (ctest: skipped) when the machine has no GPU, as CI's machines
// have none. tools/gpu-check.sh runs it on a GPU machine (docs/gpu-check.md).
#include "util/cuda_check.hpp"

#include <cuda_runtime.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "comm/cuda/nccl_communicator.hpp"
#include "cuda/ops_parity.hpp"
#include "ops/cuda/cuda_ops.hpp"
#include "ops/host/elementwise.hpp"
#include "ops/host/gemm.hpp"
#include "ops/host/host_ops.hpp"
#include "tensor/rng.hpp"

namespace {

int failures = 0;

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst,
                     std::abs(double(got[i]) - want[i]) / std::max(1.0, std::abs(double(want[i]))));
  const bool ok = got.size() == want.size() && worst < 1e-4;
  std::printf("%-34s max relative difference %.3g %s\n", what, worst, ok ? "ok" : "FAIL");
  failures += !ok;
}

std::vector<float> random_vector(size_t n, wt::Rng& rng) {
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

float* to_device(const std::vector<float>& v) {
  float* d = nullptr;
  WT_CUDA_CHECK(cudaMalloc(&d, v.size() * sizeof(float)));
  WT_CUDA_CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

std::vector<float> to_host(const float* d, size_t n) {
  std::vector<float> v(n);
  WT_CUDA_CHECK(cudaMemcpy(v.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  return v;
}

// Device memory for the ops-parity harness: plain cudaMalloc, and copies after the queued work.
class CudaMemory final : public wt::parity::Memory {
 public:
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    WT_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
  }
  void upload(void* dst, const void* src, size_t bytes) override {
    WT_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  }
  void download(void* dst, const void* src, size_t bytes) override {
    WT_CUDA_CHECK(cudaDeviceSynchronize());
    WT_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  }
  void release(void* p) override { cudaFree(p); }
};

// Every op of the interface, CUDA against host on random data (tests/cuda/ops_parity.cpp).
void check_every_op(const wt::cuda::CudaOps& ops) {
  wt::HostOps host;
  CudaMemory memory;
  for (const auto& o : wt::parity::compare_backends(host, ops, memory, 1, stdout))
    failures += !o.passed();
}

// train.precision = "bf16": cuBLAS and cuDNN with bf16 inputs against the host's oneDNN bf16.
void check_bf16_products() {
  const wt::HostOps host(wt::Precision::Bf16);
  const wt::cuda::CudaOps ops(nullptr, false, wt::Precision::Bf16);
  CudaMemory memory;
  for (const auto& o : wt::parity::compare_bf16_products(host, ops, memory, 3, stdout))
    failures += !o.passed();
}

void check_relu(const wt::cuda::CudaOps& ops, wt::Rng& rng) {
  // More elements than one grid covers (65535 blocks of 256 threads), so the grid-stride loop runs.
  const int64_t n = 17'000'001;
  auto x = random_vector(n, rng), dy = random_vector(n, rng);
  for (int64_t i = 0; i < n; i += 1000) x[i] = 0.0f;  // the boundary: relu'(0) = 0 on both paths
  std::vector<float> y(n), dx(n);
  wt::ops::relu_forward(x.data(), y.data(), n);
  wt::ops::relu_backward(y.data(), dy.data(), dx.data(), n);
  float *d_x = to_device(x), *d_y = to_device(std::vector<float>(n, -1.0f));
  float *d_dy = to_device(dy), *d_dx = to_device(std::vector<float>(n, -1.0f));
  ops.relu_forward(d_x, d_y, n);
  ops.relu_backward(d_y, d_dy, d_dx, n);
  expect_close(to_host(d_y, n), y, "ReLU forward");
  expect_close(to_host(d_dx, n), dx, "ReLU backward");
  for (float* p : {d_x, d_y, d_dy, d_dx}) cudaFree(p);
}

// The multi-block reductions (ops/cuda/cuda_reduce.cuh) captured as a CUDA graph and replayed
// give bitwise what the same calls give issued one by one; capturing them at all proves that no
// launch allocates or synchronises. Batch norm, layer norm, column sums and the non-finite count at
// resnet's and the transformer's sizes, on a stream of its own.
void check_reductions_in_a_graph(cudaStream_t stream, wt::Rng& rng) {
  wt::cuda::CudaOps ops(stream);
  const wt::ops::BatchNormShape s{128, 32, 28 * 28};
  const int64_t n = s.n * s.c * s.hw, rows = 4096, dim = 256, values = 3'000'017;
  auto host_x = random_vector(n, rng);
  host_x[12345] = NAN;  // one non-finite value for the count
  std::vector<float*> inputs = {to_device(host_x),
                                to_device(random_vector(n, rng)),
                                to_device(random_vector(s.c, rng)),
                                to_device(random_vector(s.c, rng)),
                                to_device(random_vector(rows * dim, rng)),
                                to_device(random_vector(rows * dim, rng)),
                                to_device(random_vector(dim, rng)),
                                to_device(std::vector<float>(2 * rows, 0.5f))};
  float *x = inputs[0], *dy = inputs[1], *gamma = inputs[2], *beta = inputs[3];
  float *lx = inputs[4], *ldy = inputs[5], *lw = inputs[6], *stats = inputs[7];
  // Outputs: y, dx (n); mean, invstd, running mean/var, dgamma, dbeta (c); dw, db, sums (dim);
  // the count. Zeroed before each run, since several accumulate.
  const size_t floats = size_t(2 * n + 6 * s.c + 3 * dim + wt::ops::kCountFloats);
  auto run = [&](float* out) {
    float *y = out, *dx = out + n, *per_channel = out + 2 * n, *dw = per_channel + 6 * s.c;
    float* c = per_channel;
    ops.batchnorm_forward_train(x, s, gamma, beta, 1e-5f, 0.1f, c + 2 * s.c, c + 3 * s.c, c,
                                c + s.c, y);
    ops.batchnorm_backward(x, dy, s, gamma, c, c + s.c, true, dx, c + 4 * s.c, c + 5 * s.c);
    ops.layer_norm_backward(lx, ldy, lw, stats, rows, dim, dw, dw + dim, nullptr);
    ops.add_column_sums(ldy, rows, dim, dw + 2 * dim);
    ops.count_nonfinite_into(x, std::min<int64_t>(n, values), dw + 3 * dim);
  };
  float *eager = nullptr, *replayed = nullptr;
  WT_CUDA_CHECK(cudaMalloc(&eager, floats * sizeof(float)));
  WT_CUDA_CHECK(cudaMalloc(&replayed, floats * sizeof(float)));
  WT_CUDA_CHECK(cudaMemsetAsync(eager, 0, floats * sizeof(float), stream));
  WT_CUDA_CHECK(cudaMemsetAsync(replayed, 0, floats * sizeof(float), stream));
  run(eager);
  WT_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  WT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  run(replayed);
  WT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  WT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  WT_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  WT_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto a = to_host(eager, floats), b = to_host(replayed, floats);
  const bool same = std::memcmp(a.data(), b.data(), floats * sizeof(float)) == 0;
  std::printf("%-34s %s\n", "reductions: graph replay = eager", same ? "bitwise equal ok" : "FAIL");
  failures += !same;
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  for (float* p : inputs) cudaFree(p);
  cudaFree(eager);
  cudaFree(replayed);
}

// cuBLAS sgemm GFLOP/s on n^3 (CUDA events, after warm-up), with a sampled check of the product.
void time_cublas_gemm(const wt::cuda::CudaOps& ops, wt::Rng& rng, int64_t n) {
  auto a = random_vector(n * n, rng), b = random_vector(n * n, rng);
  float *da = to_device(a), *db = to_device(b), *dc = nullptr;
  WT_CUDA_CHECK(cudaMalloc(&dc, n * n * sizeof(float)));
  for (int i = 0; i < 3; ++i) ops.gemm(false, false, n, n, n, 1.0f, da, n, db, n, 0.0f, dc, n);
  cudaEvent_t start, stop;
  WT_CUDA_CHECK(cudaEventCreate(&start));
  WT_CUDA_CHECK(cudaEventCreate(&stop));
  const int reps = 20;
  WT_CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i) ops.gemm(false, false, n, n, n, 1.0f, da, n, db, n, 0.0f, dc, n);
  WT_CUDA_CHECK(cudaEventRecord(stop));
  WT_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  WT_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  const double seconds = ms / 1e3 / reps;
  std::printf(
      "figure: cuBLAS sgemm %lldx%lldx%lld FP32: %.0f GFLOP/s (%.3f ms per product, "
      "mean of %d after 3 warm-ups)\n",
      (long long)n, (long long)n, (long long)n, 2.0 * n * n * n / seconds / 1e9, seconds * 1e3,
      reps);
  // 512 entries against a double-precision dot product: catches TF32 or a transposed result.
  auto c = to_host(dc, n * n);
  std::vector<float> got, want;
  for (int s = 0; s < 512; ++s) {
    const int64_t i = rng.below(n), j = rng.below(n);
    double sum = 0;
    for (int64_t p = 0; p < n; ++p) sum += double(a[i * n + p]) * b[p * n + j];
    got.push_back(c[i * n + j]);
    want.push_back(float(sum));
  }
  expect_close(got, want, "cuBLAS sgemm 4096^3 (512 sampled)");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  for (float* p : {da, db, dc}) cudaFree(p);
}

// The host gemm's GFLOP/s on n^3 for reference: the median of 15 timed products after 5 warm-ups
// (the first products pay for the GEMM library's thread start-up and first touch of the pages).
void time_host_gemm(wt::Rng& rng, int64_t n) {
  auto a = random_vector(n * n, rng), b = random_vector(n * n, rng);
  std::vector<float> c(n * n);
  for (int i = 0; i < 5; ++i)
    wt::ops::gemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  std::vector<double> seconds;
  for (int i = 0; i < 15; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    wt::ops::gemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  const char* omp_threads = std::getenv("OMP_NUM_THREADS");
  std::printf(
      "figure: host gemm (%s) %lldx%lldx%lld FP32: %.0f GFLOP/s (median of %zu: %.3f ms; "
      "fastest %.0f, slowest %.0f GFLOP/s; %u hardware threads, OMP_NUM_THREADS=%s)\n",
      wt::ops::gemm_backend(), (long long)n, (long long)n, (long long)n,
      2.0 * n * n * n / median / 1e9, seconds.size(), median * 1e3,
      2.0 * n * n * n / seconds.front() / 1e9, 2.0 * n * n * n / seconds.back() / 1e9,
      std::thread::hardware_concurrency(), omp_threads ? omp_threads : "unset");
}

void check_nccl_allreduce() {
  wt::NcclCommunicator comm(MPI_COMM_WORLD, 0);
  std::vector<float> v(1000, float(comm.rank() + 1));
  float* d = to_device(v);
  comm.allreduce_sum(d, static_cast<int64_t>(v.size()), 0);
  const float want = comm.size() * (comm.size() + 1) / 2.0f;
  expect_close(to_host(d, v.size()), std::vector<float>(v.size(), want), "NCCL allreduce");
  cudaFree(d);
}

// An error unwinding a rank must not wait in ncclCommDestroy for peers that are elsewhere
// (util/unwinding.hpp): the communicator is aborted instead. Destroyed while an exception is in
// flight, it must return promptly and leave the device usable for a new communicator.
void check_nccl_abort_while_unwinding() {
  auto comm = std::make_unique<wt::NcclCommunicator>(MPI_COMM_WORLD, 0);
  std::vector<float> v(1000, 1.0f);
  float* d = to_device(v);
  comm->allreduce_sum(d, static_cast<int64_t>(v.size()), 0);
  const auto start = std::chrono::steady_clock::now();
  try {
    struct DropOnExit {
      std::unique_ptr<wt::NcclCommunicator>& comm;
      ~DropOnExit() { comm.reset(); }  // runs while the exception below unwinds
    } drop{comm};
    throw std::runtime_error("an error on this rank");
  } catch (const std::runtime_error&) {
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("NCCL communicator aborted while unwinding in %.3f s %s\n", seconds,
              seconds < 5 ? "ok" : "TOO SLOW");
  if (seconds >= 5) ++failures;
  wt::NcclCommunicator again(MPI_COMM_WORLD, 0);  // the device still takes a new one
  again.allreduce_sum(d, static_cast<int64_t>(v.size()), 0);
  expect_close(to_host(d, v.size()), std::vector<float>(v.size(), float(again.size())),
               "NCCL allreduce after an abort");
  cudaFree(d);
}

void run_checks() {
  cudaDeviceProp prop{};
  WT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  std::printf("device 0: %s, compute capability %d.%d, %d SMs; CUDA runtime %d, driver %d\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount, runtime, driver);
  wt::Rng rng(1);
  wt::cuda::CudaOps ops;
  check_every_op(ops);
  check_bf16_products();
  check_relu(ops, rng);
  cudaStream_t stream = nullptr;  // outlives the CudaOps made on it
  WT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  check_reductions_in_a_graph(stream, rng);
  WT_CUDA_CHECK(cudaStreamDestroy(stream));
  check_nccl_allreduce();
  check_nccl_abort_while_unwinding();
  time_cublas_gemm(ops, rng, 4096);
  time_host_gemm(rng, 1024);
  WT_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device on this machine (the CUDA code compiled and linked)\n");
    MPI_Finalize();
    return 77;
  }
  Kokkos::initialize();
  try {
    run_checks();
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    ++failures;
  }
  Kokkos::finalize();
  std::printf("%s: %d check(s) failed\n", failures ? "FAILED" : "PASSED", failures);
  MPI_Finalize();
  return failures ? 1 : 0;
}
