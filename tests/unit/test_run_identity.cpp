// A run's identity (job/run_identity.hpp): made once, at the run directory's first start, and the
// same at every later start; two runs never share one; a damaged identity file is bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "job/run_identity.hpp"
#include "util/input_error.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch_dir(const char* name) {
  fs::path d = fs::temp_directory_path() /
               (std::string("wt_run_id_") + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(RunIdentity, MadeAtTheFirstStartAndKeptAfterwards) {
  const fs::path dir = scratch_dir("kept");
  ASSERT_FALSE(fs::exists(dir / wt::kRunIdFile));
  const std::string first = wt::load_or_create_run_id(dir.string());
  EXPECT_TRUE(wt::valid_run_id(first)) << first;
  ASSERT_TRUE(fs::exists(dir / wt::kRunIdFile));
  EXPECT_FALSE(fs::exists(dir / (std::string(wt::kRunIdFile) + ".tmp")));
  EXPECT_EQ(wt::load_or_create_run_id(dir.string()), first) << "a second start changed the id";
  std::ifstream in(dir / wt::kRunIdFile);
  std::string stored;
  in >> stored;
  EXPECT_EQ(stored, first);
  fs::remove_all(dir);
}

TEST(RunIdentity, TwoRunsNeverShareOne) {
  const fs::path a = scratch_dir("a"), b = scratch_dir("b");
  EXPECT_NE(wt::load_or_create_run_id(a.string()), wt::load_or_create_run_id(b.string()));
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.insert(wt::new_run_id());  // within one second, mostly
  EXPECT_EQ(ids.size(), 1000u);
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(RunIdentity, DamagedFileIsAnInputErrorNamingIt) {
  const fs::path dir = scratch_dir("damaged");
  const fs::path file = dir / wt::kRunIdFile;
  for (const char* text : {"", "two words\n", "bad/char\n"}) {
    std::ofstream(file, std::ios::trunc) << text;
    try {
      wt::load_or_create_run_id(dir.string());
      FAIL() << "accepted '" << text << "'";
    } catch (const wt::InputError& e) {
      EXPECT_EQ(e.file(), file.string());
      EXPECT_NE(std::string(e.what()).find("not a run identity"), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

TEST(RunIdentity, UnwritableRunDirectoryIsAnInputError) {
  const fs::path dir = fs::temp_directory_path() / "wt_run_id_no_such_dir" / "x";
  EXPECT_THROW(wt::load_or_create_run_id(dir.string()), wt::InputError);
}

TEST(RunIdentity, Form) {
  EXPECT_TRUE(wt::valid_run_id("20260112T093015Z-3fa9c2d1e4b5a6f7"));
  EXPECT_FALSE(wt::valid_run_id(""));
  EXPECT_FALSE(wt::valid_run_id("a b"));
  EXPECT_FALSE(wt::valid_run_id(std::string(65, 'a')));
}

}  // namespace
