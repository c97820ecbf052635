#pragma once
// Elementwise kernels, one index per element (portable.hpp). The host's ops/host/elementwise.cpp
// and the GPU's ops/cuda/elementwise.cu launch these same functors.
#include "ops/kernel_args.hpp"
#include "ops/portable/fast_math.hpp"
#include "ops/portable/portable.hpp"

namespace wt::kern {

// Four consecutive floats moved as one 16-byte load or store (a GPU's 128-bit access, which
// PyTorch's elementwise kernels use to run near bandwidth). The GPU launcher (cuda_for4 in
// ops/cuda/cuda_launch.cuh) calls a functor's four(q), elements 4q..4q+3, where all its arrays
// are 16-byte aligned (aligned16()), and its one-element form for the rest: the same arithmetic.
struct alignas(16) Float4 {
  float v[4];
};

WT_HD Float4 load4(const float* p, int64_t q) {
#if defined(__CUDA_ARCH__)
  return reinterpret_cast<const Float4*>(p)[q];
#else
  Float4 f;
  std::memcpy(f.v, p + 4 * q, sizeof f.v);
  return f;
#endif
}

WT_HD void store4(float* p, int64_t q, const Float4& f) {
#if defined(__CUDA_ARCH__)
  reinterpret_cast<Float4*>(p)[q] = f;
#else
  std::memcpy(p + 4 * q, f.v, sizeof f.v);
#endif
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Quad q of y = f.at(x), and of y = f.at(a, b): the functor's one-element formula on each float
// (both inputs are loaded before y is stored, so y may be an input).
template <class F>
WT_HD void map4(const F& f, const float* x, float* y, int64_t q) {
  Float4 v = load4(x, q);
  for (float& e : v.v) e = f.at(e);
  store4(y, q, v);
}

template <class F>
WT_HD void zip4(const F& f, const float* a, const float* b, float* y, int64_t q) {
  Float4 u = load4(a, q);
  const Float4 w = load4(b, q);
  for (int k = 0; k < 4; ++k) u.v[k] = f.at(u.v[k], w.v[k]);
  store4(y, q, u);
}

struct ReluForward {
  const float* x;
  float* y;
  WT_HD static float at(float v) { return v > 0.0f ? v : 0.0f; }
  WT_HD void operator()(int64_t i) const { y[i] = at(x[i]); }
  WT_HD void four(int64_t q) const { map4(*this, x, y, q); }
  bool aligned() const { return aligned16(x) && aligned16(y); }
};

// dx = dy where the forward output y > 0. dy read unconditionally: the select then vectorises.
struct ReluBackward {
  const float* y;
  const float* dy;
  float* dx;
  WT_HD static float at(float out, float g) { return out > 0.0f ? g : 0.0f; }
  WT_HD void operator()(int64_t i) const { dx[i] = at(y[i], dy[i]); }
  WT_HD void four(int64_t q) const { zip4(*this, y, dy, dx, q); }
  bool aligned() const { return aligned16(y) && aligned16(dy) && aligned16(dx); }
};

struct GeluForward {
  const float* x;
  float* y;
  WT_HD static float at(float v) { return v * ops::normal_cdf_approx(v); }
  WT_HD void operator()(int64_t i) const { y[i] = at(x[i]); }
  WT_HD void four(int64_t q) const { map4(*this, x, y, q); }
  bool aligned() const { return aligned16(x) && aligned16(y); }
};

// dx = dy * (Phi(x) + x * phi(x)).
struct GeluBackward {
  const float* x;
  const float* dy;
  float* dx;
  WT_HD static float at(float v, float g) {
    constexpr float kInvSqrt2Pi = 0.39894228040143268f;
    const float pdf = kInvSqrt2Pi * ops::exp_approx(-0.5f * v * v);
    return g * (ops::normal_cdf_approx(v) + v * pdf);
  }
  WT_HD void operator()(int64_t i) const { dx[i] = at(x[i], dy[i]); }
  WT_HD void four(int64_t q) const { zip4(*this, x, dy, dx, q); }
  bool aligned() const { return aligned16(x) && aligned16(dy) && aligned16(dx); }
};

struct Add {
  const float* a;
  const float* b;
  float* y;
  WT_HD static float at(float u, float w) { return u + w; }
  WT_HD void operator()(int64_t i) const { y[i] = at(a[i], b[i]); }
  WT_HD void four(int64_t q) const { zip4(*this, a, b, y, q); }
  bool aligned() const { return aligned16(a) && aligned16(b) && aligned16(y); }
};

struct Scale {
  const float* x;
  float s;
  float* y;
  WT_HD float at(float v) const { return s * v; }
  WT_HD void operator()(int64_t i) const { y[i] = at(x[i]); }
  WT_HD void four(int64_t q) const { map4(*this, x, y, q); }
  bool aligned() const { return aligned16(x) && aligned16(y); }
};

// y = x * s[0] * factor with s a device scalar (the loss gradient seed): the product s[0] * factor
// first, as the host computed it before it was a kernel.
struct ScaleByDeviceScalar {
  const float* x;
  const float* s;
  float factor;
  float* y;
  WT_HD void operator()(int64_t i) const { y[i] = (s[0] * factor) * x[i]; }
};

// A batch of uint8 samples normalised on the device: y[i] = table[g * 256 + x[i]], g the element's
// scaling group ((i mod row) / group: one group for global scaling, a channel, or each element).
// The table is the reader's (data/dataset_reader.hpp), so the device's floats are the host's.
struct DequantizeU8 {
  const uint8_t* x;
  int64_t row, group;
  const float* table;
  float* y;
  WT_HD void operator()(int64_t i) const { y[i] = table[((i % row) / group) * 256 + x[i]]; }
};

struct Accumulate {
  const float* x;
  float* y;
  WT_HD static float at(float v, float u) { return v + u; }
  WT_HD void operator()(int64_t i) const { y[i] = at(y[i], x[i]); }
  WT_HD void four(int64_t q) const { zip4(*this, y, x, y, q); }
  bool aligned() const { return aligned16(x) && aligned16(y); }
};

struct ScaleInPlace {
  float s;
  float* y;
  WT_HD float at(float v) const { return v * s; }
  WT_HD void operator()(int64_t i) const { y[i] = at(y[i]); }
  WT_HD void four(int64_t q) const { map4(*this, y, y, q); }
  bool aligned() const { return aligned16(y); }
};

struct Multiply {
  const float* a;
  const float* b;
  float* y;
  WT_HD static float at(float u, float w) { return u * w; }
  WT_HD void operator()(int64_t i) const { y[i] = at(a[i], b[i]); }
  WT_HD void four(int64_t q) const { zip4(*this, a, b, y, q); }
  bool aligned() const { return aligned16(a) && aligned16(b) && aligned16(y); }
};

struct Fill {
  float value;
  float* y;
  WT_HD void operator()(int64_t i) const { y[i] = value; }
};

struct Copy {
  const float* x;
  float* y;
  WT_HD void operator()(int64_t i) const { y[i] = x[i]; }
};

// Inverted dropout, counter based: index j makes entries 2j and 2j + 1 from SplitMix64's output
// number j + 1 for `seed` (Rng(seed)'s (j+1)-th next_u64), so any thread can make any entry and no
// generator state goes into the kernel. Launch over (n + 1) / 2 indices.
struct DropoutMask {
  uint32_t threshold;  // drop when a 32-bit draw falls below p * 2^32
  float keep;          // 1 / (1 - p)
  uint64_t seed;
  float* mask;
  int64_t n;
  WT_HD void operator()(int64_t j) const {
    uint64_t z = seed + uint64_t(j + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    const uint64_t u = z ^ (z >> 31);
    mask[2 * j] = static_cast<uint32_t>(u) >= threshold ? keep : 0.0f;
    if (2 * j + 1 < n) mask[2 * j + 1] = static_cast<uint32_t>(u >> 32) >= threshold ? keep : 0.0f;
  }
};

// The drop threshold and keep scale of dropout probability p (0 <= p < 1).
inline DropoutMask dropout_mask(float p, uint64_t seed, float* mask, int64_t n) {
  const double scaled = static_cast<double>(p) * 4294967296.0;
  const uint32_t threshold = static_cast<uint32_t>(scaled < 4294967295.0 ? scaled : 4294967295.0);
  return DropoutMask{threshold, 1.0f / (1.0f - p), seed, mask, n};
}

// Masks of consecutive samples (ops::DropoutMasks), one launch over rows x (per_row + 1) / 2
// indices: row r is DropoutMask with seed Rng(key ^ salt).fork(first_sample + r).state(),
// computed in the kernel so that the generator's state can come from memory at run time.
struct DropoutMasks {
  DropoutMask row;  // threshold and keep; seed, mask and n set per row
  uint64_t key, salt;
  const uint64_t* step_key;
  int64_t first_sample, half;
  WT_HD void operator()(int64_t j) const {
    const int64_t r = j / half;
    uint64_t z = ((step_key ? *step_key : key) ^ salt) + 0x9E3779B97F4A7C15ull;  // Rng::next_u64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    DropoutMask m = row;
    m.seed = (z ^ (z >> 31)) ^ (uint64_t(first_sample + r) * 0xD1B54A32D192ED03ull);  // Rng::fork
    m.mask += r * row.n;
    m(j - r * half);
  }
};

inline DropoutMasks dropout_masks(const ops::DropoutMasks& d, float* mask) {
  return DropoutMasks{dropout_mask(d.p, 0, mask, d.per_row),
                      d.key,
                      d.salt,
                      d.step_key,
                      d.first_sample,
                      (d.per_row + 1) / 2};
}

// 1 for a NaN or Inf (all exponent bits set), else 0: summed, the non-finite count.
struct NonFinite {
  const float* x;
  WT_HD int64_t operator()(int64_t i) const {
    return (float_bits(x[i]) & 0x7f800000) == 0x7f800000 ? 1 : 0;
  }
};

}  // namespace wt::kern
