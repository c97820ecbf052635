// The strict device's model of which work a whole-step graph's capture holds (strict_graph.hpp),
// as CUDA's stream capture has it: the capturing stream, the streams forked from it when the
// capture began, and a stream that waits for an event recorded in the capture. Work on any other
// stream, and a copy from pageable host memory (a graph's copy node would read the address at each
// replay), are refused with messages naming them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/strict_streams.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {
namespace {

DeviceWork nothing() {
  return DeviceWork{[] {}};
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const GraphReplayError& e) {
    return e.what();
  }
  return "";
}

TEST(StrictGraphCapture, WorkOnAStreamOutsideTheCaptureIsRefused) {
  StrictStreams queues(1);
  queues.graph().begin_capture({});  // nothing forked: stream 0 alone
  queues.launch(0, nothing());
  const std::string message = refusal([&] { queues.launch(2, nothing()); });
  EXPECT_NE(message.find("stream 2 is not in the capture"), std::string::npos) << message;
  EXPECT_NE(message.find("never in a replay"), std::string::npos) << message;
}

TEST(StrictGraphCapture, ForkedStreamsAndStreamsThatWaitForACapturedEventAreIn) {
  StrictStreams queues(1);
  queues.launch(1, nothing());  // stream 1 in use before the capture: forked into it
  queues.synchronize();
  EXPECT_EQ(queues.streams_in_use(), (std::vector<int>{1}));
  queues.graph().begin_capture(queues.streams_in_use());
  EXPECT_EQ(refusal([&] { queues.launch(1, nothing()); }), "");
  // Stream 3 joins by waiting for an event recorded in the capture on stream 1 ...
  queues.graph().note_record(7, 1);
  queues.graph().note_wait(3, 7);
  EXPECT_EQ(refusal([&] { queues.launch(3, nothing()); }), "");
  // ... and stream 4 does not, by waiting for one recorded on stream 5, outside the capture.
  queues.graph().note_record(8, 5);
  queues.graph().note_wait(4, 8);
  EXPECT_NE(refusal([&] { queues.launch(4, nothing()); }), "");
}

TEST(StrictGraphCapture, AStreamInTheCaptureWaitingForAnEventOutsideItIsRefused) {
  StrictStreams queues(1);
  queues.graph().begin_capture({1});
  queues.graph().note_record(3, 1);
  EXPECT_EQ(refusal([&] { queues.graph().note_wait(0, 3); }), "");
  const std::string message = refusal([&] { queues.graph().note_wait(1, 9); });
  EXPECT_NE(message.find("an event recorded outside the step's capture"), std::string::npos)
      << message;
}

// The poisoning of freed memory is the strict device's own check: it neither makes a stream one
// the capture forks nor is refused on a stream outside the capture.
TEST(StrictGraphCapture, ThePoisoningOfFreedMemoryIsNoStreamWork) {
  StrictStreams queues(1);
  std::vector<float> freed(4);
  queues.retire(2, freed.data(), 16);
  queues.synchronize();
  EXPECT_TRUE(queues.streams_in_use().empty());
  queues.graph().begin_capture(queues.streams_in_use());
  EXPECT_EQ(refusal([&] { queues.retire(3, freed.data(), 16); }), "");
  EXPECT_NE(refusal([&] { queues.launch(3, nothing()); }), "");
}

TEST(StrictGraphCapture, APageableCopyInACaptureIsRefusedAndAPinnedOneIsNot) {
  StrictStreams queues(1);
  std::vector<float> device(4), pageable(4, 1.0f);
  queues.graph().begin_capture({});
  const std::string message = refusal([&] {
    queues.copy_to_device_async(0, device.data(), pageable.data(), 16, "the test's copy");
  });
  EXPECT_NE(message.find("the test's copy, a copy from pageable host memory"), std::string::npos)
      << message;
  float* pinned = static_cast<float*>(queues.allocate_pinned(16));
  EXPECT_EQ(refusal([&] {
              queues.copy_from_pinned_async(0, device.data(), pinned, 16, "a pinned copy");
            }),
            "");
  queues.graph().end_capture();
  queues.synchronize();
  queues.free_pinned(pinned);
}

// cudaFree: a device synchronisation (it waits for every stream's work, so no queued work can touch
// the segment afterwards), counted as host code waiting; during a capture, refused.
TEST(StrictGraphCapture, ReturningASegmentSynchronisesAndIsRefusedInACapture) {
  StrictStreams queues(1);
  void* segment = queues.allocate_segment(4096);
  bool ran = false;
  queues.launch(1, DeviceWork{[&] { ran = true; }});
  const uint64_t before = queues.synchronizations();
  queues.before_segment_release();
  queues.free_segment(segment, 4096);
  EXPECT_TRUE(ran) << "the queued work must run before its memory could go";
  EXPECT_EQ(queues.synchronizations(), before + 1);
  void* other = queues.allocate_segment(4096);
  queues.graph().begin_capture({});
  EXPECT_NE(refusal([&] { queues.before_segment_release(); }), "");
  const std::string message = refusal([&] { queues.free_segment(other, 4096); });
  EXPECT_NE(message.find("returning a memory segment to the system (cudaFree) while a step is "
                         "captured"),
            std::string::npos)
      << message;
  queues.graph().end_capture();
  queues.free_segment(other, 4096);
}

// Under device.memory_limit the allocator returns cached segments to make room, except while a
// step is captured: there it reports the budget exhausted, naming the capture, instead of a
// cudaFree that would break it. The cached segment here is one made safe for every stream during
// the capture (sync_and_coalesce), which the capture's own allocation must leave alone.
TEST(StrictGraphCapture, TheAllocatorReturnsNoSegmentDuringACapture) {
  constexpr size_t kSegment = size_t(2) << 20;
  StrictStreams queues(1);
  CachingAllocator memory(2 * kSegment, &queues);
  void* eager = memory.allocate(kSegment, 0);
  queues.launch(0, nothing());  // the free's event is not reached when the capture begins
  memory.release(eager, 0);
  memory.begin_graph_capture();
  queues.graph().begin_capture({});
  memory.sync_and_coalesce(false);
  EXPECT_EQ(memory.stats().reserved, kSegment);
  std::string message;
  try {
    memory.allocate(2 * kSegment, 0);
  } catch (const OutOfMemory& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("while a step was captured as a CUDA graph"), std::string::npos)
      << message;
  EXPECT_EQ(memory.stats().reserved, kSegment) << "the cached segment stays";
  queues.graph().end_capture();
  memory.end_graph_step();
  queues.synchronize();
}

}  // namespace
}  // namespace wt
