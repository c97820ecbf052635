// The caching allocator's stream order, block splitting and coalescing, budget pressure and
// per-job accounting. Events come from QueuedStreamEvents: work issued on a stream finishes
// only when the test says so, as on a device whose streams run behind the host.
#include <gtest/gtest.h>

#include <map>

#include "mem/caching_allocator.hpp"

namespace {

class QueuedStreamEvents final : public wt::StreamEvents {
 public:
  wt::StreamEvent record(int stream) override { return {stream, ++issued_[stream]}; }
  bool completed(const wt::StreamEvent& e) override { return e.sequence <= finished_[e.stream]; }
  void synchronize() override {
    ++synchronizations;
    for (auto& [stream, n] : issued_) finished_[stream] = n;
  }
  void finish(int stream) { finished_[stream] = issued_[stream]; }
  int synchronizations = 0;

 private:
  std::map<int, uint64_t> issued_, finished_;
};

constexpr size_t KiB = 1024;

struct Allocation {
  wt::CachingAllocator& allocator;
  void* ptr;
  size_t granted;
  int stream;
  Allocation(wt::CachingAllocator& a, size_t bytes, int s) : allocator(a), stream(s) {
    ptr = a.allocate(bytes, s, &granted);
  }
  void free() { allocator.release(ptr, stream); }
};

}  // namespace

TEST(StreamOrderedAllocator, SplitsABlockAndCoalescesItAgain) {
  wt::CachingAllocator a;
  Allocation big(a, 4096 * KiB, 0);
  big.free();
  Allocation q1(a, 1024 * KiB, 0), q2(a, 1024 * KiB, 0), half(a, 2048 * KiB, 0);
  EXPECT_EQ(a.stats().system_allocations, 1u) << "the three should be cut from the freed 4 MiB";
  EXPECT_EQ(q1.ptr, big.ptr);
  q1.free();
  half.free();
  q2.free();
  Allocation again(a, 4096 * KiB, 0);
  EXPECT_EQ(again.ptr, big.ptr) << "the pieces should have merged back into one block";
  EXPECT_EQ(a.stats().system_allocations, 1u);
  again.free();
}

// A small tensor cut from a freed large block would pin the whole segment: the budget could not
// get it back for a large request later.
TEST(StreamOrderedAllocator, SmallRequestsDoNotCutLargeBlocks) {
  wt::CachingAllocator a;
  // Enough in use that the 2 MiB cached block stays cached (the cache may exceed what is in use
  // by 1/16 before whole free segments go back to the system).
  Allocation keep(a, 64 * 1024 * KiB, 0);
  Allocation big(a, 2048 * KiB, 0);
  big.free();
  Allocation small(a, 64 * KiB, 0);
  EXPECT_EQ(a.stats().system_allocations, 3u) << "the small request got a segment of its own";
  EXPECT_EQ(a.stats().largest_free, 2048 * KiB) << "the freed large block is whole";
  Allocation small2(a, 32 * KiB, 0);
  EXPECT_EQ(a.stats().system_allocations, 4u);
  small.free();
  Allocation tiny(a, 16 * KiB, 0);
  EXPECT_EQ(tiny.ptr, small.ptr) << "a freed small block is cut for a smaller request";
  EXPECT_EQ(a.stats().system_allocations, 4u);
  tiny.free();
  small2.free();
  keep.free();
}

TEST(StreamOrderedAllocator, PicksTheSmallestBlockThatFits) {
  wt::CachingAllocator a;
  Allocation large(a, 900 * KiB, 0), small(a, 300 * KiB, 0), keep(a, 4 * KiB, 0);
  large.free();
  small.free();
  Allocation got(a, 200 * KiB, 0);
  EXPECT_EQ(got.ptr, small.ptr);
  got.free();
  keep.free();
}

TEST(StreamOrderedAllocator, ReusesOnTheSameStreamAtOnce) {
  QueuedStreamEvents events;
  wt::CachingAllocator a(0, &events);
  Allocation x(a, 64 * KiB, 3);
  x.free();  // stream 3 may still be running the kernel that used it: stream order covers that
  Allocation y(a, 64 * KiB, 3);
  EXPECT_EQ(y.ptr, x.ptr);
  EXPECT_EQ(a.stats().forced_syncs, 0u);
  y.free();
}

TEST(StreamOrderedAllocator, AnotherStreamWaitsForTheFreeEvent) {
  QueuedStreamEvents events;
  wt::CachingAllocator a(0, &events);
  Allocation x(a, 64 * KiB, 1);
  x.free();
  Allocation y(a, 64 * KiB, 0);
  EXPECT_NE(y.ptr, x.ptr) << "stream 1's work on the block has not finished";
  events.finish(1);
  Allocation z(a, 64 * KiB, 0);
  EXPECT_EQ(z.ptr, x.ptr) << "stream 1 has finished: the block is safe for stream 0";
  EXPECT_EQ(events.synchronizations, 0);
  y.free();
  z.free();
}

