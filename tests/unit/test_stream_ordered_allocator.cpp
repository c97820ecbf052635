// The caching allocator's stream order, block splitting and coalescing, budget pressure and
// per-job accounting. Events come from QueuedStreamEvents: work issued on a stream finishes
// only when the test says so, as on a device whose streams run behind the host.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "allocator_test_util.hpp"
#include "device/strict_streams.hpp"
#include "mem/caching_allocator.hpp"

using wt_test::Allocation;
using wt_test::KiB;
using wt_test::kWhole;
using wt_test::QueuedStreamEvents;

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
  Allocation big(a, 2048 * KiB, 0);
  big.free();
  Allocation small(a, 64 * KiB, 0);
  EXPECT_EQ(a.stats().system_allocations, 2u) << "the small request got a small segment";
  EXPECT_EQ(a.stats().largest_free, 2048 * KiB) << "the freed large block is whole";
  Allocation small2(a, 32 * KiB, 0);
  EXPECT_EQ(a.stats().system_allocations, 2u) << "packed into the small segment";
  small.free();
  Allocation tiny(a, 16 * KiB, 0);
  EXPECT_EQ(tiny.ptr, small.ptr) << "a freed small block is cut for a smaller request";
  EXPECT_EQ(a.stats().system_allocations, 2u);
  tiny.free();
  small2.free();
}

