// global_avgpool: finite-difference gradients and hand-computed means.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"

namespace wt::testing {
namespace {

TEST(LayerGlobalAvgPool, Gradients) {
  check_layer_gradients("type = \"global_avgpool\"", {{3, 4, 5}}, 2);
}

TEST(LayerGlobalAvgPool, ForwardValues) {
  StandaloneLayer s = make_layer("type = \"global_avgpool\"", {{2, 2, 2}});
  EXPECT_EQ(s.out_shape, (Shape{2}));
  Tensor x = Tensor::empty({1, 2, 2, 2}, wt::testing::memory());
  const float xv[8] = {1, 2, 3, 6, -1, -1, -1, 7};
  std::copy(xv, xv + 8, x.data());
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, wt::testing::layer_context());
  ASSERT_EQ(out.shape(), (Shape{1, 2}));
  EXPECT_FLOAT_EQ(out.data()[0], 3);
  EXPECT_FLOAT_EQ(out.data()[1], 1);
  EXPECT_THROW(make_layer("type = \"global_avgpool\"", {{5}}), std::invalid_argument);
}

}  // namespace
}  // namespace wt::testing
