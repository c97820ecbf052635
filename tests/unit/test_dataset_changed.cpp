// A dataset that changes under a running job (issue 17 §2): truncated or rewritten in place, it
// must end the read with an InputError naming the file and saying it changed, on every read path
// (the memory map faults with SIGBUS, which must not kill the process), never with a crash or
// silently wrong rows. And a file held open for writing by another program (issue 17 §5) is
// called locked, not damaged.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "data/dataset_reader.hpp"
#include "dataset_test_util.hpp"
#include "util/input_error.hpp"

namespace wt {
namespace {

using testutil::TempDir;
using Path = DatasetReader::ReadPath;

// 2000 rows of 28 x 28: 1.5 MB, so that the last rows lie many pages past a truncation.
void write_data(const std::string& path, int64_t rows = 2000) {
  testutil::write_synthetic_dataset(path, rows, 100, {1, 28, 28}, /*chunk_samples=*/64);
}

std::string read_error(DatasetReader& reader, const std::vector<int64_t>& rows) {
  std::vector<float> x(rows.size() * size_t(reader.sample_numel()));
  try {
    reader.read(rows, x.data(), nullptr);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

class DatasetChanged : public ::testing::TestWithParam<Path> {};

TEST_P(DatasetChanged, TruncatedFileIsNamedNotACrash) {
  TempDir dir("changed");
  const std::string path = dir.file("d.h5");
  write_data(path);
  DatasetReader reader(path, "train", {1, 28, 28}, 10);
  ASSERT_EQ(reader.set_read_path(GetParam()), GetParam());
  EXPECT_EQ(read_error(reader, {0, 1999, 1000}), "");  // unchanged: reads fine
  ASSERT_EQ(::truncate(path.c_str(), 64 * 1024), 0);
  const std::string error = read_error(reader, {1999, 1998, 5});
  EXPECT_NE(error.find(path + ": /train/inputs: the dataset file changed while the job ran"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("-> 65536 bytes"), std::string::npos) << error;
}

TEST_P(DatasetChanged, RewrittenInPlaceIsNamed) {
  TempDir dir("changed");
  const std::string path = dir.file("d.h5"), other = dir.file("other.h5");
  write_data(path);
  write_data(other, 1500);
  DatasetReader reader(path, "train", {1, 28, 28}, 10);
  ASSERT_EQ(reader.set_read_path(GetParam()), GetParam());
  // As `cp other.h5 d.h5` does: the same inode, truncated and written again.
  {
    std::ifstream in(other, std::ios::binary);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << in.rdbuf();
  }
  const std::string error = read_error(reader, {3, 1400});
  EXPECT_NE(error.find(path + ": /train/inputs: the dataset file changed while the job ran"),
            std::string::npos)
      << error;
}

TEST_P(DatasetChanged, TouchedWithSameSizeIsAChange) {
  TempDir dir("changed");
  const std::string path = dir.file("d.h5");
  write_data(path);
  DatasetReader reader(path, "train", {1, 28, 28}, 10);
  ASSERT_EQ(reader.set_read_path(GetParam()), GetParam());
  const struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};  // a new modification time
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  EXPECT_NE(read_error(reader, {7}).find("changed while the job ran (same size, modified again"),
            std::string::npos);
}

TEST_P(DatasetChanged, ReplacedByRenameKeepsReadingTheOpenedFile) {
  TempDir dir("changed");
  const std::string path = dir.file("d.h5");
  write_data(path);
  DatasetReader reader(path, "train", {1, 28, 28}, 10);
  ASSERT_EQ(reader.set_read_path(GetParam()), GetParam());
  std::vector<float> before(size_t(reader.sample_numel())), after(before.size());
  reader.read({1234}, before.data(), nullptr);
  write_data(dir.file("new.h5"), 10);
  std::filesystem::rename(dir.file("new.h5"), path);  // the old file lives on while it is open
  reader.read({1234}, after.data(), nullptr);
  EXPECT_EQ(before, after);
}

INSTANTIATE_TEST_SUITE_P(ReadPaths, DatasetChanged,
                         ::testing::Values(Path::Mapped, Path::Pread, Path::Hdf5),
                         [](const ::testing::TestParamInfo<Path>& p) {
                           return p.param == Path::Mapped  ? std::string("Mapped")
                                  : p.param == Path::Pread ? std::string("Pread")
                                                           : std::string("Hdf5");
                         });

TEST(DatasetLocked, WriteLockIsReportedAsALockNamingItsHolder) {
  TempDir dir("locked");
  const std::string path = dir.file("d.h5");
  write_data(path, 100);
  // What HDF5's file locking does in a writer: an exclusive flock() for as long as it is open.
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  std::string error;
  try {
    DatasetReader reader(path, "train", {1, 28, 28}, 10);
  } catch (const InputError& e) {
    error = e.what();
  }
  ::close(fd);
  EXPECT_NE(error.find(path + ": locked: process " + std::to_string(::getpid())), std::string::npos)
      << error;
  EXPECT_NE(error.find("holds a write lock on it"), std::string::npos) << error;
  EXPECT_EQ(error.find("damaged"), std::string::npos) << error;
  DatasetReader reader(path, "train", {1, 28, 28}, 10);  // released: opens as before
  EXPECT_EQ(reader.size(), 100);
}

}  // namespace
}  // namespace wt
