#include "ops/host/conv2d.hpp"

#include <algorithm>
#include <cstring>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "ops/host/gemm.hpp"

namespace wt::ops {
namespace {

// Row copies and adds are the inner loops of im2col/col2im. Rows are short (a LeNet conv2 output
// row is 14 floats), so a library memcpy call per row would cost more than the copy itself: with
// AVX-512 a row is one or two masked vector moves; otherwise plain loops.
#if defined(__AVX512F__)
inline __mmask16 tail_mask(int64_t count) { return static_cast<__mmask16>((1u << count) - 1u); }

inline void copy_row(float* __restrict dst, const float* __restrict src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_loadu_ps(src + i));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(dst + i, m, _mm512_maskz_loadu_ps(m, src + i));
  }
}

inline void add_row(float* __restrict dst, const float* __restrict src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_add_ps(_mm512_loadu_ps(dst + i), _mm512_loadu_ps(src + i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 sum =
        _mm512_add_ps(_mm512_maskz_loadu_ps(m, dst + i), _mm512_maskz_loadu_ps(m, src + i));
    _mm512_mask_storeu_ps(dst + i, m, sum);
  }
}
#else
inline void copy_row(float* __restrict dst, const float* __restrict src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

inline void add_row(float* __restrict dst, const float* __restrict src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}
#endif

// Sum of n floats in 16 independent partial sums: a single running sum is one long dependency
// chain the compiler may not reorder (no -ffast-math), which made conv1's bias gradient (1.6M
// floats per batch) cost about as much as its weight-gradient GEMM.
float sum_of(const float* __restrict v, int64_t n) {
  float partial[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) partial[j] += v[i + j];
  float sum = 0.0f;
  for (; i < n; ++i) sum += v[i];
  for (float p : partial) sum += p;
  return sum;
}

int64_t padded_h(const Conv2dGeometry& g) { return g.in_h + 2 * g.padding; }
int64_t padded_w(const Conv2dGeometry& g) { return g.in_w + 2 * g.padding; }

}  // namespace

int64_t im2col_scratch_floats(const Conv2dGeometry& g) {
  return g.padding > 0 ? g.in_channels * padded_h(g) * padded_w(g) : 0;
}

int64_t conv2d_chunk(const Conv2dGeometry& g, int64_t requested) {
  // Measured at LeNet's shapes (bench/README.md): once a GEMM is ~200 columns wide, widening it
  // further by putting more samples in one im2col gains nothing and costs cache, so a chunk is the
  // fewest samples that reach 192 output pixels (1 for LeNet; 4 for a 7x7 feature map).
  constexpr int64_t kTargetColumns = 192, kMaxChunk = 16;
  const int64_t automatic =
      (kTargetColumns + g.out_pixels() - 1) / std::max<int64_t>(1, g.out_pixels());
  const int64_t chunk = requested > 0 ? requested : std::min(automatic, kMaxChunk);
  return std::max<int64_t>(1, std::min(chunk, g.batch));
}

int64_t conv2d_workspace_floats(const Conv2dGeometry& g, int64_t chunk) {
  const int64_t cols = chunk * g.out_pixels();
  // Column matrix, an [OC, chunk*pixels] staging matrix when samples share one GEMM, and the
  // padded image that im2col/col2im work through.
  return g.col_rows() * cols + (chunk > 1 ? g.out_channels * cols : 0) + im2col_scratch_floats(g);
}

void im2col(const Conv2dGeometry& g, const float* x, float* col, int64_t ld_col, float* scratch) {
  const int64_t k = g.kernel, s = g.stride, Ho = g.out_h(), Wo = g.out_w();
  const int64_t Hp = padded_h(g), Wp = padded_w(g);
  // Copying the sample into a zero-bordered image first leaves the unfolding without bounds checks.
  const float* xp = x;
  if (g.padding > 0) {
    std::memset(scratch, 0, sizeof(float) * g.in_channels * Hp * Wp);
    for (int64_t c = 0; c < g.in_channels; ++c)
      for (int64_t h = 0; h < g.in_h; ++h)
        std::memcpy(scratch + (c * Hp + h + g.padding) * Wp + g.padding,
                    x + (c * g.in_h + h) * g.in_w, sizeof(float) * g.in_w);
    xp = scratch;
  }
  for (int64_t c = 0; c < g.in_channels; ++c)
    for (int64_t ki = 0; ki < k; ++ki)
      for (int64_t kj = 0; kj < k; ++kj) {
        float* row = col + ((c * k + ki) * k + kj) * ld_col;
        const float* src = xp + (c * Hp + ki) * Wp + kj;
        for (int64_t oh = 0; oh < Ho; ++oh) {
          const float* line = src + oh * s * Wp;
          if (s == 1) {
            copy_row(row + oh * Wo, line, Wo);
          } else {
            for (int64_t ow = 0; ow < Wo; ++ow) row[oh * Wo + ow] = line[ow * s];
          }
        }
      }
}

void col2im(const Conv2dGeometry& g, const float* col, int64_t ld_col, float* dx, float* scratch) {
  const int64_t k = g.kernel, s = g.stride, Ho = g.out_h(), Wo = g.out_w();
  const int64_t Hp = padded_h(g), Wp = padded_w(g);
  // Accumulate into a zero-bordered image, then copy its interior out: dx needs no clearing and
  // no second read-modify-write pass.
  float* dxp = g.padding > 0 ? scratch : dx;
  std::memset(dxp, 0, sizeof(float) * g.in_channels * Hp * Wp);
  for (int64_t c = 0; c < g.in_channels; ++c)
    for (int64_t ki = 0; ki < k; ++ki)
      for (int64_t kj = 0; kj < k; ++kj) {
        const float* row = col + ((c * k + ki) * k + kj) * ld_col;
        float* dst = dxp + (c * Hp + ki) * Wp + kj;
        for (int64_t oh = 0; oh < Ho; ++oh) {
          float* line = dst + oh * s * Wp;
          if (s == 1) {
            add_row(line, row + oh * Wo, Wo);
          } else {
            for (int64_t ow = 0; ow < Wo; ++ow) line[ow * s] += row[oh * Wo + ow];
          }
        }
      }
  if (g.padding > 0)
    for (int64_t c = 0; c < g.in_channels; ++c)
      for (int64_t h = 0; h < g.in_h; ++h)
        copy_row(dx + (c * g.in_h + h) * g.in_w,
                 scratch + (c * Hp + h + g.padding) * Wp + g.padding, g.in_w);
}

void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias,
                    float* y, float* workspace, int64_t chunk) {
  const int64_t K = g.col_rows(), P = g.out_pixels(), OC = g.out_channels;
  const int64_t in_size = g.in_channels * g.in_h * g.in_w, out_size = OC * P;
  float* col = workspace;
  float* staged = workspace + K * chunk * P;
  float* scratch = staged + (chunk > 1 ? OC * chunk * P : 0);
  for (int64_t n0 = 0; n0 < g.batch; n0 += chunk) {
    const int64_t S = std::min(chunk, g.batch - n0), ld = S * P;
    for (int64_t s = 0; s < S; ++s) im2col(g, x + (n0 + s) * in_size, col + s * P, ld, scratch);
    // A single sample's [OC, P] result is already NCHW; a chunk's [OC, S*P] is staged and
    // scattered.
    float* result = S == 1 ? y + n0 * out_size : staged;
    gemm(false, false, OC, ld, K, 1.0f, w, K, col, ld, 0.0f, result, ld);
    for (int64_t s = 0; s < S; ++s) {
      float* yn = y + (n0 + s) * out_size;
      for (int64_t oc = 0; oc < OC; ++oc) {
        const float b = bias ? bias[oc] : 0.0f;
        const float* src = result + oc * ld + s * P;
        float* dst = yn + oc * P;
        if (S == 1) {
          if (bias)
            for (int64_t i = 0; i < P; ++i) dst[i] += b;
        } else {
          for (int64_t i = 0; i < P; ++i) dst[i] = src[i] + b;
        }
      }
    }
  }
}

