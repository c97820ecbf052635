// The strict device's model of what overlapped steps rely on (device.overlap_steps,
// exec/executor_step.cpp): a step's results copied into pinned host memory by its last work and
// read by the host only after waiting for an event after the copy; the step's join, which orders
// every stream's work before that copy; two graphs, each with its own capture; and a replay that
// starts after the work before it (the fork a CUDA graph's launch honours), so a step issued while
// the last one still runs cannot overtake it. Each rule has its negative: breaking it is an
// OrderingError naming the memory, not a wrong number later.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "device/strict_backend.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {
namespace {

// Device memory the queued kernels write: any memory the race detector is told about.
struct Buffer {
  std::vector<float> values = std::vector<float>(4, 0.f);
  void* ptr() { return values.data(); }
  size_t bytes() const { return values.size() * sizeof(float); }
};

void write(StrictStreams& queues, int stream, Buffer& b, float value) {
  float* p = b.values.data();
  const size_t n = b.values.size();
  queues.write_on_stream(stream, p, b.bytes(), "a kernel", [p, n, value] {
    for (size_t i = 0; i < n; ++i) p[i] = value;
  });
}

std::string ordering_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const OrderingError& e) {
    return e.what();
  }
  return "";
}

TEST(StrictOverlap, ResultsAreReadOnlyAfterTheEventAfterTheirCopy) {
  StrictStreams queues(1);
  Buffer results;
  queues.name_memory(results.ptr(), results.bytes(), "the results");
  auto* pinned = static_cast<float*>(queues.allocate_pinned(results.bytes()));
  queues.name_memory(pinned, results.bytes(), "the pinned results");
  write(queues, 0, results, 7.f);
  queues.copy_to_pinned_async(0, pinned, results.ptr(), results.bytes(), "the copy out");
  const StreamEvent done = queues.record(0);
  const std::string early =
      ordering_error([&] { queues.host_reads_pinned(pinned, results.bytes(), "reading them"); });
  EXPECT_NE(early.find("the pinned results"), std::string::npos) << early;
  EXPECT_NE(early.find("the copy out"), std::string::npos) << early;
  const uint64_t before = queues.synchronizations();
  queues.wait(done);
  EXPECT_EQ(queues.synchronizations(), before + 1);
  EXPECT_EQ(ordering_error([&] { queues.host_reads_pinned(pinned, results.bytes(), "reading"); }),
            "");
  EXPECT_EQ(pinned[3], 7.f);
  queues.free_pinned(pinned);
}

class StrictOverlapGraphs : public ::testing::Test {
 protected:
  StrictOverlapGraphs() : backend(1, Precision::Fp32), queues(backend.queues()) {
    queues.name_memory(shared.ptr(), shared.bytes(), "the shared tensor");
    queues.launch(1, DeviceWork{[] {}});  // stream 1 in use: forked into each capture
    queues.synchronize();
  }
  // One step: stream 1 writes the tensor, every stream is joined into stream 0 (unless
  // `join` is false), and stream 0 writes it again.
  void step(bool join = true) {
    write(queues, 1, shared, 1.f);
    if (join) backend.join_streams(0);
    write(queues, 0, shared, 2.f);
  }
  void capture(int graph) {
    backend.begin_graph_capture(graph);
    step();
    backend.end_graph_capture();
    queues.synchronize();
  }
  StrictBackend backend;
  StrictStreams& queues;
  Buffer shared;
};

TEST_F(StrictOverlapGraphs, TheJoinOrdersTheOtherStreamsBeforeStreamZerosLastWork) {
  backend.begin_graph_capture(0);
  EXPECT_EQ(ordering_error([&] { step(true); }), "");
  backend.end_graph_capture();
  queues.synchronize();
  backend.begin_graph_capture(1);
  const std::string unjoined = ordering_error([&] { step(false); });
  EXPECT_NE(unjoined.find("the shared tensor"), std::string::npos) << unjoined;
}

TEST_F(StrictOverlapGraphs, EachGraphReplaysItsOwnCapture) {
  capture(0);
  backend.begin_graph_capture(1);
  write(queues, 1, shared, 1.f);  // graph 1: one kernel less than graph 0
  backend.join_streams(0);
  backend.end_graph_capture();
  queues.synchronize();
  backend.begin_graph_replay(0);
  EXPECT_NO_THROW(step());
  backend.end_graph_replay();
  queues.synchronize();
  EXPECT_EQ(shared.values[0], 2.f) << "graph 0's captured work ran";
  backend.begin_graph_replay(1);
  write(queues, 1, shared, 1.f);
  backend.join_streams(0);
  EXPECT_NO_THROW(backend.end_graph_replay());
  queues.synchronize();
  EXPECT_EQ(shared.values[0], 1.f) << "graph 1's captured work ran";
}

TEST_F(StrictOverlapGraphs, AGraphReplayedBeforeItsCaptureIsRefused) {
  capture(0);
  std::string message;
  try {
    backend.begin_graph_replay(1);
  } catch (const GraphReplayError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("graph 1 replayed before its capture"), std::string::npos) << message;
}

// Two replays back to back, the host not waiting between them: the second's stream 1 write
// follows the first's stream 0 write only through the replay's fork.
TEST_F(StrictOverlapGraphs, AReplayStartsAfterTheWorkBeforeIt) {
  capture(0);
  capture(1);
  for (int graph : {0, 1, 0}) {
    backend.begin_graph_replay(graph);
    EXPECT_EQ(ordering_error([&] { step(); }), "") << "replay of graph " << graph;
    backend.end_graph_replay();
  }
  queues.synchronize();
  EXPECT_EQ(shared.values[0], 2.f);
}

TEST_F(StrictOverlapGraphs, AReplayThatDoesNotWaitForTheWorkBeforeItIsARace) {
  capture(0);
  capture(1);
  queues.plant_glue_bug(StrictStreams::GlueBug::ReplayForksNone);
  backend.begin_graph_replay(0);
  step();
  backend.end_graph_replay();
  backend.begin_graph_replay(1);
  const std::string message = ordering_error([&] { step(); });
  EXPECT_NE(message.find("the shared tensor"), std::string::npos) << message;
  EXPECT_NE(message.find("stream 1"), std::string::npos) << message;
}

}  // namespace
}  // namespace wt

namespace wt {
namespace {

// The allocator keeps each graph's record of addresses (a capture per pinned set): a replay is
// checked against its own graph's capture, not the other's.
TEST(StrictOverlapMemory, EachGraphKeepsItsOwnAllocations) {
  StrictStreams queues(1);
  CachingAllocator memory(size_t(64) << 20, &queues);
  auto graphed_step = [&](bool capture, int graph, int allocations) {
    capture ? memory.begin_graph_capture(graph) : memory.begin_graph_replay(graph);
    std::vector<void*> taken;
    for (int a = 0; a < allocations; ++a) taken.push_back(memory.allocate(4096, 0));
    std::vector<void*> addresses = taken;
    for (void* ptr : taken) memory.release(ptr, 0);
    memory.end_graph_step();
    return addresses;
  };
  const std::vector<void*> zero = graphed_step(true, 0, 1);
  const std::vector<void*> one = graphed_step(true, 1, 2);
  EXPECT_EQ(graphed_step(false, 0, 1), zero);
  EXPECT_EQ(graphed_step(false, 1, 2), one);
  std::string message;
  try {
    graphed_step(false, 0, 2);  // graph 1's sequence replayed as graph 0
  } catch (const std::logic_error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("had only 1 allocations"), std::string::npos) << message;
  queues.synchronize();
}

}  // namespace
}  // namespace wt
