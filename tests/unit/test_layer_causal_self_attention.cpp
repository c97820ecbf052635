// causal_self_attention: finite-difference gradients, forward against a direct loop-by-loop
// reference, and the causal property (no position sees a later one).
#include <gtest/gtest.h>

#include <cmath>

#include "gradcheck.hpp"
#include "test_memory.hpp"
#include "util/input_error.hpp"

namespace wt::testing {
namespace {

TEST(LayerCausalSelfAttention, Gradients) {
  GradCheckOptions opt;
  opt.max_entries = 48;
  check_layer_gradients("type = \"causal_self_attention\"\nheads = 2", {{5, 4}}, 2, opt);
}

TEST(LayerCausalSelfAttention, SingleHeadGradients) {
  check_layer_gradients("type = \"causal_self_attention\"\nheads = 1", {{3, 6}}, 1);
}

// Plain loops, no GEMM: q/k/v projections, masked softmax per head, output projection.
std::vector<float> reference_forward(StandaloneLayer& s, const Tensor& x, int64_t T, int64_t d,
                                     int64_t heads) {
  const float* wqkv = s.params[0].value.data();
  const float* bqkv = s.params[1].value.data();
  const float* wo = s.params[2].value.data();
  const float* bo = s.params[3].value.data();
  const int64_t n = x.dim(0), dh = d / heads;
  std::vector<float> y(size_t(n * T * d));
  for (int64_t s_ = 0; s_ < n; ++s_) {
    const float* xs = x.data() + s_ * T * d;
    std::vector<double> qkv(size_t(T * 3 * d));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < 3 * d; ++o) {
        double acc = bqkv[o];
        for (int64_t i = 0; i < d; ++i) acc += double(wqkv[o * d + i]) * xs[t * d + i];
        qkv[size_t(t * 3 * d + o)] = acc;
      }
    std::vector<double> context(size_t(T * d), 0.0);
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t t = 0; t < T; ++t) {
        std::vector<double> w(size_t(t + 1));
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j <= t; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < dh; ++e)
            dot += qkv[size_t(t * 3 * d + h * dh + e)] * qkv[size_t(j * 3 * d + d + h * dh + e)];
          w[size_t(j)] = dot / std::sqrt(double(dh));
          mx = std::max(mx, w[size_t(j)]);
        }
        for (auto& v : w) sum += (v = std::exp(v - mx));
        for (int64_t j = 0; j <= t; ++j)
          for (int64_t e = 0; e < dh; ++e)
            context[size_t(t * d + h * dh + e)] +=
                w[size_t(j)] / sum * qkv[size_t(j * 3 * d + 2 * d + h * dh + e)];
      }
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < d; ++o) {
        double acc = bo[o];
        for (int64_t i = 0; i < d; ++i) acc += double(wo[o * d + i]) * context[size_t(t * d + i)];
        y[size_t((s_ * T + t) * d + o)] = float(acc);
      }
  }
  return y;
}

TEST(LayerCausalSelfAttention, ForwardMatchesDirectReference) {
  const int64_t T = 6, d = 8, heads = 2;
  StandaloneLayer s = make_layer("type = \"causal_self_attention\"\nheads = 2", {{T, d}});
  Rng rng(11);
  for (auto& p : s.params)  // non-zero biases too
    for (int64_t i = 0; i < p.value.numel(); ++i) p.value.data()[i] = rng.uniform(-0.5f, 0.5f);
  Tensor x = random_tensor({2, T, d}, rng);
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, wt::testing::layer_context());
  const std::vector<float> want = reference_forward(s, x, T, d, heads);
  ASSERT_EQ(out.numel(), int64_t(want.size()));
  for (int64_t i = 0; i < out.numel(); ++i) EXPECT_NEAR(out.data()[i], want[size_t(i)], 1e-5) << i;
}

TEST(LayerCausalSelfAttention, EarlierPositionsIgnoreLaterOnes) {
  const int64_t T = 5, d = 4;
  StandaloneLayer s = make_layer("type = \"causal_self_attention\"\nheads = 2", {{T, d}});
  Rng rng(2);
  Tensor x = random_tensor({1, T, d}, rng);
  Tensor before, after;
  Saved saved;
  s.layer->forward({&x}, before, saved, wt::testing::layer_context());
  for (int64_t i = 3 * d; i < T * d; ++i) x.data()[i] += 1.0f;  // change positions 3 and 4
  s.layer->forward({&x}, after, saved, wt::testing::layer_context());
  for (int64_t i = 0; i < 3 * d; ++i) EXPECT_EQ(before.data()[i], after.data()[i]) << i;
  bool later_changed = false;
  for (int64_t i = 3 * d; i < T * d; ++i) later_changed |= before.data()[i] != after.data()[i];
  EXPECT_TRUE(later_changed);
}

TEST(LayerCausalSelfAttention, RejectsBadShapesAndKeys) {
  EXPECT_THROW(make_layer("type = \"causal_self_attention\"\nheads = 3", {{4, 8}}),
               std::invalid_argument);  // 3 does not divide 8
  EXPECT_THROW(make_layer("type = \"causal_self_attention\"\nheads = 2", {{8}}),
               std::invalid_argument);
  EXPECT_THROW(make_layer("type = \"causal_self_attention\"", {{4, 8}}), InputError);
  EXPECT_THROW(make_layer("type = \"causal_self_attention\"\nheads = 0", {{4, 8}}), InputError);
}

}  // namespace
}  // namespace wt::testing
