// avgpool2d: finite-difference gradients and hand-computed values, including PyTorch's
// count_include_pad=True divisor at padded borders.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"
#include "util/input_error.hpp"

namespace wt::testing {
namespace {

TEST(LayerAvgPool2d, GradientsKernel2) {
  check_layer_gradients("type = \"avgpool2d\"\nkernel = 2", {{2, 4, 6}}, 2);
}

TEST(LayerAvgPool2d, GradientsOverlappingPadded) {
  check_layer_gradients("type = \"avgpool2d\"\nkernel = 3\nstride = 2\npadding = 1", {{2, 5, 5}},
                        2);
}

TEST(LayerAvgPool2d, ForwardValuesCountPadding) {
  StandaloneLayer s = make_layer("type = \"avgpool2d\"\nkernel = 2\npadding = 1", {{1, 2, 2}});
  EXPECT_EQ(s.out_shape, (Shape{1, 2, 2}));
  Tensor x = Tensor::empty({1, 1, 2, 2}, wt::testing::memory());
  const float xv[4] = {4, 8, 12, 16};
  std::copy(xv, xv + 4, x.data());
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, wt::testing::layer_context());
  // Every window holds one real cell and three padded zeros; the divisor stays 4.
  EXPECT_FLOAT_EQ(out.data()[0], 1);
  EXPECT_FLOAT_EQ(out.data()[1], 2);
  EXPECT_FLOAT_EQ(out.data()[2], 3);
  EXPECT_FLOAT_EQ(out.data()[3], 4);

  StandaloneLayer plain = make_layer("type = \"avgpool2d\"\nkernel = 2", {{1, 2, 2}});
  plain.layer->forward({&x}, out, saved, wt::testing::layer_context());
  ASSERT_EQ(out.numel(), 1);
  EXPECT_FLOAT_EQ(out.data()[0], 10);
}

TEST(LayerAvgPool2d, Validation) {
  EXPECT_THROW(make_layer("type = \"avgpool2d\"\nkernel = 2\nstride = 0", {{1, 4, 4}}), InputError);
  EXPECT_THROW(make_layer("type = \"avgpool2d\"\nkernel = 2\nwindow = 2", {{1, 4, 4}}), InputError);
  EXPECT_THROW(make_layer("type = \"avgpool2d\"\nkernel = 2", {{4, 4}}), std::invalid_argument);
}

}  // namespace
}  // namespace wt::testing
