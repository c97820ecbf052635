// Each host kernel that now runs as a Kokkos parallel_for (src/ops/host/, through host_for) against
// the plain loop it replaced (copied here as it was), side by side in one run: n floats per call,
// the median of many timed calls of each, alternating so machine noise hits both alike.
// Usage: kokkos_kernels [n] [repetitions]
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

#include "ops/host/elementwise.hpp"
#include "ops/host/fast_math.hpp"
#include "ops/host/rows.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double time_once(const std::function<void()>& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// The loops as they were before Kokkos (same flags, same restrict qualifiers).
namespace loop {
void relu_forward(const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
void relu_backward(const float* __restrict y, const float* __restrict dy, float* __restrict dx,
                   int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}
void gelu_forward(const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * wt::ops::normal_cdf_approx(x[i]);
}
void gelu_backward(const float* __restrict x, const float* __restrict dy, float* __restrict dx,
                   int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float pdf = 0.39894228040143268f * wt::ops::exp_approx(-0.5f * x[i] * x[i]);
    dx[i] = dy[i] * (wt::ops::normal_cdf_approx(x[i]) + x[i] * pdf);
  }
}
void scale(const float* __restrict x, float s, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = s * x[i];
}
void multiply(const float* __restrict a, const float* __restrict b, float* __restrict y,
              int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}
void sum2(const float* __restrict a, const float* __restrict b, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
void accumulate(const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}
void add_row(const float* __restrict x, const float* __restrict row, int64_t rows, int64_t width,
             float* __restrict y) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) y[r * width + j] = x[r * width + j] + row[j];
}
}  // namespace loop

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : (1 << 20);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 200;
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::vector<float> a(n), b(n), c(n);
  for (int64_t i = 0; i < n; ++i) {
    a[size_t(i)] = float((i * 37) % 101) / 50.0f - 1.0f;
    b[size_t(i)] = float((i * 11) % 97) / 48.0f - 1.0f;
  }
  const int64_t width = 768, rows = n / width;
  struct Case {
    const char* name;
    std::function<void()> kokkos, before;
  };
  float* x = a.data();
  float* y = b.data();
  float* z = c.data();
  const std::vector<Case> cases = {
      {"relu_forward", [&] { wt::ops::relu_forward(x, z, n); },
       [&] { loop::relu_forward(x, z, n); }},
      {"relu_backward", [&] { wt::ops::relu_backward(x, y, z, n); },
       [&] { loop::relu_backward(x, y, z, n); }},
      {"gelu_forward", [&] { wt::ops::gelu_forward(x, z, n); },
       [&] { loop::gelu_forward(x, z, n); }},
      {"gelu_backward", [&] { wt::ops::gelu_backward(x, y, z, n); },
       [&] { loop::gelu_backward(x, y, z, n); }},
      {"scale", [&] { wt::ops::scale(x, 0.5f, z, n); }, [&] { loop::scale(x, 0.5f, z, n); }},
      {"multiply", [&] { wt::ops::multiply(x, y, z, n); }, [&] { loop::multiply(x, y, z, n); }},
      {"sum_arrays (2)",
       [&] {
         const float* xs[2] = {x, y};
         wt::ops::sum_arrays(xs, 2, z, n);
       },
       [&] { loop::sum2(x, y, z, n); }},
      {"accumulate", [&] { wt::ops::accumulate(x, z, n); }, [&] { loop::accumulate(x, z, n); }},
      {"add_row (768 wide)", [&] { wt::ops::add_row(x, y, rows, width, z); },
       [&] { loop::add_row(x, y, rows, width, z); }},
  };
  std::printf("host threads (Kokkos %s): %d; n = %lld floats, %d calls each, median us\n",
              typeid(Kokkos::DefaultHostExecutionSpace).name(),
              Kokkos::DefaultHostExecutionSpace::concurrency(), (long long)n, reps);
  std::printf(
      "| kernel | loop before (us) | Kokkos (us) | Kokkos / loop |\n|---|---:|---:|---:|\n");
  for (const Case& k : cases) {
    std::vector<double> tk, tb;
    for (int r = 0; r < reps; ++r) {
      tk.push_back(time_once(k.kokkos));
      tb.push_back(time_once(k.before));
    }
    const double mk = median(tk) * 1e6, mb = median(tb) * 1e6;
    std::printf("| %s | %.1f | %.1f | %.2f |\n", k.name, mb, mk, mk / mb);
  }
  return 0;
}
