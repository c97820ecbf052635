#pragma once
// ScaleDNN's 3-in-1 weight format (seeds/scalednn.txt §IV-C, Fig. 8): three float32 values in one
// 32-bit word. Per value: its sign, the low four bits of its exponent and the top five bits of its
// mantissa (10 bits); one flag bit picks the exponent's high nibble for all three: 0111 when all
// three values have it (|x| in [2^-15, 2)), else 0110. The low 18 mantissa bits decode as zero.
// The paper shows the layout only as a figure; the bit positions are fixed here (research notes
// §4.2) and pinned by the golden table in tests/unit/test_weight_codec.cpp:
//
//   bit 31      flag: 1 = exponent base 0111, 0 = base 0110
//   bit 30      0 in the paper's format; set = a raw triple (its exact values in a side list)
//   bits 29..20 value 0    bits 19..10 value 1    bits 9..0 value 2
//   in a field: bit 9 sign, bits 8..5 exponent low nibble, bits 4..0 mantissa bits 22..18
#include <cstdint>
#include <cstring>

namespace wt::scalednn {

constexpr uint32_t kFlagBit = 1u << 31;
constexpr uint32_t kRawBit = 1u << 30;
constexpr int kFieldBits = 10;
constexpr int kFieldShift[3] = {20, 10, 0};
constexpr uint32_t kHighNibbleIn = 0x7;   // flag 1: exponents 112..127
constexpr uint32_t kHighNibbleLow = 0x6;  // flag 0: exponents 96..111
constexpr int kDroppedMantissaBits = 18;

inline uint32_t bits_of(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
inline float float_of(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}
inline uint32_t high_nibble(uint32_t bits) { return (bits >> 27) & 0xF; }  // exponent bits 7..4

// A value's 10-bit field.
inline uint32_t field_of(uint32_t bits) {
  const uint32_t sign = bits >> 31, exponent_low = (bits >> 23) & 0xF;
  const uint32_t mantissa_top = (bits >> kDroppedMantissaBits) & 0x1F;
  return sign << 9 | exponent_low << 5 | mantissa_top;
}

// The float a field decodes to under the word's flag.
inline float value_of(uint32_t field, bool flag) {
  const uint32_t base = flag ? kHighNibbleIn : kHighNibbleLow;
  const uint32_t sign = (field >> 9) & 1, exponent = base << 4 | ((field >> 5) & 0xF);
  return float_of(sign << 31 | exponent << 23 | (field & 0x1F) << kDroppedMantissaBits);
}

// The paper's word for three values' float bits: flag 1 only when all three high nibbles are 0111.
inline uint32_t encode_triple(const uint32_t bits[3]) {
  const bool flag = high_nibble(bits[0]) == kHighNibbleIn &&
                    high_nibble(bits[1]) == kHighNibbleIn && high_nibble(bits[2]) == kHighNibbleIn;
  uint32_t word = flag ? kFlagBit : 0;
  for (int k = 0; k < 3; ++k) word |= field_of(bits[k]) << kFieldShift[k];
  return word;
}

inline void decode_triple(uint32_t word, float out[3]) {
  const bool flag = (word & kFlagBit) != 0;
  for (int k = 0; k < 3; ++k) out[k] = value_of((word >> kFieldShift[k]) & 0x3FF, flag);
}

// Whether the format keeps all three values within 2^-5 relative: their exponents share one of the
// two high nibbles the flag can name (anything else is crushed by the paper's rule).
inline bool triple_in_range(const uint32_t bits[3]) {
  const uint32_t n = high_nibble(bits[0]);
  return (n == kHighNibbleIn || n == kHighNibbleLow) && high_nibble(bits[1]) == n &&
         high_nibble(bits[2]) == n;
}

}  // namespace wt::scalednn
