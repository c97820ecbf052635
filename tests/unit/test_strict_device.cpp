// The strict device: lazy queued streams in a seeded order, events, issue-ordered communication,
// host access refused, staged copies, poisoned frees. The negative tests show the bugs it exists
// to catch failing on it and passing unnoticed on the host device.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "device/device_context.hpp"
#include "ops/kernel_args.hpp"
#include "tensor/tensor.hpp"

namespace {

using wt::DeviceContext;
using wt::DeviceKind;
using wt::DeviceWork;
using wt::Tensor;

DeviceWork work(std::function<void()> run) { return DeviceWork{std::move(run), nullptr, false}; }

TEST(StrictDevice, WorkRunsLazilyAtSynchronisationInStreamOrder) {
  DeviceContext device(0, DeviceKind::Strict, 7);
  std::vector<int> ran;
  for (int i = 0; i < 5; ++i) device.launch(0, work([&ran, i] { ran.push_back(i); }));
  EXPECT_TRUE(ran.empty()) << "issuing must not run the work";
  device.synchronize();
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(StrictDevice, HostDeviceRunsWorkWhenIssued) {
  DeviceContext device;
  int ran = 0;
  device.launch(3, work([&] { ++ran; }));
  EXPECT_EQ(ran, 1);
}

// Two streams' work interleaves differently under different seeds, each stream in its order.
TEST(StrictDevice, OrderAcrossStreamsIsShuffledBySeed) {
  std::set<std::string> orders;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    DeviceContext device(0, DeviceKind::Strict, seed);
    std::string order;
    for (int i = 0; i < 3; ++i) {
      device.launch(0, work([&order, i] { order += char('a' + i); }));
      device.launch(1, work([&order, i] { order += char('A' + i); }));
    }
    device.synchronize();
    std::string lower, upper;
    for (char c : order) (std::islower(c) ? lower : upper) += c;
    EXPECT_EQ(lower, "abc");
    EXPECT_EQ(upper, "ABC");
    orders.insert(order);
  }
  EXPECT_GE(orders.size(), 4u) << "the seeds should give several interleavings";
}

// Stream priorities, as a GPU's scheduler applies them: while a higher-priority stream has ready
// work, no lower-priority stream runs; streams of equal priority are still shuffled by the seed.
TEST(StrictDevice, AReadyHigherPriorityStreamRunsFirst) {
  std::set<std::string> orders;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    DeviceContext device(0, DeviceKind::Strict, seed);
    device.queues()->set_priority(1, 1);
    device.queues()->set_priority(2, 1);
    device.queues()->set_priority(3, -1);
    EXPECT_EQ(device.queues()->priority(0), 0) << "streams start at priority 0";
    const char first[] = {'0', 'A', 'a', 'x'};  // each stream's labels: 012, ABC, abc, xyz
    std::string order;
    for (int i = 0; i < 3; ++i)
      for (int s : {3, 0, 1, 2})  // issued lowest priority first
        device.launch(s, work([&order, c = char(first[s] + i)] { order += c; }));
    device.synchronize();
    const std::string high = order.substr(0, 6);
    EXPECT_EQ(order.substr(6), "012xyz") << "seed " << seed << ": " << order;
    std::string upper, lower;
    for (char c : high) (std::isupper(c) ? upper : lower) += c;
    EXPECT_EQ(upper, "ABC") << "seed " << seed << ": " << order;
    EXPECT_EQ(lower, "abc") << "seed " << seed << ": " << order;
    orders.insert(high);
  }
  EXPECT_GE(orders.size(), 4u) << "equal priorities should still interleave by seed";
}

// A higher-priority stream whose head waits on an event does not hold the device: lower-priority
// work runs until the event completes, and then the higher-priority stream goes first again.
TEST(StrictDevice, ALowerPriorityStreamRunsWhileTheHigherWaits) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    DeviceContext device(0, DeviceKind::Strict, seed);
    device.queues()->set_priority(1, 5);
    std::string order;
    device.launch(0, work([&] { order += "a0 "; }));
    device.launch(0, work([&] { order += "a1 "; }));
    const wt::StreamEvent after_a1 = device.events().record(0);
    for (int i = 2; i < 5; ++i)
      device.launch(0, work([&order, i] { order += "a" + std::to_string(i) + " "; }));
    device.launch(1, DeviceWork{[&] { order += "B0 "; },
                                [&] { return device.events().completed(after_a1); }, false});
    device.launch(1, work([&] { order += "B1 "; }));
    device.synchronize();
    EXPECT_EQ(order, "a0 a1 B0 B1 a2 a3 a4 ") << "seed " << seed;
  }
}

