// conflicting_lock_holder (util/file_lock_holder.hpp): a file another process holds locked the way
// HDF5 does (flock, exclusive, for writing) is reported locked, with that process; a file nobody
// locks, or one only read-locked, is not; the probe itself leaves no lock behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "holding_child.hpp"
#include "util/file_lock_holder.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch_file(const char* name) {
  fs::path f = fs::temp_directory_path() /
               (std::string("wt_probe_") + name + "_" + std::to_string(getpid()));
  std::ofstream(f) << "data\n";
  return f;
}

// A child that flocks `path` with `how` and holds it until killed.
pid_t spawn_flock_holder(const fs::path& path, int how) {
  return wt_test::spawn_holding_child([&] {
    const int fd = open(path.c_str(), O_RDWR);  // kept open: the child holds the lock
    return fd >= 0 && flock(fd, how | LOCK_NB) == 0;
  });
}

using wt_test::kill_and_reap;

TEST(FileLockHolder, WriteLockedByAnotherProcessNamesIt) {
  const fs::path f = scratch_file("held");
  const pid_t holder = spawn_flock_holder(f, LOCK_EX);
  ASSERT_GT(holder, 0);
  const std::string state = wt::conflicting_lock_holder(f.string());
  EXPECT_FALSE(state.empty());
  // /proc/locks names the holder where there is one (Linux).
  if (fs::exists("/proc/locks")) {
    EXPECT_EQ(state.rfind("process " + std::to_string(holder), 0), 0u) << state;
  }
  kill_and_reap(holder);
  EXPECT_EQ(wt::conflicting_lock_holder(f.string()), "") << "the lock outlived its holder";
  fs::remove(f);
}

TEST(FileLockHolder, UnlockedOrReadLockedOrMissingIsNotLocked) {
  const fs::path f = scratch_file("free");
  EXPECT_EQ(wt::conflicting_lock_holder(f.string()), "");
  const pid_t reader = spawn_flock_holder(f, LOCK_SH);  // another reader does not keep us out
  ASSERT_GT(reader, 0);
  EXPECT_EQ(wt::conflicting_lock_holder(f.string()), "");
  kill_and_reap(reader);
  EXPECT_EQ(wt::conflicting_lock_holder((f.string() + ".missing")), "");
  // The probe released what it took: another process can take the file exclusively at once.
  const pid_t writer = spawn_flock_holder(f, LOCK_EX);
  EXPECT_GT(writer, 0) << "the probe left a lock behind";
  if (writer > 0) kill_and_reap(writer);
  fs::remove(f);
}

}  // namespace
