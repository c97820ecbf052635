// The host kernels run as Kokkos parallel_for loops (ops/host/host_for.hpp): on several threads
// (a Kokkos with its OpenMP backend) an elementwise layer gives exactly what one thread gives,
// and what the scalar formula gives. Skipped where Kokkos's host space is Serial (Debian's).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gradcheck.hpp"
#include "ops/host/elementwise.hpp"
#include "ops/host/host_for.hpp"

namespace wt::testing {
namespace {

TEST(HostKernels, ElementwiseLayerOnTwoThreads) {
  if (ops::host_threads() < 2)
    GTEST_SKIP() << "Kokkos's host space has " << ops::host_threads()
                 << " thread(s) (Serial): build against Kokkos with OpenMP to run this";
  const int64_t n = 1 << 18;
  std::vector<float> x(n), y(n), dx(n), dy(n, 1.0f);
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float((i * 37) % 201) / 50.0f - 2.0f;
  ops::gelu_forward(x.data(), y.data(), n);
  ops::relu_backward(x.data(), dy.data(), dx.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(y[size_t(i)],
                0.5f * x[size_t(i)] * (1.0f + std::erf(x[size_t(i)] / std::sqrt(2.0f))), 1e-5f);
    ASSERT_EQ(dx[size_t(i)], x[size_t(i)] > 0.0f ? 1.0f : 0.0f);
  }
  // The gelu layer itself, through its gradient check, on these threads.
  check_layer_gradients("type = \"gelu\"", {{64}}, 4);
}

// The kernels that reduce across rows: layer norm's dw/db (an array reduction), the embedding's
// scatter-add with repeated ids (column stripes), and the loss's sums, on 2 threads.
TEST(HostKernels, ReducingLayersOnTwoThreads) {
  if (ops::host_threads() < 2)
    GTEST_SKIP() << "Kokkos's host space has " << ops::host_threads()
                 << " thread(s) (Serial): build against Kokkos with OpenMP to run this";
  check_layer_gradients("type = \"layernorm\"", {{16, 40}}, 4);
  GradCheckOptions tokens;
  tokens.integer_inputs = 5;  // 64 tokens over a vocabulary of 5: every id repeats
  check_layer_gradients("type = \"embedding\"\nvocab = 5\ndim = 40", {{64}}, 2, tokens);
  GradCheckOptions labels;
  labels.labels = std::vector<int32_t>(64);
  for (size_t i = 0; i < labels.labels.size(); ++i) labels.labels[i] = int32_t(i % 5);
  check_layer_gradients("type = \"softmax_xent\"", {{5}}, 64, labels);
}

TEST(HostKernels, KokkosHostSpaceRunsTheKernels) {
  // Whatever the backend, the kernels run and agree with the loop they replaced.
  const int64_t n = 1000;
  std::vector<float> a(n), b(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    a[size_t(i)] = float(i) - 500.0f;
    b[size_t(i)] = 0.5f * float(i);
  }
  const float* xs[3] = {a.data(), b.data(), a.data()};
  ops::sum_arrays(xs, 3, y.data(), n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[size_t(i)], (a[size_t(i)] + b[size_t(i)]) + a[size_t(i)]);
  EXPECT_GE(ops::host_threads(), 1);
}

}  // namespace
}  // namespace wt::testing

namespace wt::testing {
namespace {

// The dropout mask is counter based: entries 2j, 2j+1 are the halves of SplitMix64's draw j + 1
// from the seed, exactly what a generator drawing in sequence gives, with no state in the kernel.
TEST(HostKernels, DropoutMaskIsAFunctionOfSeedAndIndex) {
  const float p = 0.3f, keep = 1.0f / (1.0f - p);
  const uint32_t threshold = static_cast<uint32_t>(double(p) * 4294967296.0);
  for (const int64_t n : {1, 2, 7, 64}) {
    std::vector<float> mask(static_cast<size_t>(n), 0.0f);
    ops::dropout_mask(p, 12345, mask.data(), n);
    Rng sequential(12345);
    for (int64_t i = 0; i < n; i += 2) {
      const uint64_t u = sequential.next_u64();
      EXPECT_EQ(mask[size_t(i)], uint32_t(u) >= threshold ? keep : 0.0f) << n << " " << i;
      if (i + 1 < n) {
        EXPECT_EQ(mask[size_t(i + 1)], uint32_t(u >> 32) >= threshold ? keep : 0.0f) << i;
      }
    }
  }
  std::vector<float> a(64), b(64);
  ops::dropout_mask(p, 1, a.data(), 64);
  ops::dropout_mask(p, 2, b.data(), 64);
  EXPECT_NE(a, b) << "another seed, another mask";
}

// A batch's masks in one launch: row r is the mask of sample first_sample + r's own seed,
// Rng(key ^ salt).fork(sample), whether the key comes by value or from memory.
TEST(HostKernels, DropoutMasksAreEachSamplesMask) {
  const int64_t rows = 5, per_row = 9;
  ops::DropoutMasks d;
  d.p = 0.4f, d.key = 0x1234abcdull, d.salt = 0x99ull, d.first_sample = 17;
  d.rows = rows, d.per_row = per_row;
  std::vector<float> by_value(size_t(rows * per_row), -1.0f), expected(by_value.size());
  ops::dropout_masks(d, by_value.data());
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t seed = Rng(d.key ^ d.salt).fork(uint64_t(d.first_sample + r)).state();
    ops::dropout_mask(d.p, seed, expected.data() + r * per_row, per_row);
  }
  EXPECT_EQ(by_value, expected);
  const uint64_t in_memory = d.key;
  d.key = 0;
  d.step_key = &in_memory;
  std::vector<float> from_memory(by_value.size(), -1.0f);
  ops::dropout_masks(d, from_memory.data());
  EXPECT_EQ(from_memory, expected) << "the key read from memory";
}

}  // namespace
}  // namespace wt::testing
