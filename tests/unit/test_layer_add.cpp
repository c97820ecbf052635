#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"

namespace wt::testing {
namespace {

TEST(LayerAdd, ForwardSumsAllInputs) {
  StandaloneLayer s = make_layer("type = \"add\"", {{3}, {3}, {3}});
  Tensor a = Tensor::empty({1, 3}, wt::testing::memory()),
         b = Tensor::empty({1, 3}, wt::testing::memory()),
         c = Tensor::empty({1, 3}, wt::testing::memory());
  for (int i = 0; i < 3; ++i) {
    a.data()[i] = float(i);
    b.data()[i] = 10.0f * i;
    c.data()[i] = -0.5f;
  }
  Tensor out;
  Saved saved;
  LayerContext ctx = wt::testing::layer_context();
  s.layer->forward({&a, &b, &c}, out, saved, ctx);
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(out.data()[i], 11.0f * i - 0.5f);

  Tensor dout = Tensor::empty({1, 3}, wt::testing::memory());
  dout.fill(2.0f);
  Tensor da, dc;
  s.layer->backward({&a, &b, &c}, out, dout, {&da, nullptr, &dc}, saved, ctx);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FLOAT_EQ(da.data()[i], 2.0f);
    EXPECT_FLOAT_EQ(dc.data()[i], 2.0f);
  }
  EXPECT_NE(da.data(), dc.data()) << "gradients must not share storage";
}

TEST(LayerAdd, GradCheckTwoAndThreeInputs) {
  check_layer_gradients("type = \"add\"", {{2, 3, 3}, {2, 3, 3}}, 2);
  check_layer_gradients("type = \"add\"", {{7}, {7}, {7}}, 3);
}

TEST(LayerAdd, RejectsOneInputAndMismatchedShapes) {
  EXPECT_THROW(make_layer("type = \"add\"", {{4}}), std::invalid_argument);
  EXPECT_THROW(make_layer("type = \"add\"", {{4}, {5}}), std::invalid_argument);
  EXPECT_THROW(make_layer("type = \"add\"", {{2, 2}, {4}}), std::invalid_argument);
}

}  // namespace
}  // namespace wt::testing
