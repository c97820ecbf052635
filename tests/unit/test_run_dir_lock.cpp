// RunDirLock: a run directory has one owner, and a dead owner leaves no stale lock. The holder is
// a forked child: POSIX locks belong to a process, so this process could always lock again.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "holding_child.hpp"
#include "job/run_dir_lock.hpp"
#include "util/input_error.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch_dir(const char* name) {
  fs::path d =
      fs::temp_directory_path() / (std::string("wt_lock_") + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A child that takes the lock (the run directory's, or with `run_dir` the checkpoint
// directory's) and holds it until killed.
pid_t spawn_holder(const fs::path& dir, const std::string& run_dir = "") {
  return wt_test::spawn_holding_child([&] {
    new wt::RunDirLock(run_dir.empty() ? wt::RunDirLock(dir.string())  // held until killed
                                       : wt::RunDirLock::checkpoint_dir(dir.string(), run_dir));
    return true;
  });
}

using wt_test::kill_and_reap;

std::string host() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

TEST(RunDirLock, SecondOwnerIsRefusedWithTheHolderNamed) {
  const fs::path dir = scratch_dir("busy");
  const pid_t holder = spawn_holder(dir);
  ASSERT_GT(holder, 0) << "the child could not take the lock";
  try {
    wt::RunDirLock second(dir.string());
    kill_and_reap(holder);
    FAIL() << "a second lock on a held run directory succeeded";
  } catch (const wt::InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), dir.string());
    EXPECT_NE(what.find(dir.string()), std::string::npos) << what;
    EXPECT_NE(what.find("process " + std::to_string(holder) + " on host " + host()),
              std::string::npos)
        << what;
  }
  kill_and_reap(holder);
  fs::remove_all(dir);
}

TEST(RunDirLock, KilledOwnerLeavesNoStaleLock) {
  const fs::path dir = scratch_dir("killed");
  const pid_t holder = spawn_holder(dir);
  ASSERT_GT(holder, 0);
  kill_and_reap(holder);  // kill -9: no destructor ran, the system dropped the lock
  ASSERT_TRUE(fs::exists(dir / ".lock"));
  wt::RunDirLock again(dir.string());
  EXPECT_TRUE(again.held());
  std::ifstream f(dir / ".lock");
  std::string h;
  long pid = 0;
  f >> h >> pid;
  EXPECT_EQ(h, host());
  EXPECT_EQ(pid, long(getpid())) << "the new owner did not replace the dead one's name";
  fs::remove_all(dir);
}

TEST(RunDirLock, ReleasedOnDestructionForTheNextRun) {
  const fs::path dir = scratch_dir("released");
  { wt::RunDirLock first(dir.string()); }
  const pid_t next = spawn_holder(dir);  // another process: this one could always relock
  EXPECT_GT(next, 0) << "the lock outlived its owner object";
  if (next > 0) kill_and_reap(next);
  fs::remove_all(dir);
}

TEST(RunDirLock, MissingDirectoryNamesTheLockFileAndReason) {
  const fs::path dir = fs::temp_directory_path() / "wt_lock_no_such_dir" / "x";
  try {
    wt::RunDirLock lock(dir.string());
    FAIL() << "locked a directory that does not exist";
  } catch (const wt::InputError& e) {
    EXPECT_EQ(e.file(), (dir / ".lock").string());
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
        << e.what();
  }
}

// A checkpoint directory has its own lock: a second run is told the holder's run directory, and
// the key to change. It is a different file from the run directory's, so one directory may be
// both (checkpoint.dir = ".") without the two locks of one process releasing each other.
TEST(RunDirLock, CheckpointDirectoryNamesTheHoldersRunDirectory) {
  const fs::path dir = scratch_dir("checkpoints");
  const pid_t holder = spawn_holder(dir, "/runs/first");
  ASSERT_GT(holder, 0);
  try {
    wt::RunDirLock second = wt::RunDirLock::checkpoint_dir(dir.string(), "/runs/second");
    kill_and_reap(holder);
    FAIL() << "a second lock on a held checkpoint directory succeeded";
  } catch (const wt::InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), dir.string());
    EXPECT_NE(
        what.find("checkpoint directory in use by another wavetrain run (process " +
                  std::to_string(holder) + " on host " + host() +
                  " (run directory /runs/first) holds " + (dir / ".checkpoint.lock").string()),
        std::string::npos)
        << what;
    EXPECT_NE(what.find("checkpoint.dir"), std::string::npos) << what;
  }
  // The run directory lock of the same directory is another file: free.
  wt::RunDirLock run_lock(dir.string());
  EXPECT_TRUE(run_lock.held());
  kill_and_reap(holder);
  wt::RunDirLock mine = wt::RunDirLock::checkpoint_dir(dir.string(), "/runs/second");
  EXPECT_TRUE(mine.held());
  EXPECT_TRUE(run_lock.held());
  fs::remove_all(dir);
}

}  // namespace
