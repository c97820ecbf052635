// Times LeNet's layers (batch 64, one core) through the host ops the layers call: conv2d forward
// and backward per conv at several im2col chunk sizes, then a whole training step (forward,
// backward, SGD) with the default chunk. ReLU, the loss gradient and SGD are plain loops here, as
// the real layers' share of the time is small. Built by lenet_layers.sh.
// Usage: lenet_layers [repetitions] [cpu|wall] [step]   (times are this thread's CPU time unless
// "wall")
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "ops/host/conv2d.hpp"
#include "ops/host/gemm.hpp"
#include "ops/host/pool2d.hpp"

using namespace wt::ops;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<float> randoms(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f;
  return v;
}

// This thread's CPU time in ms. On a shared machine, wall time mostly measures the other
// processes; CPU time of a single-threaded run is what the run itself costs.
double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

bool use_wall_clock = false;

// Best time of `reps` runs of fn, in milliseconds.
double best_ms(int reps, const std::function<void()>& fn) {
  fn();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto w0 = Clock::now();
    const double c0 = thread_cpu_ms();
    fn();
    const double ms = use_wall_clock
                          ? std::chrono::duration<double, std::milli>(Clock::now() - w0).count()
                          : thread_cpu_ms() - c0;
    best = std::min(best, ms);
  }
  return best;
}

void relu_forward(std::vector<float>& x) {
  for (float& v : x) v = v > 0 ? v : 0;
}
void relu_backward(const std::vector<float>& y, std::vector<float>& dy) {
  for (size_t i = 0; i < y.size(); ++i) dy[i] = y[i] > 0 ? dy[i] : 0;
}
void sgd(std::vector<float>& w, std::vector<float>& g, float lr) {
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] -= lr * g[i];
    g[i] = 0;
  }
}

