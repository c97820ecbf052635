// The ops-parity harness that tools/gpu-check.sh runs against the CUDA backend (tests/cuda/), run
// here on the host: it must reach every op, pass host against host, and catch a wrong kernel.
#include <gtest/gtest.h>

#include <algorithm>

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

TEST(OpsParity, AWrongKernelFailsItsComparison) {
  wt::HostOps host;
  BrokenOps broken;
  wt::parity::HostMemory memory;
  std::vector<std::string> failed;
  for (const auto& o : wt::parity::compare_backends(host, broken, memory, 7, nullptr))
    if (!o.passed()) failed.push_back(o.op);
  // relu_backward reads the broken output as its mask, but y > 0 exactly where x > 0 either way.
  EXPECT_EQ(failed, (std::vector<std::string>{"relu_forward", "layer_norm_backward db"}));
}

}  // namespace