TEST(StrictDevice, EventsCompleteWhenTheirStreamReachesThem) {
  DeviceContext device(0, DeviceKind::Strict, 3);
  bool first = false;
  device.launch(0, work([&] { first = true; }));
  const wt::StreamEvent after_first = device.events().record(0);
  bool second = false;
  device.launch(0, work([&] { second = true; }));
  // Stream 1 waits on the event, as cudaStreamWaitEvent makes it.
  bool saw_first = false;
  device.launch(1, DeviceWork{[&] { saw_first = first; },
                              [&] { return device.events().completed(after_first); }, false});
  EXPECT_FALSE(device.events().completed(after_first));
  device.synchronize();
  EXPECT_TRUE(saw_first);
  EXPECT_TRUE(second);
  EXPECT_TRUE(device.events().completed(after_first));
}

// Communication starts in the order it was issued across all streams (MPI's collective order,
// NCCL's issue order), whatever the shuffle.
TEST(StrictDevice, IssueOrderedWorkStartsInIssueOrder) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    DeviceContext device(0, DeviceKind::Strict, seed);
    std::vector<int> started;
    for (int i = 0; i < 6; ++i)
      device.launch(i % 3, DeviceWork{[&started, i] { started.push_back(i); }, nullptr, true});
    device.synchronize();
    EXPECT_EQ(started, (std::vector<int>{0, 1, 2, 3, 4, 5})) << "seed " << seed;
  }
}

TEST(StrictDevice, WorkThatCanNeverRunIsADeadlock) {
  DeviceContext device(0, DeviceKind::Strict, 1);
  device.launch(0, DeviceWork{[] {}, [] { return false; }, false});
  EXPECT_THROW(device.synchronize(), std::logic_error);
}

TEST(StrictDevice, HostAccessFailsNamingTheTensorAndStagedCopiesWork) {
  DeviceContext device(0, DeviceKind::Strict, 1);
  Tensor t = Tensor::empty({4}, device.allocator());
  t.set_label("layer fc1 weights");
  try {
    (void)t.data();
    FAIL() << "a host read of device memory must throw";
  } catch (const wt::HostAccessError& e) {
    EXPECT_NE(std::string(e.what()).find("'layer fc1 weights' [4]"), std::string::npos) << e.what();
  }
  const float values[4] = {1, 2, 3, 4};
  t.copy_from_host(values);
  EXPECT_EQ(t.to_host(), (std::vector<float>{1, 2, 3, 4}));
  // Device work may touch it; the work runs at the synchronisation, not before.
  device.launch(0, work([&] { t.data()[0] = 10; }));
  EXPECT_EQ(t.to_host()[0], 10.0f) << "a staged copy synchronises first";
  t.fill(5);  // a kernel from host code: blocking
  EXPECT_EQ(t.to_host(), (std::vector<float>(4, 5.0f)));
}

TEST(StrictDevice, FreedBlocksArePoisonedUntilReused) {
  DeviceContext device(0, DeviceKind::Strict, 1);
  { Tensor t = Tensor::zeros({256}, device.allocator()); }
  device.synchronize();  // a free from host code takes effect where its stream has got to
  Tensor reused = Tensor::empty({256}, device.allocator());
  for (float v : reused.to_host()) ASSERT_TRUE(std::isnan(v)) << "freed memory must read as NaN";
  // The host device hands back whatever was there.
  DeviceContext host;
  { Tensor t = Tensor::zeros({256}, host.allocator()); }
  Tensor again = Tensor::empty({256}, host.allocator());
  EXPECT_FALSE(std::isnan(again.data()[0]));
}

// A free from host code is stream ordered, as on a GPU: the stream's later work may have the
// block at once, and the poisoning queued at the free's point runs before that work writes it.
TEST(StrictDevice, HostFreesAreStreamOrdered) {
  DeviceContext device(0, DeviceKind::Strict, 1);
  Tensor freed = Tensor::zeros({64}, device.allocator());
  const float* block = freed.device_ptr();
  freed = Tensor();  // the host drops it: poisoned at this point of stream 0
  Tensor made = Tensor::empty({64}, device.allocator(), 0);
  EXPECT_EQ(made.device_ptr(), block) << "stream 0's own freed block, at once";
  device.ops(0).fill(3.0f, made.device_ptr(), made.numel());
  device.synchronize();
  for (float v : made.to_host()) ASSERT_EQ(v, 3.0f);
}

