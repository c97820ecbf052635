// Character-level token datasets: text_convert writes [N, T] ids and [N, T] next-character labels;
// the reader, batch source, loader and eval loader hand out T labels per sample and the ids
// unnormalised; image datasets keep one label per sample.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "data/dataset_batch_source.hpp"
#include "data/dataset_reader.hpp"
#include "data/eval_loader.hpp"
#include "data/text_convert.hpp"
#include "dataset_test_util.hpp"
#include "test_memory.hpp"
#include "util/input_error.hpp"

namespace wt {
namespace {

const std::string kText =
    "In the beginning God created the heaven and the earth.\n"
    "And the earth was without form, and void; and darkness was upon the face of the deep.\n"
    "And the Spirit of God moved upon the face of the waters.\n";

std::string write_text(const testutil::TempDir& dir, const std::string& text) {
  const std::string path = dir.file("corpus.txt");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(DatasetTokens, ConvertedSequencesAreTheTextAndItsNextCharacters) {
  testutil::TempDir dir("tokens");
  const std::string h5 = dir.file("t.h5");
  TextConvertOptions opt;
  opt.seq_len = 8;
  opt.test_fraction = 0.2;
  const TextConvertResult r = convert_text_to_hdf5(write_text(dir, kText), h5, opt);
  EXPECT_EQ(r.characters, int64_t(kText.size()));
  const std::set<char> chars(kText.begin(), kText.end());
  EXPECT_EQ(r.vocab_size, int64_t(chars.size()));

  DatasetReader train(h5, "train", {8}, 0), test(h5, "test", {8}, 0);
  EXPECT_TRUE(train.token_ids());
  EXPECT_EQ(train.label_shape(), (Shape{8}));
  EXPECT_EQ(train.labels_per_sample(), 8);
  EXPECT_EQ(train.size(), r.train_sequences);
  EXPECT_EQ(test.size(), r.test_sequences);
  ASSERT_EQ(train.class_names().size(), chars.size());
  EXPECT_EQ(train.class_names()[0], "\\n");  // sorted bytes: newline first, escaped
  EXPECT_EQ(train.class_names()[1], " ");

  // Decode every train sequence back to text: row s is characters [8s, 8s+8), labels one later.
  std::vector<std::string> names = train.class_names();
  auto decode = [&](float id) {
    const std::string& n = names.at(size_t(id));
    return n == "\\n" ? std::string("\n") : n;
  };
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < train.size(); ++i) rows.push_back(i);
  std::vector<float> x(size_t(train.size() * 8));
  std::vector<int32_t> y(size_t(train.size() * 8));
  train.read(rows, x.data(), y.data());
  for (int64_t s = 0; s < train.size(); ++s)
    for (int64_t t = 0; t < 8; ++t) {
      EXPECT_EQ(decode(x[size_t(s * 8 + t)]), std::string(1, kText[size_t(s * 8 + t)]));
      EXPECT_EQ(decode(float(y[size_t(s * 8 + t)])), std::string(1, kText[size_t(s * 8 + t + 1)]));
    }
  // The test split starts after the last character any train label used.
  std::vector<float> tx(8);
  test.read({0}, tx.data(), nullptr);
  const size_t boundary = kText.size() - size_t(double(kText.size()) * 0.2);
  EXPECT_GE(boundary, size_t(train.size() * 8 + 1));
  EXPECT_EQ(decode(tx[0]), std::string(1, kText[boundary]));
}

TEST(DatasetTokens, LoadersCarryTLabelsPerSample) {
  testutil::TempDir dir("tokload");
  const std::string h5 = dir.file("t.h5");
  TextConvertOptions opt;
  opt.seq_len = 4;
  convert_text_to_hdf5(write_text(dir, kText), h5, opt);
  DatasetReader reader(h5, "train", {4}, 0);
  BatchSampler sampler(reader.size(), 6, 1, true);
  for (bool preload : {false, true}) {
    DatasetBatchSource source(reader, wt::testing::memory(), sampler, 6, preload);
    Tensor x;
    std::vector<int32_t> y;
    source.fetch({2, 1, 2}, x, y);
    ASSERT_EQ(x.shape(), (Shape{3, 4}));
    ASSERT_EQ(y.size(), 12u);
    // Within a sequence, each label is the next position's input.
    for (int s = 0; s < 3; ++s)
      for (int t = 0; t + 1 < 4; ++t)
        EXPECT_EQ(float(y[size_t(s * 4 + t)]), x.data()[s * 4 + t + 1]);
    source.quiesce();
  }
  Tensor x;
  std::vector<int32_t> y;
  EvalLoader eval(reader, wt::testing::memory(), 5, 0, 1);
  ASSERT_TRUE(eval.next(x, y));
  EXPECT_EQ(y.size(), 20u);
}

TEST(DatasetTokens, ImageDatasetsKeepOneLabelPerSample) {
  testutil::TempDir dir("imglabels");
  const std::string path = dir.file("d.h5");
  testutil::write_synthetic_dataset(path, 10, 4, {1, 2, 2});
  DatasetReader reader(path, "train", {1, 2, 2}, 10);
  EXPECT_EQ(reader.labels_per_sample(), 1);
  EXPECT_EQ(reader.label_shape(), Shape{});
  EXPECT_FALSE(reader.token_ids());
}

TEST(DatasetTokens, BadTextInputIsAnInputError) {
  testutil::TempDir dir("tokbad");
  TextConvertOptions opt;
  opt.seq_len = 64;
  EXPECT_THROW(convert_text_to_hdf5(write_text(dir, "too short"), dir.file("a.h5"), opt),
               InputError);
  EXPECT_THROW(convert_text_to_hdf5(dir.file("missing.txt"), dir.file("b.h5"), opt), InputError);
  opt.seq_len = 0;
  EXPECT_THROW(convert_text_to_hdf5(write_text(dir, kText), dir.file("c.h5"), opt), InputError);
}

}  // namespace
}  // namespace wt
