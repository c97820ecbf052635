#pragma once
// oneDNN's channel-blocked activation layout on the host (nChw16c: [N][C/16][H][W][16], the layout
// its AVX-512 convolutions compute in). Keeping a convolution's output in it, where its readers
// are pooling and convolutions, saves the two reorders per tensor and pass that NCHW costs at the
// convolution's boundary (model/block_channels.hpp). Only channel counts that are a multiple of 16
// are blocked, so a blocked tensor has the NCHW tensor's size.
#include <cstdint>
#include <vector>

#include "ops/kernel_args.hpp"  // kChannelBlock, channels_blockable

namespace wt::ops {

// Offset of element (n, c, p) of an [N, C, P] tensor (P: pixels), blocked or NCHW.
inline int64_t activation_offset(bool blocked, int64_t channels, int64_t pixels, int64_t n,
                                 int64_t c, int64_t p) {
  if (!blocked) return (n * channels + c) * pixels + p;
  return ((n * channels + (c / kChannelBlock) * kChannelBlock) * pixels + p * kChannelBlock) +
         c % kChannelBlock;
}

// y = x relaid: NCHW to blocked, and back. channels_blockable(c) must hold.
void nchw_to_blocked(const float* x, int64_t n, int64_t c, int64_t pixels, float* y);
void blocked_to_nchw(const float* x, int64_t n, int64_t c, int64_t pixels, float* y);

// For kernels that only know NCHW (the fallbacks for shapes the blocked paths do not cover):
// an NCHW view of v, which is v itself unless `blocked`, else a relaid copy held in `storage`;
float* nchw_view(const float* v, bool blocked, int64_t n, int64_t c, int64_t pixels,
                 std::vector<float>& storage);
// where an NCHW result meant for v goes (v itself, or `storage` when blocked), and its move into v
// once written (nothing unless blocked).
float* nchw_result(float* v, bool blocked, int64_t n, int64_t c, int64_t pixels,
                   std::vector<float>& storage);
void store_nchw_result(const std::vector<float>& storage, bool blocked, int64_t n, int64_t c,
                       int64_t pixels, float* v);

}  // namespace wt::ops
