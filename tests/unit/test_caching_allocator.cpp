#include <gtest/gtest.h>

#include "mem/caching_allocator.hpp"
#include "tensor/tensor.hpp"
#include "test_memory.hpp"

TEST(CachingAllocator, ReusesFreedBlocksWithoutSystemCalls) {
  wt::CachingAllocator a;
  size_t g1 = 0, g2 = 0;
  void* p = a.allocate(1000, 0, &g1);
  a.release(p, 0);
  void* q = a.allocate(900, 0, &g2);
  EXPECT_EQ(p, q);
  EXPECT_EQ(a.stats().system_allocations, 1u);
  a.release(q, 0);
}

TEST(CachingAllocator, EnforcesBudgetAfterFlushingCache) {
  wt::CachingAllocator a(1 << 20);
  size_t g = 0, g2 = 0;
  void* p = a.allocate(600 << 10, 0, &g);
  EXPECT_THROW(a.allocate(600 << 10, 0, &g2), wt::OutOfMemory);
  a.release(p, 0);
  // The cached 600 KiB block is returned to the system to make room for a different size.
  void* q = a.allocate(700 << 10, 0, &g2);
  EXPECT_NE(q, nullptr);
  EXPECT_LE(a.stats().reserved, size_t(1) << 20);
  a.release(q, 0);
}

// A job's share (a background job's background.memory_limit) bounds that job alone.
TEST(CachingAllocator, EnforcesAJobsShare) {
  wt::CachingAllocator a;  // no device budget
  a.set_job_limit(1, 1 << 20);
  void *p, *q;
  {
    wt::CachingAllocator::JobScope background(a, 1);
    p = a.allocate(600 << 10, 0);
    try {
      a.allocate(600 << 10, 0);
      ADD_FAILURE() << "job 1 went over its share";
    } catch (const wt::OutOfMemory& e) {
      EXPECT_NE(std::string(e.what()).find("for job 1, which has 614400 of its share of 1048576"),
                std::string::npos)
          << e.what();
    }
  }
  q = a.allocate(4 << 20, 0);  // job 0 has no share of its own
  a.release(p, 0);
  {
    wt::CachingAllocator::JobScope background(a, 1);
    a.release(a.allocate(900 << 10, 0), 0);  // what it freed is its own again
  }
  a.set_job_limit(1, 0);
  {
    wt::CachingAllocator::JobScope background(a, 1);
    a.release(a.allocate(2 << 20, 0), 0);  // no share any more
  }
  a.release(q, 0);
}

TEST(CachingAllocator, TracksPeaks) {
  wt::CachingAllocator a;
  {
    wt::Tensor t1 = wt::Tensor::empty({1024}, a);
    wt::Tensor t2 = wt::Tensor::empty({1024}, a);
    EXPECT_EQ(a.stats().in_use, 2 * wt::CachingAllocator::round_size(4096));
  }
  EXPECT_EQ(a.stats().in_use, 0u);
  EXPECT_EQ(a.stats().peak_in_use, 2 * wt::CachingAllocator::round_size(4096));
}

TEST(Tensor, SliceSharesStorage) {
  wt::Tensor t = wt::Tensor::zeros({10}, wt::testing::memory());
  wt::Tensor s = t.slice(4, {2, 3});
  s.fill(1.0f);
  EXPECT_EQ(t.data()[3], 0.0f);
  EXPECT_EQ(t.data()[4], 1.0f);
  EXPECT_EQ(t.data()[9], 1.0f);
  EXPECT_THROW(t.slice(8, {3}), std::out_of_range);
}