// The bug the rule prevents: a tensor allocated on stream 0 and read by stream 1 is freed by
// the host once stream 1's kernel is issued. Without record_use the block goes straight back to
// stream 0 while stream 1 may still read it; with it, stream 0 waits for stream 1.
TEST(StreamOrderedAllocator, RecordUseHoldsABlockUntilTheOtherStreamFinishes) {
  QueuedStreamEvents events;
  wt::CachingAllocator a(0, &events);
  Allocation unrecorded(a, 64 * KiB, 0);
  unrecorded.free();
  Allocation reused(a, 64 * KiB, 0);
  EXPECT_EQ(reused.ptr, unrecorded.ptr) << "no other reader recorded: reused at once";
  a.record_use(reused.ptr, 1);
  reused.free();
  Allocation other(a, 64 * KiB, 0);
  EXPECT_NE(other.ptr, reused.ptr) << "stream 1 may still be reading the block";
  events.finish(1);
  Allocation after(a, 64 * KiB, 0);
  EXPECT_EQ(after.ptr, reused.ptr);
  other.free();
  after.free();
}

TEST(StreamOrderedAllocator, UnderPressureReleasesCacheThenSynchronisesThenFails) {
  QueuedStreamEvents events;
  wt::CachingAllocator a(1024 * KiB, &events);
  Allocation x(a, 768 * KiB, 1);
  x.free();
  // Stream 1 has not finished with x, and the budget has no room for a second block.
  Allocation y(a, 768 * KiB, 0);
  EXPECT_EQ(y.ptr, x.ptr) << "after a forced synchronisation the block is safe";
  EXPECT_EQ(a.stats().forced_syncs, 1u);
  EXPECT_EQ(events.synchronizations, 1);
  EXPECT_THROW(Allocation(a, 512 * KiB, 0), wt::OutOfMemory);
  y.free();
  // A cached block of the wrong size goes back to the system to make room: no sync needed.
  events.finish(0);
  Allocation z(a, 900 * KiB, 0);
  EXPECT_LE(a.stats().reserved, 1024 * KiB);
  EXPECT_EQ(a.stats().forced_syncs, 1u);
  z.free();
}

TEST(StreamOrderedAllocator, AccountsMemoryPerJob) {
  wt::CachingAllocator a;
  void* p;
  size_t g1 = 0, g2 = 0;
  {
    wt::CachingAllocator::JobScope job(a, 1);
    p = a.allocate(100 * KiB, 0, &g1);
  }
  void* q;
  {
    wt::CachingAllocator::JobScope job(a, 2);
    q = a.allocate(300 * KiB, 0, &g2);
    a.release(p, 0);  // freed while job 2 runs: still job 1's bytes
  }
  EXPECT_EQ(a.job_stats(1).in_use, 0u);
  EXPECT_EQ(a.job_stats(1).peak_in_use, g1);
  EXPECT_EQ(a.job_stats(2).in_use, g2);
  EXPECT_EQ(a.stats().in_use, g2);
  a.release(q, 0);
}

// Two jobs of different shapes under one budget: what one frees serves the other's sizes.
TEST(StreamOrderedAllocator, OneJobsFreedMemoryServesAnotherJobsSizes) {
  wt::CachingAllocator a(4096 * KiB);
  {
    wt::CachingAllocator::JobScope job(a, 0);
    Allocation whole(a, 4096 * KiB, 0);
    whole.free();
    Allocation p1(a, 1280 * KiB, 0), p2(a, 1280 * KiB, 0), p3(a, 1536 * KiB, 0);
    p2.free();
    p1.free();
    p3.free();
  }
  wt::CachingAllocator::JobScope job(a, 1);
  Allocation b1(a, 2048 * KiB, 0), b2(a, 2048 * KiB, 0);
  EXPECT_EQ(a.stats().system_allocations, 1u);
  EXPECT_EQ(a.stats().reserved, 4096 * KiB);
  b1.free();
  b2.free();
}

TEST(StreamOrderedAllocator, ReportsFragmentation) {
  wt::CachingAllocator a;
  Allocation whole(a, 4096 * KiB, 0);
  whole.free();
  EXPECT_DOUBLE_EQ(a.stats().fragmentation(), 0.0);
  Allocation p1(a, 1024 * KiB, 0), p2(a, 1024 * KiB, 0), p3(a, 1024 * KiB, 0);
  p2.free();  // free: 1 MiB in the middle and 1 MiB at the end, not adjacent
  const wt::MemoryStats s = a.stats();
  EXPECT_EQ(s.largest_free, 1024 * KiB);
  EXPECT_DOUBLE_EQ(s.fragmentation(), 0.5);
  p1.free();
  p3.free();
  EXPECT_DOUBLE_EQ(a.stats().fragmentation(), 0.0);
  a.empty_cache();
  EXPECT_EQ(a.stats().reserved, 0u);
}
