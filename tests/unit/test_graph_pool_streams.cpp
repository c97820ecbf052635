// The graph's memory across streams (mem/caching_allocator_graph.cpp): while a step is captured no
// event may be queried, so a block freed on one stream serves another only when the program's
// captured Record and Wait order the free first: a Record on the freeing stream after the free, and
// a Wait for it on the allocating stream (or a chain of them: the clocks are transitive).
#include <gtest/gtest.h>

#include "device/strict_streams.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {
namespace {

constexpr size_t kBytes = 4096;

class GraphPoolStreams : public ::testing::Test {
 protected:
  GraphPoolStreams() : memory(size_t(64) << 20, &queues) {
    memory.begin_graph_capture();
    queues.graph().begin_capture({1, 2});
  }
  ~GraphPoolStreams() override {
    queues.graph().end_capture();
    for (auto [ptr, stream] : held) memory.release(ptr, stream);
    memory.end_graph_step();
    queues.synchronize();
  }
  void* take(int stream) {
    void* ptr = memory.allocate(kBytes, stream);
    held.emplace_back(ptr, stream);
    return ptr;
  }
  void give_back(void* ptr) {
    for (auto it = held.begin(); it != held.end(); ++it)
      if (it->first == ptr) {
        memory.release(ptr, it->second);
        held.erase(it);
        return;
      }
  }
  StrictStreams queues{1};
  CachingAllocator memory;
  std::vector<std::pair<void*, int>> held;
};

TEST_F(GraphPoolStreams, AFreeServesAnotherStreamOnlyAfterACapturedWait) {
  void* freed = take(0);
  give_back(freed);
  EXPECT_NE(take(1), freed) << "nothing orders stream 0's free before stream 1's work";
  memory.graph_record(7, 0);
  memory.graph_wait(1, 7);
  EXPECT_EQ(take(1), freed);
}

TEST_F(GraphPoolStreams, ARecordBeforeTheLastUseDoesNotOrderIt) {
  void* freed = take(0);
  memory.graph_record(7, 0);
  queues.launch(0, DeviceWork{[] {}});  // the block's last use, after the Record
  give_back(freed);
  memory.graph_wait(1, 7);
  EXPECT_NE(take(1), freed);
}

TEST_F(GraphPoolStreams, OrderIsTransitiveAcrossStreams) {
  void* freed = take(0);
  give_back(freed);
  memory.graph_record(7, 0);
  memory.graph_wait(1, 7);  // stream 1 follows stream 0's free
  memory.graph_record(8, 1);
  memory.graph_wait(2, 8);  // and stream 2 follows stream 1
  EXPECT_EQ(take(2), freed);
}

// (A reuse with no such order is a race the strict device names: graph_reuse_unordered in
// tests/e2e/cuda_graphs_strict.sh.)

}  // namespace
}  // namespace wt
