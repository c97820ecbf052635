// The host linear layer's forward (ops/host/linear.cpp), which picks between two GEMM
// formulations by shape: each against a double-precision sum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/host/linear.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

// linear_forward against a double-precision sum, at shapes on both sides of its choice between
// X * W^T and (W * X^T)^T (ops/host/linear.cpp: LeNet's fc1 at 32 rows takes the second; mlp's
// fc1, 8 rows and the transformer's shape the first), with and without bias.
TEST(HostLinear, ForwardMatchesADoubleSumEitherWayRound) {
  struct Case {
    int64_t rows, in, out;
  };
  Rng rng(3);
  for (const Case c : {Case{32, 3136, 256}, Case{64, 3136, 256}, Case{8, 3136, 256},
                       Case{64, 784, 256}, Case{300, 128, 512}}) {
    std::vector<float> x(size_t(c.rows * c.in)), w(size_t(c.out * c.in)), b(size_t(c.out));
    for (float& v : x) v = rng.uniform(-1.0f, 1.0f);
    for (float& v : w) v = rng.uniform(-0.05f, 0.05f);
    for (float& v : b) v = rng.uniform(-1.0f, 1.0f);
    for (const bool bias : {true, false}) {
      std::vector<float> y(size_t(c.rows * c.out), 99.0f);
      ops::linear_forward(x.data(), w.data(), bias ? b.data() : nullptr, c.rows, c.in, c.out,
                          y.data(), Precision::Fp32);
      double worst = 0.0;
      for (int64_t r = 0; r < c.rows; ++r)
        for (int64_t o = 0; o < c.out; ++o) {
          double sum = bias ? b[size_t(o)] : 0.0;
          for (int64_t i = 0; i < c.in; ++i)
            sum += double(x[size_t(r * c.in + i)]) * double(w[size_t(o * c.in + i)]);
          worst = std::max(worst, std::fabs(sum - double(y[size_t(r * c.out + o)])));
        }
      EXPECT_LT(worst, 1e-4) << c.rows << "x" << c.in << " -> " << c.out
                             << (bias ? " with bias" : " without bias");
    }
  }
}

}  // namespace
}  // namespace wt