Conv2dGeometry conv(int64_t batch, int64_t c, int64_t hw, int64_t oc) {
  Conv2dGeometry g;
  g.batch = batch;
  g.in_channels = c;
  g.in_h = g.in_w = hw;
  g.out_channels = oc;
  g.kernel = 5;
  g.padding = 2;
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  const Kokkos::ScopeGuard kokkos(argc, argv);  // the pooling kernels are Kokkos host loops
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  use_wall_clock = argc > 2 && std::string(argv[2]) == "wall";
  const int64_t N = 64;
  const Conv2dGeometry c1 = conv(N, 1, 28, 32), c2 = conv(N, 32, 14, 64);
  Pool2dGeometry p1{N, 32, 28, 28, 2, 2, 0}, p2{N, 64, 14, 14, 2, 2, 0};
  const int64_t F = 64 * 7 * 7, H = 256, classes = 10;

  auto x = randoms(N * 784, 1);
  auto w1 = randoms(32 * 25, 2), b1 = randoms(32, 3), w2 = randoms(64 * 800, 4),
       b2 = randoms(64, 5);
  auto w3 = randoms(H * F, 6), b3 = randoms(H, 7), w4 = randoms(classes * H, 8),
       b4 = randoms(10, 9);
  for (auto* w : {&w2, &w3, &w4})
    for (float& v : *w) v *= 0.05f;
  std::vector<float> gw1(w1.size()), gb1(b1.size()), gw2(w2.size()), gb2(b2.size()), gw3(w3.size()),
      gb3(b3.size()), gw4(w4.size()), gb4(b4.size());
  std::vector<float> y1(N * 32 * 784), q1(N * 32 * 196), y2(N * 64 * 196), q2(N * F), h(N * H),
      logits(N * classes);
  std::vector<float> dq2(q2.size()), dy2(y2.size()), dq1(q1.size()), dy1(y1.size()), dh(h.size()),
      dlogits(logits.size());
  auto grad_out1 = randoms(y1.size(), 10), grad_out2 = randoms(y2.size(), 11);

  std::printf("gemm backend: %s, batch %ld, best of %d, %s time\n\n", gemm_backend(), long(N), reps,
              use_wall_clock ? "wall-clock" : "thread CPU");
  std::printf("| layer | chunk | workspace MB | forward ms | backward ms | fwd+bwd ms |\n");
  std::printf("|---|---|---|---|---|---|\n");
  const bool step_only = argc > 3 && std::string(argv[3]) == "step";  // for profiling the step
  for (int64_t chunk : {1, 2, 4, 8}) {
    if (step_only) break;
    for (int which = 1; which <= 2; ++which) {
      const Conv2dGeometry& g = which == 1 ? c1 : c2;
      std::vector<float> ws(conv2d_workspace_floats(g, chunk));
      const float* in = which == 1 ? x.data() : q1.data();
      float* out = which == 1 ? y1.data() : y2.data();
      const float* w = which == 1 ? w1.data() : w2.data();
      float* gw = which == 1 ? gw1.data() : gw2.data();
      float* gb = which == 1 ? gb1.data() : gb2.data();
      const float* dy = which == 1 ? grad_out1.data() : grad_out2.data();
      // The first conv needs no input gradient (the executor passes din = nullptr for the input).
      float* dx = which == 1 ? nullptr : dq1.data();
      double f = best_ms(reps, [&] { conv2d_forward(g, in, w, nullptr, out, ws.data(), chunk); });
      double b =
          best_ms(reps, [&] { conv2d_backward(g, in, w, dy, dx, gw, gb, ws.data(), chunk); });
      std::printf("| conv%d | %ld | %.1f | %.2f | %.2f | %.2f |\n", which, long(chunk),
                  ws.size() * 4e-6, f, b, f + b);
    }
  }

  const int64_t chunk = conv2d_chunk(c2);
  std::vector<float> ws(
      std::max(conv2d_workspace_floats(c1, chunk), conv2d_workspace_floats(c2, chunk)));
  auto step = [&] {
    conv2d_forward(c1, x.data(), w1.data(), b1.data(), y1.data(), ws.data(), chunk);
    relu_forward(y1);
    maxpool2d_forward(p1, y1.data(), q1.data());
    conv2d_forward(c2, q1.data(), w2.data(), b2.data(), y2.data(), ws.data(), chunk);
    relu_forward(y2);
    maxpool2d_forward(p2, y2.data(), q2.data());
    for (int64_t n = 0; n < N; ++n) std::copy(b3.begin(), b3.end(), h.begin() + n * H);
    gemm(false, true, N, H, F, 1.0f, q2.data(), w3.data(), 1.0f, h.data());
    relu_forward(h);
    for (int64_t n = 0; n < N; ++n) std::copy(b4.begin(), b4.end(), logits.begin() + n * classes);
    gemm(false, true, N, classes, H, 1.0f, h.data(), w4.data(), 1.0f, logits.data());
    for (size_t i = 0; i < logits.size(); ++i)
      dlogits[i] = logits[i] * (1.0f / N);  // stand-in loss
    // backward
    gemm(true, false, classes, H, N, 1.0f, dlogits.data(), h.data(), 1.0f, gw4.data());
    gemm(false, false, N, H, classes, 1.0f, dlogits.data(), w4.data(), 0.0f, dh.data());
    relu_backward(h, dh);
    gemm(true, false, H, F, N, 1.0f, dh.data(), q2.data(), 1.0f, gw3.data());
    gemm(false, false, N, F, H, 1.0f, dh.data(), w3.data(), 0.0f, dq2.data());
    maxpool2d_backward(p2, y2.data(), dq2.data(), dy2.data());
    relu_backward(y2, dy2);
    conv2d_backward(c2, q1.data(), w2.data(), dy2.data(), dq1.data(), gw2.data(), gb2.data(),
                    ws.data(), chunk);
    maxpool2d_backward(p1, y1.data(), dq1.data(), dy1.data());
    relu_backward(y1, dy1);
    conv2d_backward(c1, x.data(), w1.data(), dy1.data(), nullptr, gw1.data(), gb1.data(), ws.data(),
                    chunk);
    sgd(w1, gw1, 0.01f), sgd(b1, gb1, 0.01f), sgd(w2, gw2, 0.01f), sgd(b2, gb2, 0.01f);
    sgd(w3, gw3, 0.01f), sgd(b3, gb3, 0.01f), sgd(w4, gw4, 0.01f), sgd(b4, gb4, 0.01f);
  };
  const double ms = best_ms(reps, step);
  std::printf(
      "\nwhole LeNet step (fwd+bwd+SGD), chunk %ld: %.2f ms per batch of %ld = %.0f samples/s\n",
      long(chunk), ms, long(N), N / ms * 1e3);
  return 0;
}
