// The GPU's fused epilogues (ops/portable/rows.hpp: AddRowRelu for a linear layer's bias per
// column, AddChannelBiasRelu for a convolution's per channel of NCHW) run here on the host: bit
// for bit the separate bias add (the host's AddRow, cuDNN's AddTensor: y + bias) and ReLU they
// replace, with values around zero on both sides so the mask decides.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ops/portable/elementwise.hpp"
#include "ops/portable/rows.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

std::vector<float> draws(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(BiasReluEpilogues, ALinearLayersIsItsBiasAddThenReLU) {
  const int64_t rows = 37, width = 21;
  const auto product = draws(rows * width, 1), bias = draws(width, 2);
  std::vector<float> fused = product, separate(product.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) {
      kern::AddRowRelu{bias.data(), width, fused.data()}(r, j);
      kern::AddRow{product.data(), bias.data(), width, separate.data()}(r, j);
    }
  for (int64_t i = 0; i < rows * width; ++i) kern::ReluForward{separate.data(), separate.data()}(i);
  EXPECT_TRUE(same_bits(fused, separate));
}

TEST(BiasReluEpilogues, AConvolutionsIsItsChannelBiasAddThenReLU) {
  const int64_t batch = 3, channels = 5, pixels = 49;
  const auto product = draws(batch * channels * pixels, 3), bias = draws(channels, 4);
  std::vector<float> fused = product, separate = product;
  for (int64_t plane = 0; plane < batch * channels; ++plane)
    for (int64_t p = 0; p < pixels; ++p) {
      kern::AddChannelBiasRelu{bias.data(), channels, pixels, fused.data()}(plane, p);
      float& v = separate[size_t(plane * pixels + p)];
      v = bias[size_t(plane % channels)] + v;  // AddTensor: 1 * bias + 1 * y
      v = kern::ReluForward::at(v);
    }
  EXPECT_TRUE(same_bits(fused, separate));
}

}  // namespace
}  // namespace wt
