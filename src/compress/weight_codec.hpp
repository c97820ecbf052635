#pragma once
// Lossy codecs for the weights a stage's owner broadcasts (ScaleDNN §IV-C): the owner keeps and
// updates exact weights, so the error never accumulates; gradients, batches, batch-norm buffers
// and optimizer state are never encoded. Arrays are encoded per parameter tensor (a triple never
// straddles two tensors) into 32-bit words:
//   scalednn  three values per word (scalednn_format.hpp), a third of the bytes;
//   bf16      two values per word, the top 16 bits of each float.
// Out-of-range values (scalednn): "paper" applies the format's rule as published (a triple mixing
// a value outside [2^-15, 2) with in-range ones is crushed by 2^16, zeros decode to +-2^-31);
// "raw" marks such a triple (scalednn::kRawBit) and sends its exact values in a side list, so
// every decoded value is within 2^-5 relative of the original and zeros stay zero.
#include <cstdint>
#include <string>

namespace wt {

struct WeightCodec {
  std::string kind = "none";          // none | scalednn | bf16   ([compress] weights)
  std::string out_of_range = "raw";   // raw | paper
  std::string rounding = "truncate";  // truncate (the paper) | nearest
  int64_t min_bytes = 0;              // stages with fewer parameter bytes go exact
  bool active() const { return kind != "none"; }
};

// Words that encode n values.
int64_t encoded_words(const WeightCodec& codec, int64_t n);

// Encodes x[0, n) into words[0, encoded_words) and, in raw mode, the exact values of the
// out-of-range triples, in order, into side (room for n + 2 floats). Returns the side floats used.
int64_t encode_weights(const WeightCodec& codec, const float* x, int64_t n, uint32_t* words,
                       float* side);

// The side floats that `words` (of n values) refer to: 3 per raw triple.
int64_t side_floats(const WeightCodec& codec, const uint32_t* words, int64_t n);

// Decodes n values into y. Returns the side floats it read.
int64_t decode_weights(const WeightCodec& codec, const uint32_t* words, int64_t n,
                       const float* side, float* y);

}  // namespace wt