void conv2d_backward(const Conv2dGeometry& g, const float* x, const float* w, const float* dy,
                     float* dx, float* dw, float* dbias, float* workspace, int64_t chunk) {
  const int64_t K = g.col_rows(), P = g.out_pixels(), OC = g.out_channels;
  const int64_t in_size = g.in_channels * g.in_h * g.in_w, out_size = OC * P;
  float* col = workspace;
  float* staged = workspace + K * chunk * P;
  float* scratch = staged + (chunk > 1 ? OC * chunk * P : 0);
  if (dbias && dw) {
    for (int64_t n = 0; n < g.batch; ++n)
      for (int64_t oc = 0; oc < OC; ++oc) {
        dbias[oc] += sum_of(dy + n * out_size + oc * P, P);
      }
  }
  for (int64_t n0 = 0; n0 < g.batch; n0 += chunk) {
    const int64_t S = std::min(chunk, g.batch - n0), ld = S * P;
    // dy of the chunk as one [OC, S*P] matrix (a single sample's NCHW slice already is one).
    const float* dy_chunk = dy + n0 * out_size;
    if (S > 1) {
      for (int64_t s = 0; s < S; ++s)
        for (int64_t oc = 0; oc < OC; ++oc)
          std::memcpy(staged + oc * ld + s * P, dy + (n0 + s) * out_size + oc * P,
                      sizeof(float) * P);
      dy_chunk = staged;
    }
    if (dw) {
      for (int64_t s = 0; s < S; ++s) im2col(g, x + (n0 + s) * in_size, col + s * P, ld, scratch);
      // dw[OC, K] += dy[OC, S*P] * col[K, S*P]^T
      gemm(false, true, OC, K, ld, 1.0f, dy_chunk, ld, col, ld, 1.0f, dw, K);
    }
    if (!dx) continue;
    // dcol[K, S*P] = w[OC, K]^T * dy[OC, S*P], written over col (no longer needed), then folded.
    gemm(true, false, K, ld, OC, 1.0f, w, K, dy_chunk, ld, 0.0f, col, ld);
    for (int64_t s = 0; s < S; ++s) col2im(g, col + s * P, ld, dx + (n0 + s) * in_size, scratch);
  }
}

}  // namespace wt::ops
