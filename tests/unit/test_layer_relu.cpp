#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"

namespace wt::testing {
namespace {

TEST(LayerRelu, ForwardAndBackwardValues) {
  StandaloneLayer s = make_layer("type = \"relu\"", {{4}});
  EXPECT_EQ(s.out_shape, (Shape{4}));
  Tensor x = Tensor::empty({1, 4}, wt::testing::memory());
  const float xs[] = {-1.5f, 0.0f, 2.5f, 1e-3f};
  std::copy(xs, xs + 4, x.data());
  Tensor out;
  Saved saved;
  LayerContext ctx = wt::testing::layer_context();
  s.layer->forward({&x}, out, saved, ctx);
  ASSERT_EQ(out.shape(), (Shape{1, 4}));
  const float want[] = {0.0f, 0.0f, 2.5f, 1e-3f};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(out.data()[i], want[i]);

  Tensor dout = Tensor::empty({1, 4}, wt::testing::memory());
  dout.fill(3.0f);
  Tensor dx;
  s.layer->backward({&x}, out, dout, {&dx}, saved, ctx);
  const float want_dx[] = {0.0f, 0.0f, 3.0f, 3.0f};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(dx.data()[i], want_dx[i]);
}

TEST(LayerRelu, GradCheck) {
  GradCheckOptions opt;
  opt.eps = 1e-3;  // small enough that no checked input straddles the kink at 0
  check_layer_gradients("type = \"relu\"", {{3, 5, 5}}, 4, opt);
}

TEST(LayerRelu, RejectsTwoInputs) {
  EXPECT_THROW(make_layer("type = \"relu\"", {{4}, {4}}), std::invalid_argument);
}

}  // namespace
}  // namespace wt::testing
