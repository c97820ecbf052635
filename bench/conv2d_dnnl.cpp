// Times LeNet's convolutions (batch 64, one core) three ways: the im2col + GEMM path, oneDNN
// convolution primitives on plain nchw/oihw, and oneDNN primitives in the layouts it picks
// (format_tag::any) with reorders at the NCHW boundary. Times are this thread's CPU time, best of
// `repetitions`. Built and run by conv2d_dnnl.sh.
// Usage: conv2d_dnnl [repetitions]
#include "ops/host/conv2d_dnnl.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <vector>

#include "ops/host/conv2d.hpp"

using namespace wt::ops;

namespace {

std::vector<float> randoms(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f;
  return v;
}

double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

double best_ms(int reps, const std::function<void()>& fn) {
  fn();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double c0 = thread_cpu_ms();
    fn();
    best = std::min(best, thread_cpu_ms() - c0);
  }
  return best;
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
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  std::printf("| conv | path | forward ms | backward ms (dw, db%s) |\n|---|---|---|---|\n", "");
  int which = 0;
  for (const Conv2dGeometry& g : {conv(64, 1, 28, 32), conv(64, 32, 14, 64)}) {
    ++which;
    // The first conv needs no input gradient (the executor passes din = nullptr for the input).
    const bool need_dx = which > 1;
    auto x = randoms(g.batch * g.in_channels * g.in_h * g.in_w, 1);
    auto w = randoms(g.out_channels * g.col_rows(), 2), b = randoms(g.out_channels, 3);
    auto dy = randoms(g.batch * g.out_channels * g.out_pixels(), 4);
    std::vector<float> y(dy.size()), dx(x.size()), dw(w.size()), db(b.size());
    float* dxp = need_dx ? dx.data() : nullptr;
    const int64_t chunk = conv2d_chunk(g);
    std::vector<float> ws(conv2d_workspace_floats(g, chunk));
    const double f0 = best_ms(
        reps, [&] { conv2d_forward(g, x.data(), w.data(), b.data(), y.data(), ws.data(), chunk); });
    const double b0 = best_ms(reps, [&] {
      conv2d_backward(g, x.data(), w.data(), dy.data(), dxp, dw.data(), db.data(), ws.data(),
                      chunk);
    });
    std::printf("| conv%d | im2col | %.2f | %.2f |\n", which, f0, b0);
    for (DnnlConvLayout layout : {DnnlConvLayout::kPlain, DnnlConvLayout::kBlocked}) {
      const char* name = layout == DnnlConvLayout::kPlain ? "oneDNN nchw" : "oneDNN any";
      if (!conv2d_dnnl_supports(g, true, layout)) {
        std::printf("| conv%d | %s | unsupported | |\n", which, name);
        continue;
      }
      const double f = best_ms(
          reps, [&] { conv2d_dnnl_forward(g, x.data(), w.data(), b.data(), y.data(), layout); });
      const double bk = best_ms(reps, [&] {
        conv2d_dnnl_backward(g, x.data(), w.data(), dy.data(), dxp, dw.data(), db.data(), layout);
      });
      std::printf("| conv%d | %s | %.2f | %.2f |\n", which, name, f, bk);
    }
  }
  return 0;
}
