#include "ops/host/conv2d_winograd.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "ops/conv_algorithm.hpp"

namespace wt::ops {
namespace {

constexpr int kTile = 6;              // input tile side: 2 outputs + 5 taps - 1
constexpr int kTaps = kTile * kTile;  // products per channel pair and tile
constexpr int kOut = 2;               // outputs per tile side (forward)
constexpr int kKernel = 5;
constexpr int kLanes = static_cast<int>(kChannelBlock);  // channels per block, one vector
// Tiles transformed and multiplied together, so that their transforms (36 x tiles x channels,
// in and out) stay in cache between the stages: few in the convolutions, whose products keep
// their outputs in registers over 32-64 channels, more in the weight gradient, whose products
// sum over the tiles. Measured with bench/conv2d_winograd.sh (a multiple of 6, the product's
// rows, and never a stride of 4 KiB, whose 36 streams would share cache sets).
constexpr int64_t kTilesPerGroup = 18;
constexpr int64_t kTilesPerGradientGroup = 54;

// A vector of the target's width: 16 floats on AVX-512, 8 on AVX, 4 elsewhere (SSE, NEON); a
// channel block (16) is one to four of them. GCC's and Clang's vector extensions lower the
// arithmetic to the target's instructions (a wider type would be split into scalar code).
#if defined(__AVX512F__)
constexpr int kVecLanes = 16;
#elif defined(__AVX__)
constexpr int kVecLanes = 8;
#else
constexpr int kVecLanes = 4;
#endif
static_assert(kLanes % kVecLanes == 0, "a channel block is whole vectors");
using Vec = float __attribute__((vector_size(kVecLanes * sizeof(float))));
inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, const Vec& v) { std::memcpy(p, &v, sizeof v); }

// G (6x5), the filter transform of F(2, 5) with points 0, 1, -1, 2, -2, infinity.
constexpr float kG[kTile][kKernel] = {{1.f / 4, 0, 0, 0, 0},
                                      {-1.f / 6, -1.f / 6, -1.f / 6, -1.f / 6, -1.f / 6},
                                      {-1.f / 6, 1.f / 6, -1.f / 6, 1.f / 6, -1.f / 6},
                                      {1.f / 24, 1.f / 12, 1.f / 6, 1.f / 3, 2.f / 3},
                                      {1.f / 24, -1.f / 12, 1.f / 6, -1.f / 3, 2.f / 3},
                                      {0, 0, 0, 0, 1}};
// A^T (5x6) of F(5, 2): the weight gradient's output transform, same points.
constexpr float kA5t[kKernel][kTile] = {{1, 1, 1, 1, 1, 0},
                                        {0, 1, -1, 2, -2, 0},
                                        {0, 1, 1, 4, 4, 0},
                                        {0, 1, -1, 8, -8, 0},
                                        {0, 1, 1, 16, 16, 1}};

// r = B^T d for six vectors d[k * ds] (r[i * rs]); B^T is shared by F(2, 5) and F(5, 2).
inline void apply_bt(const float* d, int64_t ds, float* r, int64_t rs) {
  for (int h = 0; h < kLanes; h += kVecLanes, d += kVecLanes, r += kVecLanes) {
    const Vec d0 = load(d), d1 = load(d + ds), d2 = load(d + 2 * ds), d3 = load(d + 3 * ds),
              d4 = load(d + 4 * ds), d5 = load(d + 5 * ds);
    store(r, 4 * d0 - 5 * d2 + d4);
    store(r + rs, d3 + d4 - 4 * (d1 + d2));
    store(r + 2 * rs, d4 - d3 + 4 * (d1 - d2));
    store(r + 3 * rs, d4 - d2 + 2 * (d3 - d1));
    store(r + 4 * rs, d4 - d2 + 2 * (d1 - d3));
    store(r + 5 * rs, d5 + 4 * d1 - 5 * d3);
  }
}

// o = A^T m of F(2, 5) for six vectors m[k * ms] (two results, o[i * os]).
inline void apply_at(const float* m, int64_t ms, float* o, int64_t os) {
  for (int h = 0; h < kLanes; h += kVecLanes, m += kVecLanes, o += kVecLanes) {
    const Vec m0 = load(m), m1 = load(m + ms), m2 = load(m + 2 * ms), m3 = load(m + 3 * ms),
              m4 = load(m + 4 * ms), m5 = load(m + 5 * ms);
    store(o, m0 + m1 + m2 + m3 + m4);
    store(o + os, m1 - m2 + 2 * (m3 - m4) + m5);
  }
}

// r = G g of F(5, 2) for two vectors g[k * gs] (six results, r[i * rs]): the gradient tile's
// transform in the weight gradient.
inline void apply_g2(const float* g, int64_t gs, float* r, int64_t rs) {
  for (int h = 0; h < kLanes; h += kVecLanes, g += kVecLanes, r += kVecLanes) {
    const Vec g0 = load(g), g1 = load(g + gs);
    store(r, g0 * (1.f / 4));
    store(r + rs, (g0 + g1) * (-1.f / 6));
    store(r + 2 * rs, (g0 - g1) * (-1.f / 6));
    store(r + 3 * rs, (g0 + 2 * g1) * (1.f / 24));
    store(r + 4 * rs, (g0 - 2 * g1) * (1.f / 24));
    store(r + 5 * rs, g1);
  }
}

// The products' register block: rows (tiles, or input channels in the weight gradient) by
// vectors of output channels: 6 x 4 of AVX-512's 32 registers accumulate, 6 x 2 of AVX's or
// SSE's 16, with room for the row's vectors and the broadcast.
constexpr int kBlockRows = 6;
constexpr int kBlockVectors = kVecLanes == 16 ? 4 : 2;

// c[r][16 v + l] (+)= sum_k a[r * ars + k * aks] * b[k * ldb + 16 v + l] for R rows and V
// vectors: the accumulators stay in registers, so the transforms' small products run near the
// FMA peak where the library GEMM's call and packing costs dominated.
template <int R, int V>
void block_product(int64_t k_count, const float* a, int64_t ars, int64_t aks, const float* b,
                   int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  Vec acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = accumulate ? load(c + r * ldc + v * kVecLanes) : Vec{};
  for (int64_t k = 0; k < k_count; ++k) {
    Vec bk[V];
    for (int v = 0; v < V; ++v) bk[v] = load(b + k * ldb + v * kVecLanes);
    for (int r = 0; r < R; ++r) {
      const float ar = a[r * ars + k * aks];
      for (int v = 0; v < V; ++v) acc[r][v] += ar * bk[v];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) store(c + r * ldc + v * kVecLanes, acc[r][v]);
}

template <int V>
void rows_product(int64_t rows, int64_t k_count, const float* a, int64_t ars, int64_t aks,
                  const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
    const float* ar = a + r0 * ars;
    float* cr = c + r0 * ldc;
    switch (std::min<int64_t>(kBlockRows, rows - r0)) {
      case 6:
        block_product<6, V>(k_count, ar, ars, aks, b, ldb, cr, ldc, accumulate);
        break;
      case 5:
        block_product<5, V>(k_count, ar, ars, aks, b, ldb, cr, ldc, accumulate);
        break;
      case 4:
        block_product<4, V>(k_count, ar, ars, aks, b, ldb, cr, ldc, accumulate);
        break;
      case 3:
        block_product<3, V>(k_count, ar, ars, aks, b, ldb, cr, ldc, accumulate);
        break;
      case 2:
        block_product<2, V>(k_count, ar, ars, aks, b, ldb, cr, ldc, accumulate);
        break;
      default:
        block_product<1, V>(k_count, ar, ars, aks, b, ldb, cr, ldc, accumulate);
        break;
    }
  }
}

// c[rows, cols] (+)= A[rows, k] b[k, cols], A's element (r, k) at a[r * ars + k * aks] (so A
// may be read transposed), cols a multiple of 16.
void small_product(int64_t rows, int64_t cols, int64_t k_count, const float* a, int64_t ars,
                   int64_t aks, const float* b, int64_t ldb, float* c, int64_t ldc,
                   bool accumulate) {
  for (int64_t c0 = 0; c0 < cols; c0 += kBlockVectors * kVecLanes) {
    const float* bc = b + c0;
    float* cc = c + c0;
    switch (std::min<int64_t>(kBlockVectors, (cols - c0) / kVecLanes)) {
      case 4:
        rows_product<4>(rows, k_count, a, ars, aks, bc, ldb, cc, ldc, accumulate);
        break;
      case 3:
        rows_product<3>(rows, k_count, a, ars, aks, bc, ldb, cc, ldc, accumulate);
        break;
      case 2:
        rows_product<2>(rows, k_count, a, ars, aks, bc, ldb, cc, ldc, accumulate);
        break;
      default:
        rows_product<1>(rows, k_count, a, ars, aks, bc, ldb, cc, ldc, accumulate);
        break;
    }
  }
}

// An activation in nChw16c: channels (a multiple of 16), height, width.
struct Plane {
  int64_t channels, h, w;
  int64_t blocks() const { return channels / kLanes; }
  // Where the 16 channels of block `cb` at (row, col) of sample n start.
  int64_t offset(int64_t n, int64_t cb, int64_t row, int64_t col) const {
    return (((n * blocks() + cb) * h + row) * w + col) * kLanes;
  }
};

// The tiles of a batch, numbered sample by sample, row by row: each covers a 2x2 block of the
// outputs, whose top-left one is (2 ty, 2 tx).
struct TileGrid {
  int64_t rows, cols;  // tiles per sample
  TileGrid(int64_t out_h, int64_t out_w) : rows((out_h + 1) / kOut), cols((out_w + 1) / kOut) {}
  int64_t per_sample() const { return rows * cols; }
  void locate(int64_t tile, int64_t& n, int64_t& ty, int64_t& tx) const {
    n = tile / per_sample();
    ty = tile % per_sample() / cols;
    tx = tile % cols;
  }
};

// Per-thread buffers, grown on demand: transformed weights, inputs, products, gradient sums.
struct Buffers {
  std::vector<float> u, v, m, acc;
  static float* sized(std::vector<float>& b, int64_t floats) {
    if (static_cast<int64_t>(b.size()) < floats) b.resize(floats);
    return b.data();
  }
};

Buffers& buffers() {
  thread_local Buffers instance;
  return instance;
}

// u[t][cin][cout] = (G g G^T)[t] for each filter g: w's [cout][cin] filters, or for the input
// gradient (`transposed`) its [cin][cout] filters rotated by 180 degrees.
void transform_weights(const float* w, int64_t cin, int64_t cout, bool transposed, float* u) {
  constexpr int kK2 = kKernel * kKernel;
  std::vector<float> g(kK2 * cout), t(kTile * kKernel * cout);
  for (int64_t i = 0; i < cin; ++i) {
    for (int64_t o = 0; o < cout; ++o)
      for (int k = 0; k < kK2; ++k)
        g[k * cout + o] =
            transposed ? w[(i * cout + o) * kK2 + (kK2 - 1 - k)] : w[(o * cin + i) * kK2 + k];
    for (int r = 0; r < kTile; ++r)  // t = G g
      for (int col = 0; col < kKernel; ++col) {
        float* tr = &t[(r * kKernel + col) * cout];
        std::fill(tr, tr + cout, 0.f);
        for (int k = 0; k < kKernel; ++k)
          for (int64_t o = 0; o < cout; ++o) tr[o] += kG[r][k] * g[(k * kKernel + col) * cout + o];
      }
    for (int r = 0; r < kTile; ++r)  // u = t G^T
      for (int c = 0; c < kTile; ++c) {
        float* ut = u + ((r * kTile + c) * cin + i) * cout;
        std::fill(ut, ut + cout, 0.f);
        for (int k = 0; k < kKernel; ++k)
          for (int64_t o = 0; o < cout; ++o) ut[o] += t[(r * kKernel + k) * cout + o] * kG[c][k];
      }
  }
}

// v[t][j][c] = (B^T d B)[t] for tiles first + j (j < count) of x, each tile's 6x6 input starting
// at (2 ty - pad, 2 tx - pad), zero outside.
void transform_inputs(const float* x, const Plane& p, int64_t pad, const TileGrid& grid,
                      int64_t first, int64_t count, float* v) {
  const int64_t stride = count * p.channels;  // from one of a tile's products to the next
  alignas(64) float d[kTile][kTile][kLanes], t[kTile][kTile][kLanes];
  for (int64_t j = 0; j < count; ++j) {
    int64_t n, ty, tx;
    grid.locate(first + j, n, ty, tx);
    const int64_t row0 = kOut * ty - pad, col0 = kOut * tx - pad;
    for (int64_t cb = 0; cb < p.blocks(); ++cb) {
      for (int r = 0; r < kTile; ++r)
        for (int c = 0; c < kTile; ++c) {
          const int64_t row = row0 + r, col = col0 + c;
          if (row >= 0 && row < p.h && col >= 0 && col < p.w)
            std::memcpy(d[r][c], x + p.offset(n, cb, row, col), sizeof d[r][c]);
          else
            std::memset(d[r][c], 0, sizeof d[r][c]);
        }
      for (int c = 0; c < kTile; ++c) apply_bt(d[0][c], kTile * kLanes, t[0][c], kTile * kLanes);
      for (int r = 0; r < kTile; ++r)
        apply_bt(t[r][0], kLanes, v + (r * kTile * count + j) * p.channels + cb * kLanes, stride);
    }
  }
}

// out = A^T m A (+ bias, relu) for each tile's 2x2 outputs, those inside `p`.
void transform_outputs(const float* m, const Plane& p, const TileGrid& grid, int64_t first,
                       int64_t count, const float* bias, bool relu, float* out) {
  const int64_t stride = count * p.channels;
  alignas(64) float s[kTile][kOut][kLanes], o[kOut][kOut][kLanes];
  for (int64_t j = 0; j < count; ++j) {
    int64_t n, ty, tx;
    grid.locate(first + j, n, ty, tx);
    for (int64_t cb = 0; cb < p.blocks(); ++cb) {
      for (int r = 0; r < kTile; ++r)
        apply_at(m + (r * kTile * count + j) * p.channels + cb * kLanes, stride, s[r][0], kLanes);
      for (int c = 0; c < kOut; ++c) apply_at(s[0][c], kOut * kLanes, o[0][c], kOut * kLanes);
      for (int r = 0; r < kOut; ++r)
        for (int c = 0; c < kOut; ++c) {
          const int64_t row = kOut * ty + r, col = kOut * tx + c;
          if (row >= p.h || col >= p.w) continue;
          float* y = out + p.offset(n, cb, row, col);
          for (int h = 0; h < kLanes; h += kVecLanes) {
            Vec value = load(o[r][c] + h);
            if (bias) value += load(bias + cb * kLanes + h);
            if (relu) value = value > 0 ? value : Vec{};
            store(y + h, value);
          }
        }
    }
  }
}

// out = the F(2x2, 5x5) convolution of `in` (padding `pad`) with the transformed filters u.
void convolve(int64_t batch, const float* in, const Plane& ip, int64_t pad, const float* u,
              float* out, const Plane& op, const float* bias, bool relu) {
  const TileGrid grid(op.h, op.w);
  const int64_t tiles = batch * grid.per_sample();
  Buffers& b = buffers();
  float* v = Buffers::sized(b.v, kTaps * kTilesPerGroup * ip.channels);
  float* m = Buffers::sized(b.m, kTaps * kTilesPerGroup * op.channels);
  for (int64_t first = 0; first < tiles; first += kTilesPerGroup) {
    const int64_t count = std::min(kTilesPerGroup, tiles - first);
    transform_inputs(in, ip, pad, grid, first, count, v);
    for (int t = 0; t < kTaps; ++t)
      small_product(count, op.channels, ip.channels, v + t * count * ip.channels, ip.channels, 1,
                    u + t * ip.channels * op.channels, op.channels, m + t * count * op.channels,
                    op.channels, false);
    transform_outputs(m, op, grid, first, count, bias, relu, out);
  }
}

// d[t][j][oc] = (G2 g G2^T)[t] for each tile's 2x2 block g of dy (zero outside), and
// bias_sums[oc] += the block's sum.
void transform_gradients(const float* dy, const Plane& p, const TileGrid& grid, int64_t first,
                         int64_t count, float* d, float* bias_sums) {
  const int64_t stride = count * p.channels;
  alignas(64) float g[kOut][kOut][kLanes], h[kTile][kOut][kLanes];
  for (int64_t j = 0; j < count; ++j) {
    int64_t n, ty, tx;
    grid.locate(first + j, n, ty, tx);
    for (int64_t cb = 0; cb < p.blocks(); ++cb) {
      Vec sums[kLanes / kVecLanes];
      for (int h = 0; h < kLanes / kVecLanes; ++h)
        sums[h] = load(bias_sums + cb * kLanes + h * kVecLanes);
      for (int r = 0; r < kOut; ++r)
        for (int c = 0; c < kOut; ++c) {
          const int64_t row = kOut * ty + r, col = kOut * tx + c;
          if (row < p.h && col < p.w) {
            std::memcpy(g[r][c], dy + p.offset(n, cb, row, col), sizeof g[r][c]);
            for (int h = 0; h < kLanes / kVecLanes; ++h) sums[h] += load(g[r][c] + h * kVecLanes);
          } else {
            std::memset(g[r][c], 0, sizeof g[r][c]);
          }
        }
      for (int h = 0; h < kLanes / kVecLanes; ++h)
        store(bias_sums + cb * kLanes + h * kVecLanes, sums[h]);
      for (int c = 0; c < kOut; ++c) apply_g2(g[0][c], kOut * kLanes, h[0][c], kOut * kLanes);
      for (int r = 0; r < kTile; ++r)
        apply_g2(h[r][0], kLanes, d + (r * kTile * count + j) * p.channels + cb * kLanes, stride);
    }
  }
}

// dw[oc][ic] += A5^T acc A5 for acc[t][ic][oc], the weight gradient in the transformed domain.
void add_weight_gradient(const float* acc, int64_t ic_count, int64_t oc_count, float* dw) {
  std::vector<float> t(kKernel * kTile * oc_count), out(oc_count);
  for (int64_t ic = 0; ic < ic_count; ++ic) {
    std::fill(t.begin(), t.end(), 0.f);
    for (int r = 0; r < kKernel; ++r)  // t = A5^T acc
      for (int c = 0; c < kTile; ++c)
        for (int k = 0; k < kTile; ++k) {
          const float* a = acc + ((k * kTile + c) * ic_count + ic) * oc_count;
          float* tr = &t[(r * kTile + c) * oc_count];
          for (int64_t oc = 0; oc < oc_count; ++oc) tr[oc] += kA5t[r][k] * a[oc];
        }
    for (int r = 0; r < kKernel; ++r)  // dw = t A5
      for (int c = 0; c < kKernel; ++c) {
        std::fill(out.begin(), out.end(), 0.f);
        for (int k = 0; k < kTile; ++k)
          for (int64_t oc = 0; oc < oc_count; ++oc)
            out[oc] += t[(r * kTile + k) * oc_count + oc] * kA5t[c][k];
        for (int64_t oc = 0; oc < oc_count; ++oc)
          dw[((oc * ic_count + ic) * kKernel + r) * kKernel + c] += out[oc];
      }
  }
}

void weight_gradient(const Conv2dGeometry& g, const float* x, const float* dy, float* dw,
                     float* dbias) {
  const Plane xp{g.in_channels, g.in_h, g.in_w}, yp{g.out_channels, g.out_h(), g.out_w()};
  const TileGrid grid(yp.h, yp.w);
  const int64_t tiles = g.batch * grid.per_sample();
  Buffers& b = buffers();
  float* v = Buffers::sized(b.v, kTaps * kTilesPerGradientGroup * xp.channels);
  float* d = Buffers::sized(b.m, kTaps * kTilesPerGradientGroup * yp.channels);
  float* acc = Buffers::sized(b.acc, kTaps * xp.channels * yp.channels);
  std::vector<float> bias_sums(yp.channels, 0.f);
  for (int64_t first = 0; first < tiles; first += kTilesPerGradientGroup) {
    const int64_t count = std::min(kTilesPerGradientGroup, tiles - first);
    transform_inputs(x, xp, g.padding, grid, first, count, v);
    transform_gradients(dy, yp, grid, first, count, d, bias_sums.data());
    for (int t = 0; t < kTaps; ++t)  // acc_t += v_t^T d_t
      small_product(xp.channels, yp.channels, count, v + t * count * xp.channels, 1, xp.channels,
                    d + t * count * yp.channels, yp.channels, acc + t * xp.channels * yp.channels,
                    yp.channels, first > 0);
  }
  add_weight_gradient(acc, xp.channels, yp.channels, dw);
  if (dbias)
    for (int64_t oc = 0; oc < yp.channels; ++oc) dbias[oc] += bias_sums[oc];
}

}  // namespace

