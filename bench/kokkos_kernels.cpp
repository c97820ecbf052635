// Each host kernel that now runs as a Kokkos parallel_for (src/ops/host/, through host_for) against
// the plain loop it replaced (copied here as it was), side by side in one run: n floats per call,
// the median of many timed calls of each, alternating so machine noise hits both alike.
// Usage: kokkos_kernels [n] [repetitions]
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "ops/host/attention.hpp"
#include "ops/host/batchnorm.hpp"
#include "ops/host/elementwise.hpp"
#include "ops/host/layer_norm.hpp"
#include "ops/host/optimizer_updates.hpp"
#include "ops/host/rows.hpp"
#include "ops/host/softmax_xent.hpp"
#include "ops/portable/fast_math.hpp"

// Batch norm and layer norm as they were (kokkos_kernels.sh takes the files from git history).
namespace wt::ops_loop {
void layer_norm_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t dim,
                        double eps, float* y, float* stats);
void batchnorm_forward_train(const float* x, const wt::ops::BatchNormShape& s, const float* gamma,
                             const float* beta, float eps, float momentum, float* running_mean,
                             float* running_var, float* mean, float* invstd, float* y);
void batchnorm_backward(const float* x, const float* dy, const wt::ops::BatchNormShape& s,
                        const float* gamma, const float* mean, const float* invstd,
                        bool batch_stats, float* dx, float* dgamma, float* dbeta);
void layer_norm_backward(const float* x, const float* dy, const float* w, const float* stats,
                         int64_t rows, int64_t dim, float* dw, float* db, float* dx);
void scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                      float* table);
wt::ops::XentStats softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n,
                                        int64_t k, float* grad);
// The attention kernels' own rows in a plain loop (kokkos_kernels.sh writes them from the kernel
// file: before, the same loop sat inline in the attention layer).
void causal_softmax(float* p, int64_t T);
void causal_softmax_backward(const float* p, float* g, int64_t T);
}  // namespace wt::ops_loop

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
void gather_rows(const float* table, const int64_t* ids, int64_t rows, int64_t width, float* y) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(y + r * width, table + ids[r] * width, sizeof(float) * size_t(width));
}
// The optimizer updates as they were in ops/host/optimizers.cpp (SGD with momentum, not first
// step, not Nesterov; AdamW).
void sgd_momentum(int64_t n, float* __restrict w, const float* __restrict g, float* __restrict b,
                  float lr, float wd, float mu) {
  for (int64_t i = 0; i < n; ++i) {
    float d = g[i] + wd * w[i];
    const float buf = mu * b[i] + d;
    b[i] = buf;
    d = buf;
    w[i] = w[i] - lr * d;
  }
}
void adamw(int64_t n, float* __restrict w, const float* __restrict g, float* __restrict m,
           float* __restrict v, const wt::ops::AdamWUpdate& k) {
  const float b1 = k.b1, one_minus_b1 = k.one_minus_b1, b2 = k.b2, one_minus_b2 = k.one_minus_b2;
  const float bias2_sqrt = k.bias2_sqrt, eps = k.eps, decay = k.decay, step_size = k.step_size;
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = b1 * m[i] + one_minus_b1 * gi;
    const float vi = b2 * v[i] + one_minus_b2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) / bias2_sqrt + eps;
    w[i] = w[i] * decay - step_size * mi / denom;
  }
}
}  // namespace loop

struct Case {
  const char* name;
  std::function<void()> kokkos, before;
};

