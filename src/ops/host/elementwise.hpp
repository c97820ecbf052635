#pragma once
// Elementwise host kernels on raw, non-aliasing float arrays of n elements. Plain loops written so
// that GCC/Clang vectorise them at -O3; they run on every training step, so none of them allocate.
#include <cstdint>

#include "ops/kernel_args.hpp"
#include "tensor/rng.hpp"

namespace wt::ops {

// y = max(x, 0)
void relu_forward(const float* x, float* y, int64_t n);
// dx = dy where the forward output y > 0, else 0 (y > 0 exactly where x > 0, so the input is not
// needed).
void relu_backward(const float* y, const float* dy, float* dx, int64_t n);

// GELU in the erf form, y = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), as torch.nn.GELU() (not
// the tanh approximation). Phi comes from normal_cdf_approx (absolute error < 3e-7, like
// PyTorch's vectorised CPU erf), which vectorises: 5x faster than libm's erff.
void gelu_forward(const float* x, float* y, int64_t n);
// dx = dy * (Phi(x) + x * phi(x)).
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n);

// y = xs[0] + xs[1] + ... + xs[count-1]; count >= 1.
void sum_arrays(const float* const* xs, int count, float* y, int64_t n);
// y = s * x
void scale(const float* x, float s, float* y, int64_t n);
// y += x (fan-out gradients summed, a kept gradient added)
void accumulate(const float* x, float* y, int64_t n);
// y *= s, in place
void scale_in_place(float s, float* y, int64_t n);
// y = a * b
void multiply(const float* a, const float* b, float* y, int64_t n);

// Inverted-dropout mask: each entry is 1/(1-p) with probability 1-p, else 0. Counter based:
// entries 2j and 2j+1 come from draw j + 1 of SplitMix64 seeded with `seed` (Rng(seed)'s j+1-th
// next_u64), computed from (seed, j) alone, so any thread can make any entry and no generator
// state goes into the kernel. 0 <= p < 1.
void dropout_mask(float p, uint64_t seed, float* mask, int64_t n);
// The masks of d.rows samples, each from its sample's seed (ops::DropoutMasks).
void dropout_masks(const DropoutMasks& d, float* mask);

}  // namespace wt::ops
