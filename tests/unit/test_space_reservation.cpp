// reserve_file_space: the blocks a checkpoint will take are the file's before it is written, the
// file stays empty (so HDF5 creates it afresh without truncating the reservation away), and what
// the file did not use is given back. The out-of-space path, on a real small file system, is
// e2e.checkpoint_disk_full_schedules.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "io/space_reservation.hpp"

namespace {

namespace fs = std::filesystem;

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("wt_reserve_" + std::to_string(getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
};

int64_t allocated_bytes(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return int64_t(st.st_blocks) * 512;
}

TEST(SpaceReservation, ReservesPastAnEmptyFileAndReleasesTheUnusedTail) {
  Scratch scratch;
  const fs::path file = scratch.dir / "step_00000001.h5.tmp";
  {
    std::ofstream old(file);
    old << "a stale partial file from a crashed write";
  }
  const uint64_t bytes = 8 << 20;
  const wt::SpaceReservation r = wt::reserve_file_space(file.string(), bytes);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(fs::file_size(file), 0u) << "the file must look new to its writer";
  if (!r.reserved) GTEST_SKIP() << "this file system cannot reserve (EOPNOTSUPP)";
  EXPECT_GE(allocated_bytes(file), int64_t(bytes));
  {
    std::ofstream data(file, std::ios::binary | std::ios::in | std::ios::out);
    data << std::string(4096, 'x');  // the write fills the reserved blocks
  }
  wt::release_reserved_tail(file.string());
  EXPECT_EQ(fs::file_size(file), 4096u);
  EXPECT_LT(allocated_bytes(file), int64_t(1) << 20) << "the unused reservation was not released";
}

TEST(SpaceReservation, AFileThatCannotBeCreatedIsAnErrorWithTheReason) {
  const wt::SpaceReservation r =
      wt::reserve_file_space("/nonexistent-wt-dir/step_00000001.h5.tmp", 4096);
  EXPECT_FALSE(r.reserved);
  EXPECT_EQ(r.error, "No such file or directory (creating the file)");
}

}  // namespace