// A free from host code takes effect at once, its poisoning queued as the stream's next piece of
// work, and the block is reused by the next allocation on the stream.
// Host code that allocates and frees as it goes (the layer profiler: synchronous device work with
// the kernels called directly) so peaks at what the host device peaks at, not at the sum of
// everything it ever allocated (issue 18: LeNet's profile stood as a 358.6 MB peak on strict
// against 38.7 MB of training on the host).
TEST(StrictDevice, HostFreesOnASynchronisedDeviceTakeEffectAtOnce) {
  auto loop = [](DeviceContext& device) {
    const void* first = nullptr;
    for (int i = 0; i < 16; ++i) {
      Tensor t = Tensor::empty({262144}, device.allocator());  // 1 MiB
      if (!first) first = t.device_ptr();
      EXPECT_EQ(t.device_ptr(), first) << "allocation " << i << " must reuse the freed block";
    }
    return device.allocator().stats();
  };
  DeviceContext host;
  DeviceContext strict(0, DeviceKind::Strict, 1);
  const wt::MemoryStats h = loop(host), s = loop(strict);
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.peak_in_use, h.peak_in_use);
  EXPECT_EQ(s.peak_reserved, h.peak_reserved);
  EXPECT_EQ(s.system_allocations, h.system_allocations);
  EXPECT_EQ(s.forced_syncs, 0u);
  strict.synchronize();
  EXPECT_EQ(strict.queues()->executed(), 16u) << "each free's poisoning ran as its stream's work";
  Tensor reused = Tensor::empty({262144}, strict.allocator());
  for (float v : reused.to_host()) ASSERT_TRUE(std::isnan(v)) << "freed memory must read as NaN";
}

// A block freed behind queued work is only its stream's until the stream gets there:
// empty_cache synchronises (as PyTorch's does) so every segment is safe to return, and a peak
// reset after it starts from nothing.
TEST(StrictDevice, EmptyCacheRunsQueuedFrees) {
  DeviceContext device(0, DeviceKind::Strict, 1);
  Tensor a = Tensor::empty({262144}, device.allocator());
  device.launch(0, work([] {}));
  a = Tensor();
  EXPECT_FALSE(device.queues()->idle()) << "the poisoning waits behind the queued work";
  device.allocator().empty_cache();
  device.allocator().reset_peaks();
  const wt::MemoryStats s = device.allocator().stats();
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.reserved, 0u);
  EXPECT_EQ(s.peak_in_use, 0u);
  EXPECT_EQ(s.peak_reserved, 0u);
}

// Under a budget, another stream's allocation that needs a block whose free its stream has not
// reached: the device runs ahead to the free if it can (no synchronisation); if it cannot (the
// stream waits for a transfer only the host's progress completes), a forced synchronisation
// waits for it, and the allocation succeeds. The freeing stream reuses the block at once.
TEST(StrictDevice, MemoryPressureRunsQueuedFrees) {
  DeviceContext device(1 << 20, DeviceKind::Strict, 1);
  auto busy = std::make_shared<bool>(true);
  device.queues()->set_progress([busy] { return std::exchange(*busy, false); });
  for (const bool waits_for_progress : {false, true}) {
    *busy = waits_for_progress;
    Tensor a = Tensor::empty({200000}, device.allocator());              // 800 KB of a 1 MiB budget
    device.launch(0, wt::DeviceWork{[] {}, [busy] { return !*busy; }});  // issued before the free
    a = Tensor();  // freed on stream 0 behind it
    Tensor same = Tensor::empty({200000}, device.allocator(), 0);
    EXPECT_EQ(device.allocator().stats().forced_syncs, 0u);
    same = Tensor();
    Tensor b = Tensor::empty({200000}, device.allocator(), 1);
    EXPECT_TRUE(b.defined());
    EXPECT_EQ(device.allocator().stats().forced_syncs, waits_for_progress ? 1u : 0u);
    device.synchronize();
  }
  device.queues()->set_progress(nullptr);
}

