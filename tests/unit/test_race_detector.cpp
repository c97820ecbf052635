// The strict device's race detector on its own: which pairs of accesses it orders (stream order,
// Record/Wait, a transfer waited on, what the host saw finish) and which it refuses, naming both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/race_detector.hpp"

namespace wt {
namespace {

class RaceDetectorTest : public ::testing::Test {
 protected:
  RaceDetectorTest() : memory(64, 0.0f) { races.name_memory(memory.data(), 256, "tensor 'x'"); }
  // The message of the OrderingError `access` throws, or "" when it is accepted.
  template <typename Access>
  std::string refusal(Access access) {
    try {
      access();
    } catch (const OrderingError& e) {
      return e.what();
    }
    return "";
  }
  RaceDetector races;
  std::vector<float> memory;
  const float* x() const { return memory.data(); }
};

TEST_F(RaceDetectorTest, OneStreamIsOrderedByItself) {
  races.set_instruction("fwd");
  races.access(0, 1, x(), 256, true, "write");
  races.access(0, 2, x(), 256, false, "read");
  races.access(0, 3, x(), 256, true, "write again");
}

TEST_F(RaceDetectorTest, TwoStreamsNeedAnEvent) {
  races.set_instruction("fwd stage=0");
  races.access(0, 1, x(), 256, true, "relu_forward");
  races.set_instruction("keep_grad");
  const std::string message = refusal([&] { races.access(1, 1, x(), 16, false, "copy"); });
  EXPECT_NE(message.find("copy of keep_grad"), std::string::npos) << message;
  EXPECT_NE(message.find("on stream 1 reads it"), std::string::npos) << message;
  EXPECT_NE(message.find("relu_forward of fwd stage=0"), std::string::npos) << message;
  EXPECT_NE(message.find("tensor 'x'"), std::string::npos) << message;

  RaceDetector ordered;
  ordered.access(0, 1, x(), 256, true, "relu_forward");
  ordered.record_event(4, 0, 2);
  ordered.wait_event(1, 4, 1);
  ordered.access(1, 2, x(), 256, false, "copy");  // after the Wait: ordered
}

TEST_F(RaceDetectorTest, DisjointRangesNeverConflict) {
  races.access(0, 1, x(), 128, true, "first half");
  races.access(1, 1, x() + 32, 128, true, "second half");
}

TEST_F(RaceDetectorTest, ATransferIsOrderedOnlyAfterItsWait) {
  races.set_instruction("allreduce");
  races.comm_begin(3, 0);
  races.comm_access(3, x(), 256, true, "the transfer's write");
  races.set_instruction("step");
  EXPECT_NE(refusal([&] {
              races.access(0, 2, x(), 256, false, "sgd_update");
            }).find("on the communication of event 3 may still be writing it"),
            std::string::npos);
  races.wait_event(0, 3, 3);
  races.access(0, 4, x(), 256, false, "sgd_update");
}

TEST_F(RaceDetectorTest, WorkKnowsWhatTheHostKnewWhenItWasIssued) {
  races.comm_begin(3, 0);
  races.comm_access(3, x(), 256, true, "recv");
  const RaceDetector::Clock issued = races.host_knowledge();  // issued before the host saw it
  races.host_saw_event(3);
  races.begin_work(issued);
  EXPECT_NE(refusal([&] { races.access(0, 2, x(), 256, false, "relu_forward"); }), "");
  races.end_work();
  races.begin_work(races.host_knowledge());  // issued after: ordered
  races.access(0, 3, x(), 256, false, "relu_forward");
  races.end_work();
}

TEST_F(RaceDetectorTest, AReuseBeforeTheLastUserFinishedIsCaught) {
  races.access(0, 1, x(), 256, false, "linear_backward");
  // The block goes back to the pool and another stream writes it: refused until the host has
  // seen stream 0 reach that point.
  EXPECT_NE(refusal([&] { races.access(1, 1, x(), 256, true, "fill"); }), "");
  races.host_saw_stream(0, 1);
  races.access(1, 2, x(), 256, true, "fill");
}

TEST_F(RaceDetectorTest, AHostWriteNeedsEveryAccessFinished) {
  races.access(0, 1, x(), 256, false, "linear_backward");
  EXPECT_NE(refusal([&] {
              races.host_write(x(), 256, "the allocator poisoning a freed block");
            }).find("on the host writes it"),
            std::string::npos);
  races.synchronized();
  races.host_write(x(), 256, "the allocator poisoning a freed block");
}

}  // namespace
}  // namespace wt
