// record_exit_status: the job scripts' copy of rank 0's exit status (mpirun's can differ).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "app/exit_status_file.hpp"

namespace {

namespace fs = std::filesystem;

TEST(ExitStatusFile, WritesTheStatusWhereTheVariableSays) {
  const fs::path dir = fs::temp_directory_path() / ("wt_status_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "status";
  std::ofstream(file) << "0\n";  // an older value is replaced whole
  setenv("WAVETRAIN_EXIT_STATUS_FILE", file.c_str(), 1);
  wt::record_exit_status(75);
  unsetenv("WAVETRAIN_EXIT_STATUS_FILE");
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "75\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1)
      << "a temporary file was left behind";
  fs::remove_all(dir);
}

TEST(ExitStatusFile, NothingWithoutTheVariable) {
  const fs::path dir = fs::temp_directory_path() / ("wt_status_none_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  unsetenv("WAVETRAIN_EXIT_STATUS_FILE");
  wt::record_exit_status(75);
  setenv("WAVETRAIN_EXIT_STATUS_FILE", "", 1);
  wt::record_exit_status(75);
  unsetenv("WAVETRAIN_EXIT_STATUS_FILE");
  fs::current_path(cwd);
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

}  // namespace
