// Waterwave's stream-aware allocation (§4.2, Listing 1; issue 20 piece 1): the allocator with
// CrossStreamReuse::AfterSync. Search order: the stream's own freed blocks, then blocks made safe
// for every stream by a synchronisation, then fresh memory within the budget, then a forced
// synchronisation (counted), then OutOfMemory. A freed block is filed under the stream that freed
// it. Events here are always complete: under AfterSync they are never asked, which is the point.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "allocator_test_util.hpp"
#include "device/device_context.hpp"
#include "mem/caching_allocator.hpp"

namespace {

using wt_test::Allocation;
using wt_test::kWhole;
using wt_test::QueuedStreamEvents;

struct WaterwaveAllocator {
  explicit WaterwaveAllocator(size_t limit) : allocator(limit, &events) {
    allocator.set_cross_stream_reuse(wt::CrossStreamReuse::AfterSync);
  }
  QueuedStreamEvents events;
  wt::CachingAllocator allocator;
};

TEST(WaterwaveAllocator, OwnStreamThenSyncedThenFreshThenForcedSyncThenFail) {
  WaterwaveAllocator w(3 * kWhole);
  wt::CachingAllocator& a = w.allocator;
  Allocation x(a, kWhole, 1);
  x.free();
  w.events.synchronize();  // stream 1 has finished: only a synchronisation of the allocator counts
  Allocation own(a, kWhole, 1);
  EXPECT_EQ(own.ptr, x.ptr) << "1: the stream's own freed block";
  own.free();
  Allocation fresh(a, kWhole, 0);
  EXPECT_NE(fresh.ptr, x.ptr) << "3: fresh memory, not stream 1's unsynchronised block";
  EXPECT_EQ(a.stats().forced_syncs, 0u);
  a.sync_and_coalesce();
  Allocation synced(a, kWhole, 0);
  EXPECT_EQ(synced.ptr, x.ptr) << "2: after a synchronisation, safe for every stream";
  synced.free();                   // now stream 0's, unsynchronised
  Allocation third(a, kWhole, 2);  // the budget's third block
  EXPECT_NE(third.ptr, x.ptr);
  third.free();
  const int syncs_before = w.events.synchronizations;
  Allocation forced(a, 2 * kWhole, 1);  // no room: both free blocks are other streams'
  EXPECT_EQ(a.stats().forced_syncs, 1u) << "4: memory pressure forced a synchronisation";
  EXPECT_EQ(w.events.synchronizations, syncs_before + 1);
  EXPECT_THROW(Allocation(a, 2 * kWhole, 1), wt::OutOfMemory) << "5: nothing left";
  forced.free();
  fresh.free();
}

// The paper files a freed block under the stream that allocated it; here it is the stream that
// freed it (its last user): allocated on 0, freed on 1 after stream 1's read, it is stream 1's at
// once and stream 0's only after a synchronisation.
TEST(WaterwaveAllocator, AFreedBlockIsFiledUnderTheStreamThatFreedIt) {
  WaterwaveAllocator w(0);
  wt::CachingAllocator& a = w.allocator;
  Allocation x(a, kWhole, 0);
  a.release(x.ptr, 1);
  Allocation on_zero(a, kWhole, 0);
  EXPECT_NE(on_zero.ptr, x.ptr);
  Allocation on_one(a, kWhole, 1);
  EXPECT_EQ(on_one.ptr, x.ptr);
  on_zero.free();
  on_one.free();
}

// Co-located jobs of different sizes: two neighbouring blocks one job freed on two streams merge
// at the pair boundary into one that serves the other job's larger tensor, from the same segment.
TEST(WaterwaveAllocator, SyncAndCoalesceMergesBlocksAcrossStreamsForAnotherJobsSize) {
  WaterwaveAllocator w(2 * kWhole);  // exact segments under a budget: one per request
  wt::CachingAllocator& a = w.allocator;
  void* big = a.allocate(2 * kWhole, 0);
  a.release(big, 0);
  a.sync_and_coalesce();
  for (const bool at_pair_boundary : {true, false}) {
    std::vector<Allocation> halves;
    {
      wt::CachingAllocator::JobScope job_a(a, 0);
      halves.emplace_back(a, kWhole, 0);
      halves.emplace_back(a, kWhole, 1);
    }
    EXPECT_EQ(a.stats().reserved, 2 * kWhole) << "both halves cut from the one segment";
    halves[0].free();
    halves[1].free();
    const size_t forced = a.stats().forced_syncs;
    if (at_pair_boundary) a.sync_and_coalesce();
    wt::CachingAllocator::JobScope job_b(a, 1);
    void* merged = a.allocate(2 * kWhole, 1);
    EXPECT_EQ(merged, big);
    EXPECT_EQ(a.stats().reserved, 2 * kWhole) << "no new segment";
    // Without the boundary's synchronisation, the budget forces one to merge them.
    EXPECT_EQ(a.stats().forced_syncs, forced + (at_pair_boundary ? 0 : 1));
    a.release(merged, 1);
    a.sync_and_coalesce();
  }
}

// On the strict device: stream 1 reads a block and the host frees it on stream 1 while the read
// is still queued; stream 0 then allocates and overwrites. Under AfterSync stream 0 never gets the
// block before a synchronisation, and every seed reads the right values. With the synchronisation
// removed from the pair boundary (the planted bug) the block is marked safe while stream 1 may
// still use it: the strict device's race detector stops the overwrite, naming both accesses.
std::string reuse_across_streams(uint64_t seed, bool planted) {
  wt::DeviceContext device(0, wt::DeviceKind::Strict, seed);
  device.allocator().set_cross_stream_reuse(wt::CrossStreamReuse::AfterSync);
  std::vector<float> read(64, -1.0f);
  try {
    {
      wt::Tensor x = wt::Tensor::empty({64}, device.allocator(), 1);
      x.fill_async(1.0f, 1);
      device.launch(
          1, wt::DeviceWork{[&read, p = x.device_ptr()] { std::copy(p, p + 64, read.begin()); },
                            nullptr, false});
    }  // freed on stream 1 by the host, the read still queued
    device.allocator().sync_and_coalesce(!planted);  // a pair boundary
    wt::Tensor y = wt::Tensor::empty({64}, device.allocator(), 0);
    y.fill_async(7.0f, 0);
    device.synchronize();
  } catch (const std::exception& e) {
    return e.what();
  }
  const bool right = std::all_of(read.begin(), read.end(), [](float v) { return v == 1.0f; });
  return right ? "" : "stream 1 read overwritten values";
}

TEST(WaterwaveAllocator, OnTheStrictDeviceNoBlockReachesAnotherStreamBeforeItsSynchronisation) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    EXPECT_EQ(reuse_across_streams(seed, false), "") << "seed " << seed;
    const std::string planted = reuse_across_streams(seed, true);
    EXPECT_NE(planted.find("unordered access to a 256-byte tensor allocated on stream 0"),
              std::string::npos)
        << "seed " << seed << ": " << planted;
  }
}

}  // namespace
