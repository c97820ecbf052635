// guarded_mapped_read (data/mapped_read_guard.hpp): a SIGBUS from a truncated mapping inside the
// guarded range ends the read, not the process, as often as it happens (the signal mask is
// restored after each); any other SIGBUS still kills the process as it would have without the
// guard (an access outside the guarded range, or outside any guarded read).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <thread>

#include "data/mapped_read_guard.hpp"
#include "dataset_test_util.hpp"

namespace wt {
namespace {

// Three pages of a file mapped, then the file cut to one page: pages 1 and 2 fault with SIGBUS.
class TruncatedMap {
 public:
  explicit TruncatedMap(const std::string& path) : page_(size_t(::sysconf(_SC_PAGESIZE))) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    EXPECT_EQ(::ftruncate(fd_, off_t(3 * page_)), 0);
    void* m = ::mmap(nullptr, 3 * page_, PROT_READ, MAP_SHARED, fd_, 0);
    EXPECT_NE(m, MAP_FAILED);
    map_ = static_cast<const volatile char*>(m);
    EXPECT_EQ(::ftruncate(fd_, off_t(page_)), 0);
  }
  ~TruncatedMap() {
    ::munmap(const_cast<char*>(map_), 3 * page_);
    ::close(fd_);
  }
  const volatile char* at(size_t page) const { return map_ + page * page_; }
  const void* base() const { return const_cast<const char*>(map_); }
  size_t page() const { return page_; }

 private:
  size_t page_;
  int fd_ = -1;
  const volatile char* map_ = nullptr;
};

TEST(MappedReadGuard, FaultInsideTheRangeEndsTheReadEveryTime) {
  testutil::TempDir dir("guard");
  TruncatedMap map(dir.file("f"));
  int sum = 0;
  EXPECT_TRUE(guarded_mapped_read(map.base(), 3 * map.page(), [&] { sum += map.at(0)[5]; }));
  for (int i = 0; i < 3; ++i)  // the handler's block on SIGBUS must not outlive the jump
    EXPECT_FALSE(guarded_mapped_read(map.base(), 3 * map.page(), [&] { sum += map.at(2)[7]; }));
  // On another thread too: the guard in progress is per thread.
  bool other = true;
  std::thread t([&] {
    other = guarded_mapped_read(map.base(), 3 * map.page(), [&] { sum += map.at(1)[0]; });
  });
  t.join();
  EXPECT_FALSE(other);
  EXPECT_EQ(sum, 0);
}

TEST(MappedReadGuardDeathTest, FaultOutsideTheGuardedRangeStillKills) {
  testutil::TempDir dir("guard");
  TruncatedMap map(dir.file("f"));
  // Guard installed (by a read that succeeds) before the fault, in the child and the parent.
  guarded_mapped_read(map.base(), map.page(), [] {});
  EXPECT_EXIT(
      {
        int sum = 0;
        guarded_mapped_read(map.base(), map.page(), [&] { sum += map.at(2)[0]; });
        std::_Exit(sum);
      },
      ::testing::KilledBySignal(SIGBUS), "");
  EXPECT_EXIT(std::_Exit(map.at(1)[0]), ::testing::KilledBySignal(SIGBUS), "");
}

}  // namespace
}  // namespace wt