// Negative test: a tensor that stream 1 reads is freed on stream 0 without record_use, so its
// block goes back to stream 0 at once and stream 0's next tensor overwrites it. On the host
// device stream 1's read has already happened and the bug passes unnoticed; on the strict device
// stream 1's queued read runs later, after the overwrite or the poison, for some seed.
// With record_use the block waits for stream 1, and every seed reads the right values.
struct ReuseOutcome {
  bool wrong = false;
};

ReuseOutcome reuse_without_event(DeviceContext& device, bool record_use) {
  std::vector<float> read_by_stream_1(64, -1.0f);
  {
    Tensor x = Tensor::empty({64}, device.allocator(), 0);
    device.launch(0, work([x]() mutable { x.fill(1.0f); }));
    const wt::StreamEvent filled = device.events().record(0);
    device.launch(
        1, DeviceWork{[&read_by_stream_1, p = x.device_ptr()] {
                        std::copy(p, p + 64, read_by_stream_1.begin());
                      },
                      [&device, filled] { return device.events().completed(filled); }, false});
    if (record_use) device.allocator().record_use(x.device_ptr(), 1);
  }  // x freed on stream 0 by the host, stream 1's read still queued
  Tensor y = Tensor::empty({64}, device.allocator(), 0);
  device.launch(0, work([y]() mutable { y.fill(7.0f); }));
  device.synchronize();
  ReuseOutcome outcome;
  for (float v : read_by_stream_1) outcome.wrong = outcome.wrong || v != 1.0f;
  return outcome;
}

TEST(StrictDevice, CatchesABlockReusedBeforeAnotherStreamsReadFinished) {
  DeviceContext host;
  EXPECT_FALSE(reuse_without_event(host, false).wrong) << "the host device hides the bug";
  int caught = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    DeviceContext strict(0, DeviceKind::Strict, seed);
    caught += reuse_without_event(strict, false).wrong;
    DeviceContext fixed(0, DeviceKind::Strict, seed);
    EXPECT_FALSE(reuse_without_event(fixed, true).wrong) << "seed " << seed;
  }
  EXPECT_GT(caught, 0) << "the strict device should expose the missing record_use";
}

}  // namespace

namespace {

// Dropout's generator state read from memory when the kernel runs (a graphed step): the strict
// device accepts pinned memory left alone until then, catches the host rewriting it after the
// issue, and refuses pageable memory, which a GPU kernel cannot read.
wt::ops::DropoutMasks masks_of(const uint64_t* state) {
  wt::ops::DropoutMasks d;
  d.p = 0.5f, d.salt = 3, d.step_key = state, d.rows = 2, d.per_row = 8;
  return d;
}

TEST(StrictDevice, DropoutReadsItsGeneratorStateFromPinnedMemoryAtRunTime) {
  DeviceContext device(0, DeviceKind::Strict, 1);
  auto* state = static_cast<uint64_t*>(device.events().allocate_pinned(sizeof(uint64_t)));
  ASSERT_NE(state, nullptr);
  Tensor mask = Tensor::empty({16}, device.allocator(), 0);
  *state = 42;
  device.ops(0).dropout_masks(masks_of(state), mask.device_ptr());
  device.synchronize();
  wt::ops::DropoutMasks by_value = masks_of(nullptr);
  by_value.key = 42;
  DeviceContext host(0, DeviceKind::Host, 1);
  Tensor host_mask = Tensor::empty({16}, host.allocator(), 0);
  host.ops(0).dropout_masks(by_value, host_mask.device_ptr());
  EXPECT_EQ(mask.to_host(), host_mask.to_host()) << "the state read from pinned memory";

  device.ops(0).dropout_masks(masks_of(state), mask.device_ptr());
  *state = 43;  // the bug: rewritten before the kernel ran
  device.synchronize();
  try {
    device.backend().raise_deferred();  // as the executor does after each instruction
    FAIL() << "a pinned state rewritten before its reader ran went unnoticed";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("rewrote the pinned source of the dropout generator's"),
              std::string::npos)
        << e.what();
  }
  device.events().free_pinned(state);
}

TEST(StrictDevice, DropoutRefusesItsGeneratorStateInPageableMemory) {
  DeviceContext device(0, DeviceKind::Strict, 1);
  Tensor mask = Tensor::empty({16}, device.allocator(), 0);
  const uint64_t pageable = 42;
  try {
    device.ops(0).dropout_masks(masks_of(&pageable), mask.device_ptr());
    FAIL() << "a kernel reading pageable host memory was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("not pinned"), std::string::npos) << e.what();
  }
}

}  // namespace
