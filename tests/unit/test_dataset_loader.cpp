// EvalLoader: eval covers the split once, in order, every part its own rows. (The training
// batches' source is tested in test_dataset_batch_source.cpp.)
#include <gtest/gtest.h>

#include "data/eval_loader.hpp"
#include "dataset_test_util.hpp"
#include "test_memory.hpp"

namespace wt {
namespace {

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override { testutil::write_synthetic_dataset(path_, 37, 23, {1, 2, 3}, 4); }
  testutil::TempDir dir_{"loader"};
  std::string path_ = dir_.file("d.h5");
};

TEST(EvalRows, PartsCoverEachBatchOnce) {
  EXPECT_EQ(eval_rows(10, 8, 4, 0, 1), (std::vector<int64_t>{8, 9}));
  EXPECT_EQ(eval_rows(10, 0, 4, 1, 2), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(eval_rows(10, 9, 4, 0, 3).empty());
  EXPECT_EQ(eval_rows(10, 9, 4, 2, 3), (std::vector<int64_t>{9}));
  EXPECT_THROW(eval_rows(10, 0, 4, 2, 2), std::invalid_argument);
}

TEST_F(LoaderTest, EvalLoaderVisitsTheSplitOnceInOrder) {
  DatasetReader reader(path_, "test", {1, 2, 3}, 10);
  std::vector<int32_t> all_labels;
  for (int part = 0; part < 3; ++part) {
    EvalLoader eval(reader, wt::testing::memory(), 10, part, 3);
    EXPECT_EQ(eval.batches(), 3);
    Tensor x;
    std::vector<int32_t> y;
    int batches = 0;
    while (eval.next(x, y)) {
      ++batches;
      EXPECT_EQ(x.dim(0), int64_t(y.size()));
      // Part p's rows of batch b are contiguous; reassemble by recomputing them.
      const auto rows = eval_rows(23, (batches - 1) * 10, 10, part, 3);
      for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(y[i], (rows[i] * 3) % 10);
      all_labels.insert(all_labels.end(), y.begin(), y.end());
    }
    EXPECT_EQ(batches, 3);
  }
  EXPECT_EQ(all_labels.size(), 23u);
}

}  // namespace
}  // namespace wt
