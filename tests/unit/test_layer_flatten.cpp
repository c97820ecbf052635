// flatten: shapes, values preserved in order, and the gradient passes through unchanged.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"

namespace wt::testing {
namespace {

TEST(LayerFlatten, Gradients) { check_layer_gradients("type = \"flatten\"", {{2, 3, 4}}, 2); }

TEST(LayerFlatten, ForwardKeepsSampleMajorOrder) {
  StandaloneLayer s = make_layer("type = \"flatten\"", {{2, 3, 4}});
  EXPECT_EQ(s.out_shape, (Shape{24}));
  Rng rng(3);
  Tensor x = random_tensor({3, 2, 3, 4}, rng);
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, wt::testing::layer_context());
  ASSERT_EQ(out.shape(), (Shape{3, 24}));
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(out.data()[i], x.data()[i]);
  Tensor din;
  std::vector<Tensor*> din_ptrs{&din};
  s.layer->backward({&x}, out, out, din_ptrs, saved, wt::testing::layer_context());
  EXPECT_EQ(din.shape(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(din.data()[i], x.data()[i]);
}

}  // namespace
}  // namespace wt::testing
