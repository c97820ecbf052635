// The idx -> HDF5 converter on a tiny handmade idx set, plain and gzipped, in-process and through
// the fmnist_to_hdf5 executable; malformed idx files become InputErrors naming the file.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "data/dataset_reader.hpp"
#include "data/idx_convert.hpp"
#include "data/idx_reader.hpp"
#include "dataset_test_util.hpp"
#include "util/input_error.hpp"

namespace wt {
namespace {

using testutil::TempDir;

std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims,
                               const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out{0, 0, 0x08, uint8_t(dims.size())};
  for (uint32_t d : dims)
    for (int shift : {24, 16, 8, 0}) out.push_back(uint8_t(d >> shift));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, bytes.data(), unsigned(bytes.size())), int(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
}

// A 3x2 image set: 7 train and 4 test images, labels in [0, 4).
struct TinyIdx {
  std::vector<uint8_t> train_x, test_x, train_y, test_y;
  TinyIdx() {
    for (int i = 0; i < 7 * 6; ++i) train_x.push_back(uint8_t(i * 6 % 256));
    for (int i = 0; i < 4 * 6; ++i) test_x.push_back(uint8_t(255 - i));
    train_y = {0, 1, 2, 3, 0, 1, 2};
    test_y = {3, 2, 1, 0};
  }
  void write(const std::string& dir, bool gzip) const {
    const std::string ext = gzip ? ".gz" : "";
    write_file(dir + "/train-images-idx3-ubyte" + ext, idx_bytes({7, 3, 2}, train_x), gzip);
    write_file(dir + "/train-labels-idx1-ubyte" + ext, idx_bytes({7}, train_y), gzip);
    write_file(dir + "/t10k-images-idx3-ubyte" + ext, idx_bytes({4, 3, 2}, test_x), gzip);
    write_file(dir + "/t10k-labels-idx1-ubyte" + ext, idx_bytes({4}, test_y), gzip);
  }
};

const std::vector<std::string> kFourClasses{"a", "b", "c", "d"};

void check_converted(const std::string& h5, const TinyIdx& idx) {
  double sum = 0, sum_sq = 0;
  for (uint8_t v : idx.train_x) sum += v / 255.0, sum_sq += (v / 255.0) * (v / 255.0);
  const double mean = sum / 42, std = std::sqrt(sum_sq / 42 - mean * mean);

  DatasetReader train(h5, "train", {1, 3, 2}, 4);
  EXPECT_NEAR(train.mean(), mean, 1e-12);
  EXPECT_NEAR(train.std_dev(), std, 1e-12);
  EXPECT_EQ(train.class_names(), kFourClasses);
  std::vector<float> x(7 * 6);
  std::vector<int32_t> y(7);
  train.read({0, 1, 2, 3, 4, 5, 6}, x.data(), y.data());
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(x[i], (idx.train_x[i] / 255.0 - mean) / std, 1e-5);
  EXPECT_EQ(y, std::vector<int32_t>(idx.train_y.begin(), idx.train_y.end()));

  DatasetReader test(h5, "test", {1, 3, 2}, 4);
  ASSERT_EQ(test.size(), 4);
  std::vector<float> tx(6);
  std::vector<int32_t> ty(1);
  test.read({2}, tx.data(), ty.data());
  EXPECT_EQ(ty[0], 1);
  EXPECT_NEAR(tx[5], (idx.test_x[2 * 6 + 5] / 255.0 - mean) / std, 1e-5);
}

TEST(IdxConvert, PlainAndGzippedRoundTrip) {
  for (bool gzip : {false, true}) {
    TempDir dir("idx");
    TinyIdx idx;
    idx.write(dir.file(""), gzip);
    const IdxSetPaths paths = find_idx_set(dir.file(""));
    EXPECT_EQ(paths.train_images.substr(paths.train_images.size() - 3) == ".gz", gzip);
    const auto result = convert_idx_to_hdf5(paths, dir.file("out.h5"), kFourClasses, "tiny");
    EXPECT_EQ(result.train_samples, 7);
    EXPECT_EQ(result.test_samples, 4);
    EXPECT_EQ(result.sample_shape, (Shape{1, 3, 2}));
    check_converted(dir.file("out.h5"), idx);
    // Atomic write: no temporary file is left beside the output.
    int files = 0;
    for (auto& e : std::filesystem::directory_iterator(dir.file(""))) files += e.is_regular_file();
    EXPECT_EQ(files, 5);
  }
}

void expect_convert_error(const std::string& dir, const std::string& bad_file,
                          const std::string& fragment) {
  try {
    convert_idx_to_hdf5(find_idx_set(dir), dir + "/out.h5", kFourClasses, "tiny");
    FAIL() << "no InputError, expected: " << fragment;
  } catch (const InputError& e) {
    EXPECT_NE(e.file().find(bad_file), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.h5"));
}

TEST(IdxConvert, BadIdxFilesNameTheFileAndProblem) {
  TinyIdx idx;
  {
    TempDir dir("idx");
    idx.write(dir.file(""), false);
    std::filesystem::remove(dir.file("t10k-labels-idx1-ubyte"));
    EXPECT_THROW(find_idx_set(dir.file("")), InputError);
  }
  {
    TempDir dir("idx");
    idx.write(dir.file(""), true);
    write_file(dir.file("train-labels-idx1-ubyte.gz"), {1, 2, 3, 4, 5, 6}, true);
    expect_convert_error(dir.file(""), "train-labels", "not an idx file");
  }
  {
    TempDir dir("idx");
    idx.write(dir.file(""), false);
    auto bytes = idx_bytes({7, 3, 2}, idx.train_x);
    bytes.resize(bytes.size() - 5);
    write_file(dir.file("train-images-idx3-ubyte"), bytes, false);
    expect_convert_error(dir.file(""), "train-images", "truncated");
  }
  {
    TempDir dir("idx");
    idx.write(dir.file(""), false);
    write_file(dir.file("t10k-labels-idx1-ubyte"), idx_bytes({4}, {0, 1, 9, 0}), false);
    expect_convert_error(dir.file(""), "t10k-labels", "label 9 at row 2");
  }
  {
    TempDir dir("idx");
    idx.write(dir.file(""), false);
    write_file(dir.file("t10k-labels-idx1-ubyte"), idx_bytes({3}, {0, 1, 2}), false);
    expect_convert_error(dir.file(""), "t10k-labels", "3 labels for 4 images");
  }
  {
    TempDir dir("idx");
    idx.write(dir.file(""), false);
    write_file(dir.file("t10k-images-idx3-ubyte"), idx_bytes({4, 2, 3}, idx.test_x), false);
    expect_convert_error(dir.file(""), "t10k-images", "[1, 2, 3]");
  }
}

// The real Fashion-MNIST (Debian's dataset-fashion-mnist), when installed: converted rows read
// back equal to the idx files, and the normalisation matches the well-known statistics.
TEST(IdxConvert, RealFashionMnistWhenInstalled) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::exists(dir + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir out("fmnist");
  const IdxSetPaths paths = find_idx_set(dir);
  const auto result =
      convert_idx_to_hdf5(paths, out.file("f.h5"), fashion_mnist_class_names(), "test");
  EXPECT_EQ(result.train_samples, 60000);
  EXPECT_EQ(result.test_samples, 10000);
  EXPECT_NEAR(result.mean, 0.2860, 1e-4);
  EXPECT_NEAR(result.std, 0.3530, 1e-4);

  const IdxArray images = read_idx(paths.test_images), labels = read_idx(paths.test_labels);
  DatasetReader reader(out.file("f.h5"), "test", {1, 28, 28}, 10);
  const std::vector<int64_t> rows{9999, 0, 1234, 1235, 5000, 17};
  std::vector<float> x(rows.size() * 784);
  std::vector<int32_t> y(rows.size());
  reader.read(rows, x.data(), y.data());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(y[i], labels.data[size_t(rows[i])]);
    for (size_t e = 0; e < 784; ++e)
      ASSERT_NEAR(x[i * 784 + e],
                  (images.data[size_t(rows[i]) * 784 + e] / 255.0 - result.mean) / result.std,
                  1e-5);
  }
}

// The executable: exit 0 and a readable file on good input, exit 2 and a message on bad input.
TEST(IdxConvert, ToolExitStatus) {
  const std::string tool = std::string(WT_BINARY_DIR) + "/fmnist_to_hdf5";
  if (!std::filesystem::exists(tool)) GTEST_SKIP() << "build the fmnist_to_hdf5 target first";
  TempDir dir("idx");
  TinyIdx idx;
  idx.write(dir.file(""), true);
  const std::string out = dir.file("tool.h5");
  const std::string log = dir.file("log.txt");
  auto run = [&](const std::string& args) {
    const int status = std::system((tool + " " + args + " > " + log + " 2>&1").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(run("--input-dir " + dir.file("") + " --output " + out + " --class-names a,b,c,d"), 0);
  check_converted(out, idx);
  EXPECT_EQ(run("--input-dir " + dir.file("missing") + " --output " + out), 2);
  std::ifstream in(log);
  std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(message.find("idx file not found"), std::string::npos) << message;
  EXPECT_EQ(run("--input-dir " + dir.file("") + " --output " + out + " --class-names a,b"), 2);
  EXPECT_EQ(run("--no-such-flag"), 2);
  EXPECT_EQ(run("--help"), 0);
}

}  // namespace
}  // namespace wt
