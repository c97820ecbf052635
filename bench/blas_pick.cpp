// Single-core sgemm throughput on the GEMM shapes that LeNet's conv and linear layers produce, for
// one BLAS backend chosen at compile time (-DWT_BLAS_OPENBLAS, _BLIS, _DNNL or _XSMM). Built by
// blas_pick.sh, one binary per installed library, so the libraries' cblas symbols never clash.
// All shapes are row-major C[M,N] (+)= op(A)[M,K] * op(B)[K,N], as the layers call them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#if defined(WT_BLAS_OPENBLAS)
#include <cblas.h>
static const char* kLibrary = "OpenBLAS";
static void gemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float beta,
                 float* c) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0f, a, ta ? m : k, b, tb ? k : n, beta, c, n);
}
#elif defined(WT_BLAS_BLIS)
#include <blis.h>
static const char* kLibrary = "BLIS";
static void gemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float beta,
                 float* c) {
  float one = 1.0f;
  // BLIS takes general strides; row-major means row stride = leading dimension, column stride 1.
  bli_sgemm(ta ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, m, n,
            k, &one, const_cast<float*>(a), ta ? m : k, 1, const_cast<float*>(b), tb ? k : n, 1,
            &beta, c, n, 1);
}
#elif defined(WT_BLAS_DNNL)
#include <dnnl.h>
static const char* kLibrary = "oneDNN";
static void gemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float beta,
                 float* c) {
  // dnnl_sgemm is row-major.
  dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, beta, c,
             n);
}
#elif defined(WT_BLAS_XSMM)
#include <libxsmm.h>
static const char* kLibrary = "libxsmm";
static void gemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float beta,
                 float* c) {
  // libxsmm is column-major: row-major C = A*B is column-major C^T = B^T * A^T.
  const libxsmm_blasint M = n, N = m, K = k, lda = tb ? k : n, ldb = ta ? m : k, ldc = n;
  const float alpha = 1.0f;
  const char transa = tb ? 'T' : 'N', transb = ta ? 'T' : 'N';
  libxsmm_sgemm(&transa, &transb, &M, &N, &K, &alpha, b, &lda, a, &ldb, &beta, c, &ldc);
}
#else
#error "define one of WT_BLAS_OPENBLAS, WT_BLAS_BLIS, WT_BLAS_DNNL, WT_BLAS_XSMM"
#endif

// This thread's CPU time: on a shared machine wall time mostly measures the other processes.
static double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Shape {
  const char* what;
  bool ta, tb;
  int m, n, k;
};

int main(int argc, char** argv) {
  const double min_seconds = argc > 1 ? std::atof(argv[1]) : 0.3;
  const char* setting = argc > 2 ? argv[2] : "default";
  // Per-sample and chunk-of-8 forms of each conv GEMM (chunk = samples side by side in one im2col).
  const std::vector<Shape> shapes = {
      {"conv1 fwd  1 sample  W*col", false, false, 32, 784, 25},
      {"conv1 fwd  8 samples W*col", false, false, 32, 6272, 25},
      {"conv1 wgrad 1 sample  dY*col^T", false, true, 32, 25, 784},
      {"conv1 wgrad 1 sample  col*dY^T", false, true, 25, 32, 784},
      {"conv1 wgrad 8 samples dY*col^T", false, true, 32, 25, 6272},
      {"conv2 fwd  1 sample  W*col", false, false, 64, 196, 800},
      {"conv2 fwd  8 samples W*col", false, false, 64, 1568, 800},
      {"conv2 fwd 64 samples W*col", false, false, 64, 12544, 800},
      {"conv2 wgrad 1 sample  dY*col^T", false, true, 64, 800, 196},
      {"conv2 wgrad 8 samples dY*col^T", false, true, 64, 800, 1568},
      {"conv2 dgrad 1 sample  W^T*dY", true, false, 800, 196, 64},
      {"conv2 dgrad 8 samples W^T*dY", true, false, 800, 1568, 64},
      {"fc1 fwd   X*W^T (64x3136x256)", false, true, 64, 256, 3136},
      {"fc1 wgrad dY^T*X", true, false, 256, 3136, 64},
      {"fc1 dgrad dY*W", false, false, 64, 3136, 256},
  };
  for (const Shape& s : shapes) {
    std::vector<float> a(size_t(s.m) * s.k), b(size_t(s.k) * s.n), c(size_t(s.m) * s.n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float((i * 7) % 13) * 0.01f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = float((i * 5) % 11) * 0.01f;
    const float beta = s.tb ? 1.0f : 0.0f;  // weight gradients accumulate
    for (int w = 0; w < 3; ++w) gemm(s.ta, s.tb, s.m, s.n, s.k, a.data(), b.data(), beta, c.data());
    // Best of several timed windows: the machine is shared, the best window is the library's speed.
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      int iters = 0;
      const double t0 = thread_seconds();
      double elapsed = 0;
      do {
        gemm(s.ta, s.tb, s.m, s.n, s.k, a.data(), b.data(), beta, c.data());
        ++iters;
        elapsed = thread_seconds() - t0;
      } while (elapsed < min_seconds / 5);
      best = std::min(best, elapsed / iters);
    }
    const double gflops = 2.0 * s.m * s.n * s.k / best * 1e-9;
    std::printf("| %s | %s | %s (M=%d N=%d K=%d%s%s) | %.1f |\n", kLibrary, setting, s.what, s.m,
                s.n, s.k, s.ta ? " A^T" : "", s.tb ? " B^T" : "", gflops);
  }
  return 0;
}
