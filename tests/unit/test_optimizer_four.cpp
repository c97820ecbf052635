// The optimizer updates as the GPU runs them four parameters a thread (four(q): 16-byte accesses,
// ops/cuda/cuda_launch.cuh's cuda_for4) and as the host runs them (operator()), against the
// formulas as they were before the per-element step was factored out: bit for bit, for every
// SGD variant (momentum or none, first step, Nesterov, the graph's per-step record) and AdamW,
// on lengths with every tail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "ops/portable/optimizer_updates.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

struct State {
  std::vector<float> w, g, b, v;
  State(int64_t n, uint64_t seed) : w(size_t(n)), g(size_t(n)), b(size_t(n)), v(size_t(n)) {
    Rng rng(seed);
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] = rng.uniform(-1, 1), g[i] = rng.uniform(-1, 1), b[i] = rng.uniform(-1, 1);
      v[i] = rng.uniform(0, 1);
    }
  }
  bool operator==(const State& o) const {
    auto same = [](const std::vector<float>& x, const std::vector<float>& y) {
      return std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
    };
    return same(w, o.w) && same(g, o.g) && same(b, o.b) && same(v, o.v);
  }
};

// SGD as optimizer_updates.hpp wrote it before the step became updated().
void old_sgd(const ops::SgdUpdate& u, State& s) {
  const float lr = u.per_step ? u.per_step[0] : u.lr;
  const bool first = u.per_step ? u.per_step[1] != 0.0f : u.first;
  for (size_t i = 0; i < s.w.size(); ++i) {
    float d = s.g[i] + u.weight_decay * s.w[i];
    if (u.momentum != 0) {
      const float buf = first ? d : u.momentum * s.b[i] + d;
      s.b[i] = buf;
      d = u.nesterov ? d + u.momentum * buf : buf;
    }
    s.w[i] = s.w[i] - lr * d;
  }
}

void old_adamw(const ops::AdamWUpdate& k, State& s) {
  for (size_t i = 0; i < s.w.size(); ++i) {
    const float gi = s.g[i];
    const float mi = k.b1 * s.b[i] + k.one_minus_b1 * gi;
    const float vi = k.b2 * s.v[i] + k.one_minus_b2 * gi * gi;
    s.b[i] = mi;
    s.v[i] = vi;
    const float denom = sqrtf(vi) / k.bias2_sqrt + k.eps;
    s.w[i] = s.w[i] * k.decay - k.step_size * mi / denom;
  }
}

template <class Step>
void run_one(const Step& step, int64_t n) {
  for (int64_t i = 0; i < n; ++i) step(i);
}

template <class Step>
void run_four(const Step& step, int64_t n) {
  for (int64_t q = 0; q < n / 4; ++q) step.four(q);
  for (int64_t i = 4 * (n / 4); i < n; ++i) step(i);
}

TEST(OptimizerFour, SgdVariantsAreTheirFormulaOneAndFourAtATime) {
  const float record[] = {0.05f, 1.0f};  // a graph's per-step record: lr, the first-step rule
  std::vector<ops::SgdUpdate> updates;
  for (float mu : {0.0f, 0.9f})
    for (bool first : {false, true})
      for (bool nesterov : {false, true}) updates.push_back({0.1f, 1e-4f, mu, first, nesterov});
  updates.push_back({0.1f, 1e-4f, 0.9f, false, false, record});
  for (const ops::SgdUpdate& u : updates)
    for (int64_t n : {1, 3, 4, 7, 1001, 1004}) {
      State want(n, 5), one(n, 5), four(n, 5);
      old_sgd(u, want);
      kern::with_sgd_step(u, one.w.data(), one.g.data(), one.b.data(),
                          [&](const auto& step) { run_one(step, n); });
      kern::with_sgd_step(u, four.w.data(), four.g.data(), four.b.data(),
                          [&](const auto& step) { run_four(step, n); });
      EXPECT_TRUE(one == want) << "mu " << u.momentum << " first " << u.first << " nesterov "
                               << u.nesterov << " record " << (u.per_step != nullptr) << ", n "
                               << n;
      EXPECT_TRUE(four == want) << "four at a time: mu " << u.momentum << ", n " << n;
    }
}

TEST(OptimizerFour, AdamWIsItsFormulaOneAndFourAtATime) {
  ops::AdamWUpdate k;
  k.decay = 0.999f, k.b1 = 0.9f, k.one_minus_b1 = 0.1f, k.b2 = 0.999f, k.one_minus_b2 = 0.001f;
  k.step_size = 1e-3f, k.bias2_sqrt = 0.3f, k.eps = 1e-8f;
  for (int64_t n : {1, 2, 5, 8, 1003}) {
    State want(n, 9), one(n, 9), four(n, 9);
    old_adamw(k, want);
    run_one(kern::AdamWStep{k, one.w.data(), one.g.data(), one.b.data(), one.v.data()}, n);
    run_four(kern::AdamWStep{k, four.w.data(), four.g.data(), four.b.data(), four.v.data()}, n);
    EXPECT_TRUE(one == want) << "n " << n;
    EXPECT_TRUE(four == want) << "four at a time, n " << n;
  }
}

}  // namespace
}  // namespace wt
