// The program events each device runs Record, Wait and transfers through
// (device/program_events.hpp): the host device's complete at once or by polling; the strict
// device's order a waiting stream's work after a Record's stream and a transfer's start after its
// stream's work, run a transfer's completion work before its event completes, and refuse
// (OrderingError, naming what) a glue bug that breaks any of those edges, whatever the shuffled
// order.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "device/device_context.hpp"
#include "device/race_detector.hpp"

namespace {

using wt::AsyncOperation;
using wt::DeviceContext;
using wt::DeviceKind;
using wt::DeviceWork;
using wt::OpsBackend;
using wt::ProgramEvents;
using wt::StrictStreams;
using wt::Transfer;

// A transfer in flight that completes when the test says so.
struct Flag {
  bool done = false;
};
class FlaggedOperation : public AsyncOperation {
 public:
  explicit FlaggedOperation(Flag& flag) : flag_(flag) {}
  bool test() override { return flag_.done; }
  void wait() override { flag_.done = true; }

 private:
  Flag& flag_;
};

Transfer transfer(int event, int stream, Flag& flag, std::vector<std::string>& log,
                  const std::string& name) {
  Transfer t;
  t.event = event;
  t.stream = stream;
  t.begin = [&flag, &log, name](const OpsBackend&) {
    log.push_back(name + " started");
    return std::unique_ptr<AsyncOperation>(std::make_unique<FlaggedOperation>(flag));
  };
  t.then = [&log, name](const OpsBackend&) { log.push_back(name + " completion work"); };
  return t;
}

TEST(ProgramEvents, HostRecordCompletesAtOnceAndTransfersWhenPolled) {
  DeviceContext device;
  auto events = device.backend().program_events(2, nullptr);
  events->reset();
  events->record(0, 0);
  EXPECT_TRUE(events->completed(0));
  Flag flag;
  std::vector<std::string> log;
  events->transfer(transfer(1, 0, flag, log, "send"));
  EXPECT_EQ(log, std::vector<std::string>{"send started"}) << "the host starts it when issued";
  EXPECT_FALSE(events->waitable(1)) << "a Wait on the host holds the host until it completes";
  EXPECT_TRUE(events->poll());
  flag.done = true;
  EXPECT_TRUE(events->completed(1));
  EXPECT_EQ(log.back(), "send completion work");
  EXPECT_FALSE(events->poll()) << "nothing left in flight";
}

TEST(ProgramEvents, HostResetFinishesATransferNothingWaitedFor) {
  DeviceContext device;
  auto events = device.backend().program_events(1, nullptr);
  events->reset();
  Flag flag;
  std::vector<std::string> log;
  events->transfer(transfer(0, 0, flag, log, "send"));
  events->reset();  // waits for it (FlaggedOperation::wait completes it)
  EXPECT_EQ(log.back(), "send completion work");
  EXPECT_FALSE(events->in_flight(0));
}

// Stream 1 waits for a Record after stream 0's work: under every seed, stream 1's work runs after.
TEST(ProgramEvents, StrictWaitOrdersTheWaiterAfterTheRecordedWork) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    DeviceContext device(0, DeviceKind::Strict, seed);
    auto events = device.backend().program_events(1, nullptr);
    events->reset();
    std::vector<std::string> ran;
    device.launch(0, DeviceWork([&] { ran.push_back("producer"); }));
    events->record(0, 0);
    EXPECT_TRUE(events->waitable(0)) << "recorded on the device: a Wait may be issued";
    EXPECT_FALSE(events->completed(0)) << "issuing must not run the work";
    events->wait(1, 0);
    device.launch(1, DeviceWork([&] { ran.push_back("consumer"); }));
    device.synchronize();
    EXPECT_EQ(ran, (std::vector<std::string>{"producer", "consumer"})) << "seed " << seed;
    EXPECT_TRUE(events->completed(0));
  }
}

