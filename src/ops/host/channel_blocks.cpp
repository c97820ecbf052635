#include "ops/host/channel_blocks.hpp"

#include <stdexcept>
#include <string>

namespace wt::ops {
namespace {

void check_channels(int64_t c) {
  if (!channels_blockable(c))
    throw std::invalid_argument("channel-blocked activations need a multiple of 16 channels, got " +
                                std::to_string(c));
}

}  // namespace

void nchw_to_blocked(const float* x, int64_t n, int64_t c, int64_t pixels, float* y) {
  check_channels(c);
  for (int64_t b = 0; b < n * c / kChannelBlock; ++b) {
    const float* from = x + b * kChannelBlock * pixels;  // 16 channel planes of sample b / (c/16)
    float* to = y + b * kChannelBlock * pixels;
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t lane = 0; lane < kChannelBlock; ++lane)
        to[p * kChannelBlock + lane] = from[lane * pixels + p];
  }
}

void blocked_to_nchw(const float* x, int64_t n, int64_t c, int64_t pixels, float* y) {
  check_channels(c);
  for (int64_t b = 0; b < n * c / kChannelBlock; ++b) {
    const float* from = x + b * kChannelBlock * pixels;
    float* to = y + b * kChannelBlock * pixels;
    for (int64_t lane = 0; lane < kChannelBlock; ++lane)
      for (int64_t p = 0; p < pixels; ++p) to[lane * pixels + p] = from[p * kChannelBlock + lane];
  }
}

float* nchw_view(const float* v, bool blocked, int64_t n, int64_t c, int64_t pixels,
                 std::vector<float>& storage) {
  if (!blocked) return const_cast<float*>(v);
  storage.resize(size_t(n * c * pixels));
  blocked_to_nchw(v, n, c, pixels, storage.data());
  return storage.data();
}

float* nchw_result(float* v, bool blocked, int64_t n, int64_t c, int64_t pixels,
                   std::vector<float>& storage) {
  if (!blocked) return v;
  storage.resize(size_t(n * c * pixels));
  return storage.data();
}

void store_nchw_result(const std::vector<float>& storage, bool blocked, int64_t n, int64_t c,
                       int64_t pixels, float* v) {
  if (blocked) nchw_to_blocked(storage.data(), n, c, pixels, v);
}

}  // namespace wt::ops
