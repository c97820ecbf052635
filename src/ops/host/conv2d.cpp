#include "ops/host/conv2d.hpp"

#include <algorithm>
#include <cstring>

#include "ops/host/gemm.hpp"

namespace wt::ops {
namespace {

// Output columns [lo, hi) of one kernel column kj whose input column lies inside the image.
struct ValidRange {
  int64_t lo, hi;
};
ValidRange valid_outputs(int64_t out_len, int64_t in_len, int64_t stride, int64_t padding,
                         int64_t offset) {
  // in = out * stride - padding + offset must lie in [0, in_len).
  const int64_t first = padding - offset;
  const int64_t lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  const int64_t last = in_len - 1 + padding - offset;
  const int64_t hi = last < 0 ? 0 : std::min(out_len, last / stride + 1);
  return {std::min(lo, hi), hi};
}

}  // namespace

int64_t conv2d_chunk(const Conv2dGeometry& g, int64_t requested) {
  // Measured at LeNet's shapes (bench/README.md): chunks of a few samples make GEMMs wide enough
  // while the column matrix still fits in L2/L3; gains flatten beyond ~4 samples.
  int64_t chunk = requested > 0 ? requested : 4;
  return std::max<int64_t>(1, std::min(chunk, g.batch));
}

int64_t conv2d_workspace_floats(const Conv2dGeometry& g, int64_t chunk) {
  const int64_t cols = chunk * g.out_pixels();
  // Column matrix, plus an [OC, chunk*pixels] staging matrix when samples share one GEMM.
  return g.col_rows() * cols + (chunk > 1 ? g.out_channels * cols : 0);
}

void im2col(const Conv2dGeometry& g, const float* x, float* col, int64_t ld_col) {
  const int64_t k = g.kernel, s = g.stride, p = g.padding, H = g.in_h, W = g.in_w;
  const int64_t Ho = g.out_h(), Wo = g.out_w();
  for (int64_t c = 0; c < g.in_channels; ++c) {
    const float* xc = x + c * H * W;
    for (int64_t ki = 0; ki < k; ++ki) {
      for (int64_t kj = 0; kj < k; ++kj) {
        float* row = col + ((c * k + ki) * k + kj) * ld_col;
        const ValidRange v = valid_outputs(Wo, W, s, p, kj);
        for (int64_t oh = 0; oh < Ho; ++oh) {
          float* dst = row + oh * Wo;
          const int64_t ih = oh * s - p + ki;
          if (ih < 0 || ih >= H) {
            std::fill(dst, dst + Wo, 0.0f);
            continue;
          }
          std::fill(dst, dst + v.lo, 0.0f);
          std::fill(dst + v.hi, dst + Wo, 0.0f);
          const float* src = xc + ih * W - p + kj;
          if (s == 1) {
            for (int64_t ow = v.lo; ow < v.hi; ++ow) dst[ow] = src[ow];
          } else {
            for (int64_t ow = v.lo; ow < v.hi; ++ow) dst[ow] = src[ow * s];
          }
        }
      }
    }
  }
}

void col2im_add(const Conv2dGeometry& g, const float* col, int64_t ld_col, float* dx) {
  const int64_t k = g.kernel, s = g.stride, p = g.padding, H = g.in_h, W = g.in_w;
  const int64_t Ho = g.out_h(), Wo = g.out_w();
  for (int64_t c = 0; c < g.in_channels; ++c) {
    float* dxc = dx + c * H * W;
    for (int64_t ki = 0; ki < k; ++ki) {
      for (int64_t kj = 0; kj < k; ++kj) {
        const float* row = col + ((c * k + ki) * k + kj) * ld_col;
        const ValidRange v = valid_outputs(Wo, W, s, p, kj);
        for (int64_t oh = 0; oh < Ho; ++oh) {
          const int64_t ih = oh * s - p + ki;
          if (ih < 0 || ih >= H) continue;
          const float* src = row + oh * Wo;
          float* dst = dxc + ih * W - p + kj;
          if (s == 1) {
            for (int64_t ow = v.lo; ow < v.hi; ++ow) dst[ow] += src[ow];
          } else {
            for (int64_t ow = v.lo; ow < v.hi; ++ow) dst[ow * s] += src[ow];
          }
        }
      }
    }
  }
}

void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias,
                    float* y, float* workspace, int64_t chunk) {
  const int64_t K = g.col_rows(), P = g.out_pixels(), OC = g.out_channels;
  const int64_t in_size = g.in_channels * g.in_h * g.in_w, out_size = OC * P;
  float* col = workspace;
  float* staged = workspace + K * chunk * P;
  for (int64_t n0 = 0; n0 < g.batch; n0 += chunk) {
    const int64_t S = std::min(chunk, g.batch - n0), ld = S * P;
    for (int64_t s = 0; s < S; ++s) im2col(g, x + (n0 + s) * in_size, col + s * P, ld);
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
  if (dbias) {
    for (int64_t n = 0; n < g.batch; ++n)
      for (int64_t oc = 0; oc < OC; ++oc) {
        const float* d = dy + n * out_size + oc * P;
        float sum = 0.0f;
        for (int64_t i = 0; i < P; ++i) sum += d[i];
        dbias[oc] += sum;
      }
  }
  if (dx) std::memset(dx, 0, sizeof(float) * g.batch * in_size);
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
    for (int64_t s = 0; s < S; ++s) im2col(g, x + (n0 + s) * in_size, col + s * P, ld);
    // dw[OC, K] += dy[OC, S*P] * col[K, S*P]^T
    gemm(false, true, OC, K, ld, 1.0f, dy_chunk, ld, col, ld, 1.0f, dw, K);
    if (!dx) continue;
    // dcol[K, S*P] = w[OC, K]^T * dy[OC, S*P], written over col (no longer needed), then folded.
    gemm(true, false, K, ld, OC, 1.0f, w, K, dy_chunk, ld, 0.0f, col, ld);
    for (int64_t s = 0; s < S; ++s) col2im_add(g, col + s * P, ld, dx + (n0 + s) * in_size);
  }
}

}  // namespace wt::ops
