#include "compress/weight_codec.hpp"

#include <algorithm>
#include <stdexcept>

#include "compress/scalednn_format.hpp"

namespace wt {

namespace {

bool nearest(const WeightCodec& c) { return c.rounding == "nearest"; }

// Round to nearest at `dropped` low bits (ties away from zero in magnitude), unless that would
// reach the infinity or NaN exponent: then the truncated value stands.
uint32_t rounded_bits(float x, int dropped, bool round) {
  const uint32_t b = scalednn::bits_of(x);
  if (!round || ((b >> 23) & 0xFF) == 0xFF) return b;
  const uint32_t r = b + (1u << (dropped - 1));
  return ((r >> 23) & 0xFF) == 0xFF ? b : r;
}

void encode_bf16(const WeightCodec& c, const float* x, int64_t n, uint32_t* words) {
  const bool round = nearest(c);
  for (int64_t w = 0; w < (n + 1) / 2; ++w) {
    const float a = x[2 * w], b = 2 * w + 1 < n ? x[2 * w + 1] : 0.0f;
    words[w] = (rounded_bits(a, 16, round) & 0xFFFF0000u) | (rounded_bits(b, 16, round) >> 16);
  }
}

void decode_bf16(const uint32_t* words, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t w = words[i / 2];
    y[i] = scalednn::float_of(i % 2 == 0 ? (w & 0xFFFF0000u) : (w << 16));
  }
}

int64_t encode_scalednn(const WeightCodec& c, const float* x, int64_t n, uint32_t* words,
                        float* side) {
  const bool raw = c.out_of_range == "raw", round = nearest(c);
  int64_t used = 0;
  for (int64_t w = 0; w < (n + 2) / 3; ++w) {
    float v[3];
    uint32_t bits[3], exact[3];
    for (int k = 0; k < 3; ++k) {
      v[k] = x[std::min(3 * w + k, n - 1)];  // a short tail repeats its last value
      exact[k] = scalednn::bits_of(v[k]);
      bits[k] = rounded_bits(v[k], scalednn::kDroppedMantissaBits, round);
    }
    if (raw && !scalednn::triple_in_range(bits)) {
      words[w] = scalednn::kRawBit;
      for (int k = 0; k < 3; ++k) side[used++] = scalednn::float_of(exact[k]);
      continue;
    }
    words[w] = scalednn::encode_triple(bits);
  }
  return used;
}

}  // namespace

int64_t encoded_words(const WeightCodec& codec, int64_t n) {
  if (codec.kind == "scalednn") return (n + 2) / 3;
  if (codec.kind == "bf16") return (n + 1) / 2;
  throw std::invalid_argument("weight codec '" + codec.kind + "' encodes nothing");
}

int64_t encode_weights(const WeightCodec& codec, const float* x, int64_t n, uint32_t* words,
                       float* side) {
  if (n <= 0) return 0;
  if (codec.kind == "bf16") {
    encode_bf16(codec, x, n, words);
    return 0;
  }
  if (codec.kind != "scalednn") throw std::invalid_argument("unknown weight codec " + codec.kind);
  return encode_scalednn(codec, x, n, words, side);
}

int64_t side_floats(const WeightCodec& codec, const uint32_t* words, int64_t n) {
  if (codec.kind != "scalednn") return 0;
  int64_t raw = 0;
  for (int64_t w = 0; w < (n + 2) / 3; ++w) raw += (words[w] & scalednn::kRawBit) != 0;
  return 3 * raw;
}

int64_t decode_weights(const WeightCodec& codec, const uint32_t* words, int64_t n,
                       const float* side, float* y) {
  if (codec.kind == "bf16") {
    decode_bf16(words, n, y);
    return 0;
  }
  if (codec.kind != "scalednn") throw std::invalid_argument("unknown weight codec " + codec.kind);
  int64_t used = 0;
  for (int64_t w = 0; w < (n + 2) / 3; ++w) {
    float v[3];
    if (words[w] & scalednn::kRawBit) {
      for (int k = 0; k < 3; ++k) v[k] = side[used++];
    } else {
      scalednn::decode_triple(words[w], v);
    }
    for (int k = 0; k < 3 && 3 * w + k < n; ++k) y[3 * w + k] = v[k];
  }
  return used;
}

}  // namespace wt