// A transfer starts after its stream's earlier work and completes (completion work included)
// before a Wait on its event lets the waiting stream go on.
TEST(ProgramEvents, StrictTransferRunsBetweenItsStreamAndItsWaiter) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    DeviceContext device(0, DeviceKind::Strict, seed);
    auto events = device.backend().program_events(1, nullptr);
    events->reset();
    std::vector<std::string> log;
    Flag flag;
    device.launch(0, DeviceWork([&] { log.push_back("producer"); }));
    events->transfer(transfer(0, 0, flag, log, "allreduce"));
    events->wait(1, 0);
    device.launch(1, DeviceWork([&] { log.push_back("consumer"); }));
    EXPECT_TRUE(events->in_flight(0));
    device.backend().drain([&] {
      flag.done = true;  // the peers arrive once the device has nothing else to run
      return events->poll();
    });
    EXPECT_EQ(log, (std::vector<std::string>{"producer", "allreduce started",
                                             "allreduce completion work", "consumer"}))
        << "seed " << seed;
    EXPECT_TRUE(events->completed(0));
  }
}

// Each glue bug breaks one edge the race detector was told about; the strict device's check of
// that edge where it is used refuses it with a message, on every seed.
void expect_glue_bug_caught(StrictStreams::GlueBug bug, bool via_transfer,
                            const std::string& expected) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    DeviceContext device(0, DeviceKind::Strict, seed);
    device.queues()->plant_glue_bug(bug);
    auto events = device.backend().program_events(3, nullptr);
    events->reset();
    std::vector<std::string> log;
    Flag flag{true};
    // Work enough that the broken edge is used before the work it claims has run, whatever the
    // seeded order: 20 pieces before the Record or the transfer, and two more transfers queued
    // behind the first on the communication stream.
    for (int i = 0; i < 20; ++i) device.launch(0, DeviceWork([] {}));
    if (via_transfer) {
      events->transfer(transfer(0, 0, flag, log, "bcast"));
      for (int e = 1; e <= 2; ++e) events->transfer(transfer(e, 2, flag, log, "more"));
    } else {
      events->record(0, 0);
    }
    events->wait(1, 0);
    device.launch(1, DeviceWork([] {}));
    try {
      device.backend().drain([&] { return events->poll(); });
      ADD_FAILURE() << "seed " << seed << ": the planted bug went through";
    } catch (const wt::OrderingError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST(ProgramEvents, StrictRefusesATransferStartedBeforeItsStreamsWork) {
  expect_glue_bug_caught(StrictStreams::GlueBug::CommNotGated, true,
                         "pieces of work issued before it");
}

TEST(ProgramEvents, StrictRefusesARecordCompleteBeforeItsWork) {
  expect_glue_bug_caught(StrictStreams::GlueBug::RecordDoneAtIssue, false,
                         "marked complete before the work it stands for");
}

TEST(ProgramEvents, StrictRefusesCompletionWorkAfterTheEvent) {
  expect_glue_bug_caught(StrictStreams::GlueBug::CompletionAfterDone, true,
                         "and its completion work had run");
}

// A staged copy to the host of memory a transfer writes is ordered only once the host has seen
// the transfer complete: a synchronisation alone does not make it so (MPI on the host device
// would still be writing).
TEST(ProgramEvents, StrictRefusesAHostCopyOfMemoryATransferStillWrites) {
  DeviceContext device(0, DeviceKind::Strict, 1);
  auto events = device.backend().program_events(1, nullptr);
  events->reset();
  wt::Tensor grads = wt::Tensor::zeros({16}, device.allocator());
  Flag flag{true};
  std::vector<std::string> log;
  Transfer t = transfer(0, 0, flag, log, "allreduce");
  t.accesses.push_back({grads.device_ptr(), grads.bytes(), true, "the transfer's write"});
  events->transfer(std::move(t));
  EXPECT_THROW(grads.to_host(), wt::OrderingError);
  EXPECT_TRUE(events->completed(0));  // the host sees it complete: now the copy is ordered
  EXPECT_NO_THROW(grads.to_host());
}

TEST(ProgramEvents, StrictDeadlockNamesWhatTheStuckWorkWaitsFor) {
  DeviceContext device(0, DeviceKind::Strict, 1);
  auto events = device.backend().program_events(1, nullptr);
  events->reset();
  Flag never;
  std::vector<std::string> log;
  device.backend().describe_issue("allreduce event=0");
  events->transfer(transfer(0, 0, never, log, "allreduce"));
  device.backend().describe_issue("wait event=0");
  events->wait(1, 0);
  try {
    device.backend().drain([] { return false; });
    ADD_FAILURE() << "no deadlock reported";
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("wait event=0, waiting for event 0 of allreduce event=0"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("the completion of allreduce event=0"), std::string::npos) << what;
  }
}

}  // namespace
