#pragma once
// 2-D convolution through oneDNN convolution primitives (builds with WT_GEMM_DNNL only). Tensors
// are NCHW float at this boundary, or nChw16c where the geometry's x_blocked/y_blocked say
// (model/block_channels.hpp); inside, oneDNN may pick blocked layouts and the activations and
// weights are reordered to and from them where they differ. Primitives are created once per
// geometry and kept in a per-thread cache (the batch changes between training, evaluation and the
// last batch). Under Precision::Bf16 the products read bf16 (src, weights, diff_dst: rounded by the
// reorders from the user's FP32) and write FP32 (dst, diff_src, diff_weights): AVX512-BF16 kernels.
#include "ops/host/conv2d.hpp"
#include "ops/precision.hpp"

#if defined(WT_GEMM_DNNL)
#define WT_HAVE_DNNL_CONV 1

namespace wt::ops {

// kPlain asks oneDNN for nchw/oihw kernels (no reorders); kBlocked lets it choose
// (format_tag::any, nChw16c on AVX-512) and reorders at the boundary.
enum class DnnlConvLayout { kPlain, kBlocked };

// The layout the conv2d layer uses (measured in bench/conv2d_dnnl.cpp).
DnnlConvLayout conv2d_dnnl_default_layout();

// Whether oneDNN implements this geometry (false e.g. for a stride that drops input rows past the
// last window, which needs negative right padding). Creates and caches the primitives.
bool conv2d_dnnl_supports(const Conv2dGeometry& g, bool has_bias,
                          DnnlConvLayout layout = conv2d_dnnl_default_layout(),
                          Precision precision = Precision::Fp32);

// y[N, OC, Ho, Wo] = conv(x[N, C, H, W], w[OC, C, k, k]) + bias[OC] (bias may be null); with
// `relu`, relu of that, as a post-op of the convolution where oneDNN runs it with the same kernel.
void conv2d_dnnl_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias,
                         float* y, DnnlConvLayout layout = conv2d_dnnl_default_layout(),
                         bool relu = false, Precision precision = Precision::Fp32);

// Same contract as conv2d_backward: dw += dL/dw, dbias += dL/dbias (may be null), dx overwritten
// with dL/dx unless null; dw null: dx alone, dbias untouched (it still picks the primitives).
void conv2d_dnnl_backward(const Conv2dGeometry& g, const float* x, const float* w, const float* dy,
                          float* dx, float* dw, float* dbias,
                          DnnlConvLayout layout = conv2d_dnnl_default_layout(),
                          Precision precision = Precision::Fp32);

}  // namespace wt::ops

#endif  // WT_GEMM_DNNL
