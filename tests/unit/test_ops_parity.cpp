// The ops-parity harness that tools/gpu-check.sh runs against the CUDA backend (tests/cuda/), run
// here on the host: it must reach every op, pass host against host, and catch a wrong kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "cuda/ops_parity.hpp"
#include "ops/host/host_ops.hpp"

namespace {

TEST(OpsParity, HostAgainstHostPassesEveryComparison) {
  wt::HostOps host;
  wt::parity::HostMemory memory;
  const auto outcomes = wt::parity::compare_backends(host, host, memory, 7, nullptr);
  EXPECT_GE(outcomes.size(), 60u);  // every op of the interface, most with several outputs
  for (const auto& o : outcomes) EXPECT_TRUE(o.passed()) << o.op << ": " << o.worst;
}

// bf16 products: host against host passes; an FP32 device (one that skipped the rounding) fails
// every GEMM comparison at the bf16 GEMM tolerance.
TEST(OpsParity, Bf16ProductsPassAndCatchAnUnroundedDevice) {
  const wt::HostOps bf16(wt::Precision::Bf16), fp32;
  wt::parity::HostMemory memory;
  const auto same = wt::parity::compare_bf16_products(bf16, bf16, memory, 7, nullptr);
  EXPECT_GE(same.size(), 19u);
  for (const auto& o : same) EXPECT_TRUE(o.passed()) << o.op << ": " << o.worst;
  int gemm_failures = 0;
  for (const auto& o : wt::parity::compare_bf16_products(bf16, fp32, memory, 7, nullptr))
    gemm_failures += !o.passed() && o.op.rfind("gemm", 0) == 0;
  EXPECT_EQ(gemm_failures, 3);
}

// A backend whose ReLU passes negative values through and whose layer-norm backward drops the
// bias gradient: the two comparisons that read them fail, and only those.
class BrokenOps final : public wt::HostOps {
 public:
  void relu_forward(const float* x, float* y, int64_t n) const override { std::copy(x, x + n, y); }
  void layer_norm_backward(const float* x, const float* dy, const float* w, const float* stats,
                           int64_t rows, int64_t dim, float* dw, float* /*db*/,
                           float* dx) const override {
    std::vector<float> dropped(static_cast<size_t>(dim), 0.0f);
    HostOps::layer_norm_backward(x, dy, w, stats, rows, dim, dw, dropped.data(), dx);
  }
};

// The comparisons a backend fails against the host.
std::vector<std::string> failed_comparisons(const wt::OpsBackend& device) {
  wt::HostOps host;
  wt::parity::HostMemory memory;
  std::vector<std::string> failed;
  for (const auto& o : wt::parity::compare_backends(host, device, memory, 7, nullptr))
    if (!o.passed()) failed.push_back(o.op);
  return failed;
}

TEST(OpsParity, AWrongKernelFailsItsComparison) {
  // relu_backward reads the broken output as its mask, but y > 0 exactly where x > 0 either way.
  EXPECT_EQ(
      failed_comparisons(BrokenOps{}),
      (std::vector<std::string>{"relu_forward", "relu_forward (a view one float in)",
                                "layer_norm_backward db", "layer_norm_backward db (4096 x 256)"}));
}

// A backend whose batch-norm backward differs by one ulp from call to call (as a sum joined in the
// order blocks finish would): within every tolerance, so only the run-twice check catches it.
class FlakyOps final : public wt::HostOps {
 public:
  void batchnorm_backward(const float* x, const float* dy, const wt::ops::BatchNormShape& s,
                          const float* gamma, const float* mean, const float* invstd,
                          bool batch_stats, float* dx, float* dgamma, float* dbeta) const override {
    HostOps::batchnorm_backward(x, dy, s, gamma, mean, invstd, batch_stats, dx, dgamma, dbeta);
    if (++calls_ % 2 == 0) dx[0] = std::nextafter(dx[0], 1e30f);
  }

 private:
  mutable int calls_ = 0;
};

TEST(OpsParity, ARunToRunDifferenceFailsTheRepeatCheck) {
  EXPECT_EQ(failed_comparisons(FlakyOps{}),
            (std::vector<std::string>{"batchnorm_backward dx run twice"}));
}

// A backend whose weights' half of a convolution's backward (dx null) forgets the bias gradient:
// every whole pass is right, so only the halves' comparison with the whole pass catches it.
class HalvesDropBiasOps final : public wt::HostOps {
 public:
  void conv2d_backward(const wt::ops::Conv2dGeometry& g, const float* x, const float* w,
                       const float* dy, float* dx, float* dw, float* dbias,
                       const wt::Scratch& scratch) const override {
    std::vector<float> dropped(static_cast<size_t>(g.out_channels));
    HostOps::conv2d_backward(g, x, w, dy, dx, dw, dx ? dbias : dropped.data(), scratch);
  }
};

TEST(OpsParity, AWrongHalfFailsTheHalvesComparison) {
  EXPECT_EQ(
      failed_comparisons(HalvesDropBiasOps{}),
      (std::vector<std::string>{"conv2d_backward in halves dbias (3x3/1, padded) as the whole pass",
                                "conv2d_backward in halves dbias (5x5/2) as the whole pass"}));
}

// A backend that takes the learning rate from a graphed step's per-step record but the first-step
// rule from the by-value field (the bug the host kernels had): only the record's lines fail.
class RecordFirstIgnoredOps final : public wt::HostOps {
 public:
  void sgd_update(const wt::ops::SgdUpdate& u, int64_t n, float* w, const float* g, float* b,
                  const float* skip) const override {
    wt::ops::SgdUpdate by_value = u;
    if (u.per_step) by_value.lr = u.per_step[0];
    by_value.per_step = nullptr;
    HostOps::sgd_update(by_value, n, w, g, b, skip);
  }
};

TEST(OpsParity, AnIgnoredFirstStepRuleFailsTheRecordComparison) {
  EXPECT_EQ(failed_comparisons(RecordFirstIgnoredOps{}),
            (std::vector<std::string>{"sgd_update (per-step record: lr, first) w",
                                      "sgd_update (per-step record: lr, first) momentum"}));
}

}  // namespace
