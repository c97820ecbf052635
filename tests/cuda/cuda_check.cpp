// Checks the CUDA operators and the NCCL communicator against the host implementations on a real
// GPU. Built whenever CMake finds CUDA, so CI compiles and links this code; it exits with 77
// (ctest: skipped) when the machine has no GPU, as CI's machines have none.
#include <cuda_runtime.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

#include "comm/cuda/nccl_communicator.hpp"
#include "ops/cuda/cuda_ops.hpp"
#include "ops/host/conv2d.hpp"
#include "ops/host/gemm.hpp"
#include "tensor/rng.hpp"

namespace {

int failures = 0;

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst,
                     std::abs(double(got[i]) - want[i]) / std::max(1.0, std::abs(double(want[i]))));
  std::printf("%-24s max relative difference %.3g %s\n", what, worst, worst < 1e-4 ? "ok" : "FAIL");
  failures += worst >= 1e-4;
}

std::vector<float> random_vector(size_t n, wt::Rng& rng) {
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

float* to_device(const std::vector<float>& v) {
  float* d = nullptr;
  cudaMalloc(&d, v.size() * sizeof(float));
  cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice);
  return d;
}

std::vector<float> to_host(const float* d, size_t n) {
  std::vector<float> v(n);
  cudaMemcpy(v.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
  return v;
}

void check_gemm_and_conv() {
  wt::Rng rng(1);
  wt::cuda::CudaOps ops;
  const int64_t m = 64, n = 96, k = 80;
  auto a = random_vector(m * k, rng), b = random_vector(k * n, rng);
  std::vector<float> c(m * n, 0.0f);
  wt::ops::gemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
  float *da = to_device(a), *db = to_device(b), *dc = to_device(c);
  ops.gemm(false, false, m, n, k, 1.0f, da, k, db, n, 0.0f, dc, n);
  expect_close(to_host(dc, m * n), c, "cuBLAS sgemm");

  wt::ops::Conv2dGeometry g{};
  g.batch = 4;
  g.in_channels = 3;
  g.in_h = g.in_w = 12;
  g.out_channels = 8;
  g.kernel = 3;
  g.stride = 1;
  g.padding = 1;
  auto x = random_vector(g.batch * g.in_channels * g.in_h * g.in_w, rng);
  auto w = random_vector(g.out_channels * g.in_channels * g.kernel * g.kernel, rng);
  auto bias = random_vector(g.out_channels, rng);
  std::vector<float> y(g.batch * g.out_channels * g.out_h() * g.out_w());
  const int64_t chunk = wt::ops::conv2d_chunk(g);
  std::vector<float> ws(wt::ops::conv2d_workspace_floats(g, chunk));
  wt::ops::conv2d_forward(g, x.data(), w.data(), bias.data(), y.data(), ws.data(), chunk);
  float *dx = to_device(x), *dw = to_device(w), *dbias = to_device(bias), *dy = to_device(y);
  ops.conv2d_forward(g, dx, dw, dbias, dy);
  expect_close(to_host(dy, y.size()), y, "cuDNN conv2d forward");
  for (float* p : {da, db, dc, dx, dw, dbias, dy}) cudaFree(p);
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
  check_gemm_and_conv();
  check_nccl_allreduce();
  Kokkos::finalize();
  MPI_Finalize();
  return failures ? 1 : 0;
}