// The kernels' arguments: buffers of about n floats each.
struct Inputs {
  explicit Inputs(int64_t n_floats)
      : n(n_floats),
        a(size_t(n)),
        b(size_t(n)),
        c(size_t(n)),
        m(size_t(n)),
        v(size_t(n)),
        stats(size_t(2 * (n / width))),
        ids(size_t(n / width)),
        labels(size_t(n / 10)) {
    for (int64_t i = 0; i < n; ++i) {
      a[size_t(i)] = float((i * 37) % 101) / 50.0f - 1.0f;
      b[size_t(i)] = float((i * 11) % 97) / 48.0f - 1.0f;
    }
    for (int64_t r = 0; r < rows; ++r) ids[size_t(r)] = (r * 7919) % rows;
    for (size_t r = 0; r < labels.size(); ++r) labels[r] = int32_t((r * 7) % 10);
    while ((T + 1) * (T + 1) <= n) ++T;
    sgd.lr = 1e-3f;
    sgd.weight_decay = 1e-4f;
    sgd.momentum = 0.9f;
    adam.decay = 1.0f - 1e-5f;
    adam.b1 = 0.9f;
    adam.one_minus_b1 = 0.1f;
    adam.b2 = 0.999f;
    adam.one_minus_b2 = 0.001f;
    adam.step_size = 1e-3f;
    adam.bias2_sqrt = 0.03f;
    adam.eps = 1e-8f;
  }
  int64_t n;
  static constexpr int64_t width = 768;  // rows of a transformer's width
  int64_t rows = n / width;
  int64_t T = 1;  // attention: one [T, T] score matrix of about n floats
  std::vector<float> a, b, c, m, v, stats;
  std::vector<int64_t> ids;
  std::vector<int32_t> labels;  // n / 10 rows of 10 classes (softmax cross-entropy)
  wt::ops::SgdUpdate sgd;
  wt::ops::AdamWUpdate adam;
  // Batch norm on ResNet's first block: 128 samples, 64 channels of 8 x 16 (about n floats).
  wt::ops::BatchNormShape bn{n / (64 * 128), 64, 128};
  std::vector<float> gamma = std::vector<float>(64, 1.0f), beta = std::vector<float>(64, 0.0f),
                     running_mean = std::vector<float>(64, 0.0f),
                     running_var = std::vector<float>(64, 1.0f), mean = std::vector<float>(64),
                     invstd = std::vector<float>(64), dgamma = std::vector<float>(64, 0.0f),
                     dbeta = std::vector<float>(64, 0.0f);
};

// Every kernel against its baseline; the lambdas point into `in`.
std::vector<Case> kernel_cases(Inputs& in) {
  const int64_t n = in.n, rows = in.rows, width = in.width, T = in.T;
  float* x = in.a.data();
  float* y = in.b.data();
  float* z = in.c.data();
  float* m = in.m.data();
  float* v = in.v.data();
  float* stats = in.stats.data();
  const int64_t* id_ptr = in.ids.data();
  const wt::ops::SgdUpdate& sgd = in.sgd;
  const wt::ops::AdamWUpdate& adam = in.adam;
  const wt::ops::BatchNormShape bn = in.bn;
  float *bn_gamma = in.gamma.data(), *bn_beta = in.beta.data(), *bn_rm = in.running_mean.data(),
        *bn_rv = in.running_var.data(), *bn_mean = in.mean.data(), *bn_invstd = in.invstd.data(),
        *bn_dgamma = in.dgamma.data(), *bn_dbeta = in.dbeta.data();
  return {
      {"relu_forward", [=] { wt::ops::relu_forward(x, z, n); },
       [=] { loop::relu_forward(x, z, n); }},
      {"relu_backward", [=] { wt::ops::relu_backward(x, y, z, n); },
       [=] { loop::relu_backward(x, y, z, n); }},
      {"gelu_forward", [=] { wt::ops::gelu_forward(x, z, n); },
       [=] { loop::gelu_forward(x, z, n); }},
      {"gelu_backward", [=] { wt::ops::gelu_backward(x, y, z, n); },
       [=] { loop::gelu_backward(x, y, z, n); }},
      {"scale", [=] { wt::ops::scale(x, 0.5f, z, n); }, [=] { loop::scale(x, 0.5f, z, n); }},
      {"multiply", [=] { wt::ops::multiply(x, y, z, n); }, [=] { loop::multiply(x, y, z, n); }},
      {"sum_arrays (2)",
       [=] {
         const float* xs[2] = {x, y};
         wt::ops::sum_arrays(xs, 2, z, n);
       },
       [=] { loop::sum2(x, y, z, n); }},
      {"accumulate", [=] { wt::ops::accumulate(x, z, n); }, [=] { loop::accumulate(x, z, n); }},
      {"add_row (768 wide)", [=] { wt::ops::add_row(x, y, rows, width, z); },
       [=] { loop::add_row(x, y, rows, width, z); }},
      {"causal_softmax (one T x T)", [=] { wt::ops::causal_softmax(z, T); },
       [=] { wt::ops_loop::causal_softmax(z, T); }},
      {"causal_softmax_backward", [=] { wt::ops::causal_softmax_backward(x, z, T); },
       [=] { wt::ops_loop::causal_softmax_backward(x, z, T); }},
      {"layer_norm_forward (768 wide)",
       [=] { wt::ops::layer_norm_forward(x, y, y, rows, width, 1e-5, z, stats); },
       [=] { wt::ops_loop::layer_norm_forward(x, y, y, rows, width, 1e-5, z, stats); }},
      {"sgd_update (momentum)", [=] { wt::ops::sgd_update(sgd, n, z, y, m); },
       [=] { loop::sgd_momentum(n, z, y, m, sgd.lr, sgd.weight_decay, sgd.momentum); }},
      {"adamw_update", [=] { wt::ops::adamw_update(adam, n, z, y, m, v); },
       [=] { loop::adamw(n, z, y, m, v, adam); }},
      {"batchnorm_forward_train",
       [=] {
         wt::ops::batchnorm_forward_train(x, bn, bn_gamma, bn_beta, 1e-5f, 0.1f, bn_rm, bn_rv,
                                          bn_mean, bn_invstd, z);
       },
       [=] {
         wt::ops_loop::batchnorm_forward_train(x, bn, bn_gamma, bn_beta, 1e-5f, 0.1f, bn_rm, bn_rv,
                                               bn_mean, bn_invstd, z);
       }},
      {"batchnorm_backward",
       [=] {
         wt::ops::batchnorm_backward(x, y, bn, bn_gamma, bn_mean, bn_invstd, true, z, bn_dgamma,
                                     bn_dbeta);
       },
       [=] {
         wt::ops_loop::batchnorm_backward(x, y, bn, bn_gamma, bn_mean, bn_invstd, true, z,
                                          bn_dgamma, bn_dbeta);
       }},
      {"gather_rows (768 wide)", [=] { wt::ops::gather_rows(x, id_ptr, rows, width, z); },
       [=] { loop::gather_rows(x, id_ptr, rows, width, z); }},
  };
}