TEST(StreamOrderedAllocator, PicksTheSmallestBlockThatFits) {
  wt::CachingAllocator a;
  // One small segment: `apart` keeps the two freed blocks from merging.
  Allocation large(a, 900 * KiB, 0), apart(a, 4 * KiB, 0), small(a, 300 * KiB, 0);
  Allocation keep(a, 800 * KiB, 0);  // the rest of the segment
  large.free();
  small.free();
  Allocation got(a, 200 * KiB, 0);
  EXPECT_EQ(got.ptr, small.ptr);
  EXPECT_EQ(a.stats().system_allocations, 1u);
  got.free();
  apart.free();
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

// The same on the strict device's queues, where host code frees as a CUDA host does: at once,
// stream ordered. The block is stream 0's again at once (its later work runs after the work that
// used it, and after the poisoning queued at the free's point); another stream gets other memory
// while stream 0 cannot reach the free (it waits for an event), and the freed block once it can:
// before reserving more, the allocator lets the device run ahead, as a GPU would have.
TEST(StreamOrderedAllocator, OnTheStrictDeviceAHostFreeIsItsStreamsAtOnceAndOthersAfterItsPoint) {
  wt::StrictStreams streams(1);
  wt::CachingAllocator a(0, &streams);
  bool event_done = false;
  streams.launch(0, wt::DeviceWork{[] {}, [&] { return event_done; }});  // stream 0 waits
  Allocation x(a, kWhole, 0);
  x.free();
  Allocation other(a, kWhole, 1);
  EXPECT_NE(other.ptr, x.ptr) << "stream 1 waits for the free's point in stream 0";
  Allocation same(a, kWhole, 0);
  EXPECT_EQ(same.ptr, x.ptr) << "stream order covers stream 0's later work";
  same.free();
  event_done = true;
  const size_t reserved = a.stats().reserved;
  Allocation reached(a, kWhole, 2);
  EXPECT_EQ(reached.ptr, x.ptr) << "the device ran ahead to the free: any stream may have it";
  EXPECT_EQ(a.stats().reserved, reserved) << "no new segment";
  EXPECT_EQ(a.stats().forced_syncs, 0u);
  other.free();
  reached.free();
  streams.synchronize();
}

TEST(StreamOrderedAllocator, AnotherStreamWaitsForTheFreeEvent) {
  QueuedStreamEvents events;
  wt::CachingAllocator a(0, &events);
  Allocation x(a, kWhole, 1);
  x.free();
  Allocation y(a, kWhole, 0);
  EXPECT_NE(y.ptr, x.ptr) << "stream 1's work on the block has not finished";
  events.finish(1);
  Allocation z(a, kWhole, 0);
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
  Allocation unrecorded(a, kWhole, 0);
  unrecorded.free();
  Allocation reused(a, kWhole, 0);
  EXPECT_EQ(reused.ptr, unrecorded.ptr) << "no other reader recorded: reused at once";
  a.record_use(reused.ptr, 1);
  reused.free();
  Allocation other(a, kWhole, 0);
  EXPECT_NE(other.ptr, reused.ptr) << "stream 1 may still be reading the block";
  events.finish(1);
  Allocation after(a, kWhole, 0);
  EXPECT_EQ(after.ptr, reused.ptr);
  other.free();
  after.free();
}

// Issue 18, on the strict device's queues: a block allocated on stream 0, read by queued work on
// stream 1 (record_use) and freed by host code is not handed to stream 0 or stream 2 before the
// stream-1 work issued before the free has run; once it has, either stream gets it, without a
// synchronisation, while the stream-1 work issued after the free is still queued.
TEST(StreamOrderedAllocator, ACrossStreamUseHoldsTheBlockUntilThatStreamsEvent) {
  for (int reuse_stream : {0, 2}) {
    SCOPED_TRACE("reused on stream " + std::to_string(reuse_stream));
    wt::StrictStreams streams(1);
    wt::CachingAllocator a(0, &streams);
    Allocation x(a, kWhole, 0);
    bool reader_may_run = false, reader_ran = false, later_may_run = false;
    streams.launch(1, wt::DeviceWork{[&] { reader_ran = true; }, [&] { return reader_may_run; }});
    a.record_use(x.ptr, 1);
    x.free();  // host code: takes effect at stream 0's point, after the work issued before it
    // Work given to stream 1 after the free, queued before the free runs: the block need not
    // wait for it.
    streams.launch(1, wt::DeviceWork{[] {}, [&] { return later_may_run; }});
    while (streams.run_one()) {
    }
    ASSERT_EQ(a.stats().in_use, 0u) << "stream 0 has reached the free";
    Allocation early(a, kWhole, reuse_stream);
    EXPECT_NE(early.ptr, x.ptr) << "stream 1's read is still queued";
    reader_may_run = true;
    while (streams.run_one()) {
    }
    ASSERT_TRUE(reader_ran);
    Allocation after(a, kWhole, reuse_stream);
    EXPECT_EQ(after.ptr, x.ptr) << "the read issued before the free has run";
    EXPECT_EQ(a.stats().forced_syncs, 0u);
    later_may_run = true;
    streams.synchronize();
    early.free();
    after.free();
    streams.synchronize();
  }
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

// Issue 18: small tensors are not system allocations; they share 2 MiB segments.
TEST(StreamOrderedAllocator, PacksSmallRequestsIntoOneSegment) {
  wt::CachingAllocator a;
  std::vector<Allocation> small;
  for (int i = 0; i < 100; ++i) small.emplace_back(a, 20 * KiB, i % 2);
  EXPECT_EQ(a.stats().system_allocations, 1u) << "100 x 20 KiB fit one 2 MiB segment";
  EXPECT_EQ(a.stats().reserved, 2048 * KiB);
  EXPECT_EQ(a.stats().in_use, 100 * 20 * KiB);
  EXPECT_DOUBLE_EQ(a.stats().fragmentation(), 0.0) << "the cache is the segment's tail";
  for (size_t i = 0; i < small.size(); i += 2) small[i].free();
  // Cached: 50 separate 20 KiB holes and the 48 KiB tail; the tail is the largest.
  EXPECT_EQ(a.stats().largest_free, 48 * KiB);
  EXPECT_NEAR(a.stats().fragmentation(), 1.0 - 48.0 / (50 * 20 + 48), 1e-12);
  for (size_t i = 1; i < small.size(); i += 2) small[i].free();
  a.sync_and_coalesce();  // the two streams' freed blocks merge once both are known done
  EXPECT_EQ(a.stats().largest_free, 2048 * KiB);
  EXPECT_DOUBLE_EQ(a.stats().fragmentation(), 0.0);
}

// Large segments are whole multiples of 2 MiB; the rounded tail serves the next large request.
TEST(StreamOrderedAllocator, RoundsLargeSegmentsUpToTwoMiB) {
  wt::CachingAllocator a;
  Allocation big(a, 5 * 1024 * KiB, 0);  // a 5 MiB block
  EXPECT_EQ(big.granted, 5 * 1024 * KiB);
  EXPECT_EQ(a.stats().reserved, 6 * 1024 * KiB);
  Allocation next(a, 1024 * KiB, 0);
  EXPECT_EQ(next.ptr, static_cast<char*>(big.ptr) + big.granted) << "cut from the tail";
  EXPECT_EQ(a.stats().system_allocations, 1u);
  next.free();
  big.free();
}

// Under a budget segments are exact: reserved bytes are what the requests' blocks need, so
// rounding never makes a request (or a later one) fail that fits as is.
TEST(StreamOrderedAllocator, SegmentsAreExactUnderABudget) {
  wt::CachingAllocator large_budget(64 * 1024 * KiB);
  Allocation big(large_budget, 5 * 1024 * KiB, 0);
  EXPECT_EQ(large_budget.stats().reserved, 5 * 1024 * KiB) << "the exact size, not 6 MiB";
  Allocation next(large_budget, 1024 * KiB, 0);
  EXPECT_EQ(large_budget.stats().reserved, 6 * 1024 * KiB) << "a segment of its own";
  next.free();
  wt::CachingAllocator small_budget(100 * KiB);
  Allocation small(small_budget, 64 * KiB, 0);
  EXPECT_EQ(small_budget.stats().reserved, 64 * KiB) << "the exact size, not 2 MiB";
  EXPECT_THROW(Allocation(small_budget, 64 * KiB, 0), wt::OutOfMemory);
  small.free();
  big.free();
}

// Cached segments stay cached (each release is a synchronising cudaFree on a GPU) unless the
// release threshold or the budget needs them back.
TEST(StreamOrderedAllocator, ReleasesCachedSegmentsOnlyAboveTheThresholdOrUnderPressure) {
  const size_t MiB = 1024 * KiB;
  auto run = [&](size_t limit, size_t threshold) {
    wt::CachingAllocator a(limit);
    a.set_release_threshold(threshold);
    Allocation first(a, 4 * MiB, 0);
    first.free();
    Allocation other(a, 8 * MiB, 0);  // the cached 4 MiB does not fit it
    const size_t reserved = a.stats().reserved;
    other.free();
    return reserved;
  };
  EXPECT_EQ(run(0, 0), 12 * MiB) << "no threshold: the 4 MiB segment stays cached";
  EXPECT_EQ(run(0, 16 * MiB), 12 * MiB) << "under the threshold: kept";
  EXPECT_EQ(run(0, 10 * MiB), 8 * MiB) << "above the threshold: released first";
  EXPECT_EQ(run(10 * MiB, 0), 8 * MiB) << "the budget would refuse: released first";
}

// PyTorch's max_split_size_mb: a large cached block is not cut into small ones.
TEST(StreamOrderedAllocator, DoesNotSplitBlocksOverMaxSplitBytes) {
  const size_t MiB = 1024 * KiB;
  for (size_t max_split : {size_t(0), 4 * MiB}) {
    wt::CachingAllocator a;
    a.set_max_split_bytes(max_split);
    EXPECT_EQ(a.max_split_bytes(), max_split);
    Allocation big(a, 8 * MiB, 0);
    big.free();
    Allocation one(a, 1 * MiB, 0);
    if (max_split == 0) {
      EXPECT_EQ(one.ptr, big.ptr) << "no limit: cut from the cached 8 MiB";
      EXPECT_EQ(a.stats().system_allocations, 1u);
    } else {
      EXPECT_NE(one.ptr, big.ptr) << "over the limit: the 8 MiB block stays whole";
      EXPECT_EQ(a.stats().system_allocations, 2u);
      EXPECT_EQ(a.stats().largest_free, 8 * MiB);
      Allocation six(a, 6 * MiB, 0);  // over the limit itself: takes the block, unsplit
      EXPECT_EQ(six.ptr, big.ptr);
      EXPECT_EQ(six.granted, 8 * MiB);
      EXPECT_EQ(a.stats().system_allocations, 2u);
      six.free();
    }
    one.free();
  }
}

// A training step's pattern on two streams: weights once, then each step activations allocated
// in forward order and freed in backward order, scratch and gradients in between, a receive
// buffer on the communication stream read by the compute stream, and one synchronisation per
// step (the copy back of its results). After warm-up the cache serves everything. Warm-up is two
// steps here, not one: the second step finds the first one's blocks laid out by history (best fit
// cuts a cached 6 MiB segment for a 2.6 MiB receive), and the layout is settled after it.
TEST(StreamOrderedAllocator, NoSystemAllocationPerStepAfterWarmUp) {
  QueuedStreamEvents events;
  wt::CachingAllocator a(0, &events);
  const std::vector<size_t> sizes = {
      6 * KiB,        300 * KiB, 1536 * KiB, 40 * KiB,
      3 * 1024 * KiB, 2 * KiB,   900 * KiB,  5 * 1024 * KiB + 12 * KiB};
  std::vector<Allocation> weights;
  for (size_t s : sizes) weights.emplace_back(a, s / 2 + 512, 0);
  std::vector<size_t> per_step;
  for (int step = 0; step < 8; ++step) {
    const size_t before = a.stats().system_allocations;
    std::vector<Allocation> acts;
    for (size_t s : sizes) {
      Allocation scratch(a, s / 3 + 100, 0);
      acts.emplace_back(a, s, 0);
      scratch.free();
    }
    for (size_t i = sizes.size(); i-- > 0;) {
      Allocation recv(a, sizes[i] / 2 + 512, 1);  // e.g. a gradient from the peer
      a.record_use(recv.ptr, 0);
      Allocation grad(a, sizes[i], 0);
      acts[i].free();
      recv.free();
      Allocation send(a, sizes[i], 1);  // handed to the communication stream
      grad.free();
      send.free();
    }
    events.synchronize();
    per_step.push_back(a.stats().system_allocations - before);
  }
  EXPECT_GT(per_step[0], 0u);
  for (size_t step = 2; step < per_step.size(); ++step)
    EXPECT_EQ(per_step[step], 0u) << "step " << step;
  EXPECT_EQ(a.stats().forced_syncs, 0u);
  for (Allocation& w : weights) w.free();
}
