// The weight codecs (compress/): ScaleDNN's 3-in-1 format bit for bit against the research notes'
// golden table, its error bound on in-range triples, the paper's literal out-of-range rule, the
// raw mode's exact side list, every tail length, and bf16.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "compress/scalednn_format.hpp"
#include "compress/weight_codec.hpp"

namespace {

wt::WeightCodec codec(const std::string& kind, const std::string& out_of_range = "raw",
                      const std::string& rounding = "truncate") {
  wt::WeightCodec c;
  c.kind = kind;
  c.out_of_range = out_of_range;
  c.rounding = rounding;
  return c;
}

struct Coded {
  std::vector<uint32_t> words;
  std::vector<float> side, decoded;
};

Coded round_trip(const wt::WeightCodec& c, const std::vector<float>& x) {
  Coded r;
  const int64_t n = int64_t(x.size());
  r.words.assign(size_t(wt::encoded_words(c, n)), 0);
  r.side.assign(x.size() + 2, 0.0f);
  r.side.resize(size_t(wt::encode_weights(c, x.data(), n, r.words.data(), r.side.data())));
  EXPECT_EQ(wt::side_floats(c, r.words.data(), n), int64_t(r.side.size()));
  r.decoded.assign(x.size(), 0.0f);
  wt::decode_weights(c, r.words.data(), n, r.side.data(), r.decoded.data());
  return r;
}

// The research notes' §4.2 table, computed with the layout of scalednn_format.hpp.
TEST(ScaleDnnCodec, GoldenTableBitForBit) {
  struct Row {
    float in[3];
    uint32_t word;
    float out[3];
  };
  const Row rows[] = {
      {{0.1f, -0.05f, 0.0123f}, 0x973D4D12u, {0.099609375f, -0.0498046875f, 0.01220703125f}},
      {{1.0f, 1.9999f, -1.0f}, 0x9E07FFE0u, {1.0f, 1.96875f, -1.0f}},
      {{0.1f, 1e-5f, 0.02f}, 0x17372528u, {1.52e-6f, 9.775e-6f, 2.98e-7f}},
      {{0.0f, 0.5f, -0.25f}, 0x000703A0u, {4.66e-10f, 7.63e-6f, -3.81e-6f}},
      {{2.5f, 0.1f, 0.1f}, 0x0085CD73u, {5.82e-10f, 1.52e-6f, 1.52e-6f}},
  };
  for (const Row& r : rows) {
    const Coded c = round_trip(codec("scalednn", "paper"), {r.in[0], r.in[1], r.in[2]});
    ASSERT_EQ(c.words.size(), 1u);
    EXPECT_EQ(c.words[0], r.word) << std::hex << c.words[0] << " for " << r.in[0];
    EXPECT_TRUE(c.side.empty());
    for (int k = 0; k < 3; ++k)  // the table prints 3-4 significant digits
      EXPECT_NEAR(c.decoded[size_t(k)], r.out[k], std::abs(r.out[k]) * 2e-3) << r.in[k];
  }
}

// In range (all three exponents' high nibbles 0111): the sign kept, |x^| <= |x|, relative error
// below 2^-5, and x^ is x with its low 18 mantissa bits cleared.
TEST(ScaleDnnCodec, InRangeTriplesKeepSignAndTruncateWithinTheBound) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> magnitude(std::ldexp(1.0f, -15), 1.9999f);
  std::vector<float> x(30000);
  for (float& v : x) v = (gen() % 2 ? -1.0f : 1.0f) * magnitude(gen);
  for (const char* mode : {"paper", "raw"}) {
    const Coded c = round_trip(codec("scalednn", mode), x);
    EXPECT_TRUE(c.side.empty()) << mode;
    for (size_t i = 0; i < x.size(); ++i) {
      const float y = c.decoded[i];
      ASSERT_EQ(std::signbit(y), std::signbit(x[i])) << x[i];
      ASSERT_LE(std::abs(y), std::abs(x[i])) << x[i];
      ASSERT_LT(std::abs(y - x[i]), std::abs(x[i]) * std::ldexp(1.0f, -5)) << x[i];
      ASSERT_EQ(wt::scalednn::bits_of(y), wt::scalednn::bits_of(x[i]) & ~0x3FFFFu) << x[i];
    }
  }
}

// The paper's rule, literally: a triple mixing in-range values with a zero, a tiny value or one
// >= 2 takes flag 0, so its in-range members come back divided by 2^16; zero decodes to 2^-31.
TEST(ScaleDnnCodec, PaperModeCrushesMixedTriples) {
  const Coded c = round_trip(codec("scalednn", "paper"), {0.0f, 0.5f, -0.25f, 3.0f, 0.1f, 0.2f});
  EXPECT_EQ(c.decoded[0], std::ldexp(1.0f, -31));
  EXPECT_EQ(c.decoded[1], 0.5f / 65536);
  EXPECT_EQ(c.decoded[2], -0.25f / 65536);
  EXPECT_LT(c.decoded[3], 1e-6f);  // 3.0 is never representable
  EXPECT_NEAR(c.decoded[4], 0.1f / 65536, 1e-7f);
}

// Raw mode: such triples travel exactly in the side list; every value within 2^-5 relative and
// zeros stay zero, whatever the mix.
TEST(ScaleDnnCodec, RawModeKeepsEveryValueWithinTheBound) {
  std::mt19937 gen(11);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> x(9000);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = i % 97 == 0 ? 0.0f : i % 89 == 0 ? 5.0f : normal(gen);
  const Coded c = round_trip(codec("scalednn", "raw"), x);
  EXPECT_FALSE(c.side.empty());
  EXPECT_LT(c.side.size(), x.size() / 2);  // most triples still travel packed
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_LE(std::abs(c.decoded[i] - x[i]), std::abs(x[i]) * std::ldexp(1.0f, -5)) << x[i];
  for (size_t i = 0; i < x.size(); i += 97) EXPECT_EQ(c.decoded[i], 0.0f);
}

// Triples never straddle the end: 1, 2 or 3 trailing values, each decoded in place.
TEST(ScaleDnnCodec, EveryTailLength) {
  for (int n = 1; n <= 7; ++n) {
    std::vector<float> x;
    for (int i = 0; i < n; ++i) x.push_back(0.3f + 0.1f * float(i));
    const Coded c = round_trip(codec("scalednn"), x);
    EXPECT_EQ(int(c.words.size()), (n + 2) / 3);
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(c.decoded[size_t(i)], x[size_t(i)], x[size_t(i)] * 0.032f) << n << " " << i;
  }
}

TEST(ScaleDnnCodec, NearestRoundingHalvesTheBound) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> u(0.01f, 1.9f);
  std::vector<float> x(3000);
  for (float& v : x) v = u(gen);
  const Coded c = round_trip(codec("scalednn", "raw", "nearest"), x);
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_LE(std::abs(c.decoded[i] - x[i]), std::abs(x[i]) * std::ldexp(1.0f, -6) * 1.0001f);
}

TEST(Bf16Codec, KeepsTheTopSixteenBits) {
  const std::vector<float> x = {0.1f, -3.5f, 0.0f, 1e-20f, 65504.0f};
  const Coded c = round_trip(codec("bf16"), x);
  EXPECT_EQ(c.words.size(), 3u);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(wt::scalednn::bits_of(c.decoded[i]), wt::scalednn::bits_of(x[i]) & 0xFFFF0000u);
}

}  // namespace