// The kernels of the last step of issue 11 (the rows race without care under threads, and the
// loss reduces), against the files as they were (kokkos_kernels.sh takes them from git history).
std::vector<Case> reduction_cases(Inputs& in) {
  const int64_t n = in.n, rows = in.rows, width = in.width;
  float *x = in.a.data(), *y = in.b.data(), *z = in.c.data(), *m = in.m.data(),
        *stats = in.stats.data();
  const int64_t* id_ptr = in.ids.data();
  const int32_t* labels = in.labels.data();
  const int64_t xent_rows = int64_t(in.labels.size()), wide_rows = n / 100;
  std::vector<int32_t> wide_labels(static_cast<size_t>(wide_rows));
  for (int64_t r = 0; r < wide_rows; ++r) wide_labels[size_t(r)] = int32_t((r * 37) % 100);
  const auto wide = std::make_shared<std::vector<int32_t>>(std::move(wide_labels));
  for (int64_t r = 0; r < rows; ++r) {  // layer norm's saved mean and rstd
    stats[2 * r] = 0.01f;
    stats[2 * r + 1] = 1.1f;
  }
  return {
      {"layer_norm_backward (768 wide)",
       [=] { wt::ops::layer_norm_backward(x, y, y, stats, rows, width, m, m + width, z); },
       [=] { wt::ops_loop::layer_norm_backward(x, y, y, stats, rows, width, m, m + width, z); }},
      {"scatter_add_rows (768 wide)", [=] { wt::ops::scatter_add_rows(x, id_ptr, rows, width, z); },
       [=] { wt::ops_loop::scatter_add_rows(x, id_ptr, rows, width, z); }},
      {"softmax_xent (10 classes)",
       [=] { wt::ops::softmax_xent_forward(x, labels, xent_rows, 10, z); },
       [=] { wt::ops_loop::softmax_xent_forward(x, labels, xent_rows, 10, z); }},
      {"softmax_xent (100 classes)",
       [=] { wt::ops::softmax_xent_forward(x, wide->data(), wide_rows, 100, z); },
       [=] { wt::ops_loop::softmax_xent_forward(x, wide->data(), wide_rows, 100, z); }},
  };
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : (1 << 20);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 200;
  Kokkos::ScopeGuard kokkos(argc, argv);
  Inputs inputs(n);
  std::vector<Case> cases = kernel_cases(inputs);
  for (Case& c : reduction_cases(inputs)) cases.push_back(std::move(c));
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
