// An ops backend's scratch (ops/growing_buffer.hpp) keeps its earlier storage when it grows: a
// CUDA graph captured with the old address (the staged labels of a training step) replays into it
// after an evaluation's larger batch grew the buffer, so freeing it at the growth was a use after
// free. Everything goes at release(), once; growth at least doubles.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "ops/growing_buffer.hpp"

namespace wt {
namespace {

struct RecordingMemory {
  static inline std::set<void*> live;
  static inline int frees = 0;
  static void* allocate(size_t bytes) {
    void* p = std::malloc(bytes);
    live.insert(p);
    return p;
  }
  static void free(void* p) {
    ASSERT_EQ(live.erase(p), 1u) << "freed twice, or never allocated";
    ++frees;
    std::free(p);
  }
};

TEST(GrowingBuffer, GrowingKeepsTheStorageAGraphMayStillAddress) {
  RecordingMemory::live.clear();
  RecordingMemory::frees = 0;
  {
    GrowingBuffer<RecordingMemory> labels;
    void* captured = labels.at_least(64 * 4);  // a training step's labels, captured
    EXPECT_EQ(labels.at_least(10), captured) << "a smaller batch reuses it";
    void* evaluation = labels.at_least(256 * 4);  // an evaluation's larger batch
    EXPECT_NE(evaluation, captured);
    EXPECT_EQ(RecordingMemory::frees, 0);
    EXPECT_EQ(RecordingMemory::live.count(captured), 1u) << "the captured address stays valid";
    void* grown = labels.at_least(300 * 4);
    EXPECT_EQ(labels.at_least(1), grown) << "grown, then reused";
    EXPECT_GE(labels.bytes(), 2u * 256 * 4) << "growth at least doubles";
    EXPECT_EQ(labels.kept(), 2u);
    labels.release();
    EXPECT_EQ(RecordingMemory::frees, 3);
    EXPECT_TRUE(RecordingMemory::live.empty());
    EXPECT_EQ(labels.bytes(), 0u);
  }
  EXPECT_EQ(RecordingMemory::frees, 3) << "the destructor frees nothing twice";
}

}  // namespace
}  // namespace wt
