// The strict device's model of which work a whole-step graph's capture holds (strict_graph.hpp),
// as CUDA's stream capture has it: the capturing stream, the streams forked from it when the
// capture began, and a stream that waits for an event recorded in the capture. Work on any other
// stream, and a copy from pageable host memory (a graph's copy node would read the address at each
// replay), are refused with messages naming them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/strict_streams.hpp"

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

}  // namespace
}  // namespace wt