bool conv2d_winograd_supports(const Conv2dGeometry& g) {
  return g.kernel == kKernel && g.stride == 1 && g.padding >= 0 && g.padding < kKernel &&
         g.x_blocked && g.y_blocked && channels_blockable(g.in_channels) &&
         channels_blockable(g.out_channels) && g.out_h() > 0 && g.out_w() > 0 && g.batch > 0;
}

void conv2d_winograd_forward(const Conv2dGeometry& g, const float* x, const float* w,
                             const float* bias, float* y, bool relu) {
  if (!conv2d_winograd_supports(g))
    throw std::invalid_argument("conv2d_winograd_forward: not a 5x5 stride-1 blocked convolution");
  float* u = Buffers::sized(buffers().u, kTaps * g.in_channels * g.out_channels);
  transform_weights(w, g.in_channels, g.out_channels, false, u);
  convolve(g.batch, x, {g.in_channels, g.in_h, g.in_w}, g.padding, u, y,
           {g.out_channels, g.out_h(), g.out_w()}, bias, relu);
}

void conv2d_winograd_backward(const Conv2dGeometry& g, const float* x, const float* w,
                              const float* dy, float* dx, float* dw, float* dbias) {
  if (!conv2d_winograd_supports(g))
    throw std::invalid_argument("conv2d_winograd_backward: not a 5x5 stride-1 blocked convolution");
  if (dw) weight_gradient(g, x, dy, dw, dbias);
  if (!dx) return;
  // dx is dy convolved with the rotated, transposed filters under the complementary padding.
  float* u = Buffers::sized(buffers().u, kTaps * g.in_channels * g.out_channels);
  transform_weights(w, g.out_channels, g.in_channels, true, u);
  convolve(g.batch, dy, {g.out_channels, g.out_h(), g.out_w()}, kKernel - 1 - g.padding, u, dx,
           {g.in_channels, g.in_h, g.in_w}, nullptr, false);
}

}  // namespace wt::ops

namespace wt {

bool winograd_pays_in_this_build() { return ops::kVecLanes >= 8; }

const char* host_conv_description() {
  return winograd_pays_in_this_build()
             ? "host convolutions under device.conv_algorithm = \"auto\": Winograd F(2x2, 5x5) "
               "for 5x5 stride-1 FP32 ones with 16k channels, oneDNN's direct for the rest"
             : "host convolutions: oneDNN's direct only (this build's vectors are 4 floats, where "
               "Winograd F(2x2, 5x5) is slower; build with -DWAVETRAIN_NATIVE=ON on an AVX CPU)";
}

}  // namespace wt
