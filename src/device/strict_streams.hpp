#pragma once
// The strict device's streams: queues of device work that run lazily, at synchronisation points,
// on the rank's own thread (Kokkos Serial's shared reduction scratch forbids a second thread).
// Between synchronisation points the order across streams is shuffled from a seed, so work that
// is not ordered by stream order, an event or a synchronisation runs in an arbitrary order, as on
// a GPU, and an ordering bug changes results or reads poisoned memory instead of passing by luck.
// Streams have priorities, as CUDA streams do: a ready stream of a higher priority runs before a
// ready stream of a lower one (a GPU's block scheduler prefers the higher-priority stream's
// pending blocks); among streams of equal priority the choice is the seeded shuffle. A priority
// decides only among work that is ready: it never overtakes stream order, an event or issue order.
//
// Work can carry a readiness test (a device-side wait on an event) and can be "issue ordered":
// such work (communication) starts in the order it was issued across all streams, the rule NCCL
// and MPI's collectives impose on one rank's operations (sched/comm_rules.hpp).
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "device/device_backend.hpp"
#include "device/race_detector.hpp"
#include "device/strict_graph.hpp"
#include "mem/device_streams.hpp"

namespace wt {

class StrictStreams final : public DeviceStreams {
 public:
  explicit StrictStreams(uint64_t seed);

  // Queues `work` on `stream`; it runs at a later synchronisation point.
  void launch(int stream, DeviceWork work);
  // The queue sequence the next work launched on `stream` gets (what record() covers after it).
  uint64_t next_sequence(int stream) { return queue(stream).issued + 1; }
  // The running work's stream and sequence (-1 and 0 when none runs).
  int running_stream() const { return running_stream_; }
  uint64_t running_sequence() const {
    return running_stream_ < 0 ? 0 : queues_[size_t(running_stream_)].executed + 1;
  }
  RaceDetector& races() { return races_; }
  // Whole-step graphs (strict_graph.hpp). While one is captured or replayed the host may neither
  // synchronise nor query an event (CUDA refuses both during capture; a replay must not need
  // them either): both throw GraphReplayError.
  StrictGraph& graph() { return graph_; }
  // Called whenever nothing is ready (communication progress); see drain(). Synchronisations
  // use it too, so a blocking kernel can wait for a transfer.
  void set_progress(std::function<bool()> progress) { progress_ = std::move(progress); }
  // Test only: completed() answers true for work that has not run (a broken event query).
  void plant_completed_always(bool on) { completed_always_ = on; }
  // Test only: a bug in the program events' glue (strict_program_events.cpp), the code the CUDA
  // backend ports: a transfer started without waiting for its stream; a Record marked complete
  // when issued; a transfer's completion work run after its event is marked complete.
  // CaptureForksNone: a whole-step graph's capture that forks none of the streams in use from the
  // capturing one (cuda_device.cpp's fork loop left out). CommNotJoined: a transfer in a graphed
  // step whose communication stream does not wait for the issuing stream's event (so it is not in
  // the capture). PolledInGraph: the host polls a graphed step's transfers (an event query).
  // ReplayForksNone: a replayed graph's streams start without waiting for the work before it (a
  // launch that would let a step issued while the last one runs overtake it).
  enum class GlueBug {
    None,
    CommNotGated,
    RecordDoneAtIssue,
    CompletionAfterDone,
    CaptureForksNone,
    CommNotJoined,
    PolledInGraph,
    ReplayForksNone
  };
  void plant_glue_bug(GlueBug bug) { glue_bug_ = bug; }
  GlueBug glue_bug() const { return glue_bug_; }
  // The priority of `stream`'s work from now on; larger is more urgent (RankProgram::priority's
  // sense; cudaStreamCreateWithPriority counts the other way round). Streams start at 0.
  void set_priority(int stream, int priority);
  int priority(int stream) const;
  // Runs one piece of ready work from a stream chosen at random among the ready streams of the
  // highest priority; false when none is ready. communication = false: transfers wait.
  bool run_one(bool communication = true);
  // Runs `kernel` as host code's blocking kernel: after a synchronisation, as device work (inside
  // running device work: at once, it is part of it).
  void blocking(const std::function<void()>& kernel);
  // The same for a staged copy or fill that host code issues: `declare` tells the race detector
  // its host accesses after the synchronisation (not inside device work, which declared its own).
  void host_side(const std::function<void()>& declare, const std::function<void()>& kernel);
  bool run_ahead() override;
  // Runs ready work until every queue is empty; `progress` (may be empty) is called whenever
  // nothing is ready, and must return false when nothing will ever make work ready, which is
  // reported as a deadlock.
  void drain(const std::function<bool()>& progress);
  bool idle() const override;
  bool running() const { return running_stream_ >= 0; }
  uint64_t executed() const { return executed_total_; }
  // The streams work has been launched on, but the communication stream: those a CUDA device
  // forks into a graph's capture when it begins (cuda_device.cpp).
  std::vector<int> streams_in_use() const;

  // DeviceStreams: an event covers the work issued on the stream so far, or, recorded by work
  // that is running on that stream, the work up to and including it.
  StreamEvent record(int stream) override;
  bool completed(const StreamEvent& event) override;
  // Whether the device has run the work `event` covers, without the host learning it (a
  // device-side dependency, unlike completed()).
  bool reached(const StreamEvent& event) const { return executed(event.stream) >= event.sequence; }
  // How much of `stream`'s work has run (its queue sequence).
  uint64_t executed(int stream) const {
    return size_t(stream) < queues_.size() ? queues_[size_t(stream)].executed : 0;
  }
  // Runs every queue dry (outside running work; inside, the caller is device work already and
  // nothing else may run under it).
  void synchronize() override;
  // How many times host code has waited for the device (synchronize() outside device work).
  uint64_t synchronizations() const { return synchronizations_; }
  // Runs `kernel`, which writes [dst, dst + bytes) and nothing else, once `stream`'s work issued
  // so far has run (a copy in from the host, a fill, the poisoning of freed memory).
  void write_on_stream(int stream, void* dst, size_t bytes, const char* what,
                       std::function<void()> kernel);
  void retire(int stream, void* ptr, size_t bytes) override;
  // cudaFree: refused while a step is captured as a graph (CUDA refuses it there), and otherwise a
  // device synchronisation, counted (cudaFree waits for the whole device), which the allocator asks
  // for before it picks the segments to return, so no queued work can touch one after it went
  // back. A pool's teardown returns its segments without it (work still queued then belongs to
  // objects that may be gone).
  void before_segment_release() override;
  void free_segment(void* ptr, size_t bytes) override;
  // Throws GraphReplayError naming `what` when a graph is being captured or replayed.
  void refuse_in_graph(const char* what) const;
  // The memory is host memory the host must not touch: copies and fills are kernels, queued or
  // (the blocking ones) run after a synchronisation.
  bool host_addressable() const override { return false; }
  void copy_to_device_async(int stream, void* dst, const void* src, size_t bytes,
                            const char* what) override;
  // Reads `src` when the copy runs, as a GPU's DMA does, and refuses (an OrderingError, raised at
  // the next instruction boundary) a copy whose source the host changed after issuing it.
  void copy_from_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                              const char* what) override;
  void fill_async(int stream, float* dst, size_t count, float value, const char* what) override;
  // The copy out reads device memory and writes pinned host memory when it runs; the race
  // detector holds both, so a host read of `dst` before the host has seen the copy complete (an
  // event after it, waited for) is an OrderingError naming the copy.
  void copy_to_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                            const char* what) override;
  void host_reads_pinned(const void* ptr, size_t bytes, const char* what) override;
  // Runs the queues until `event`'s stream has run that far (others may run on): counted as a
  // synchronisation, refused in a graph.
  void wait(const StreamEvent& event) override;
  // Pinned buffers are remembered, so a kernel reading host memory (the loss's labels) can tell
  // pinned memory, which the device reads when the work runs, from pageable memory, staged now.
  void* allocate_pinned(size_t bytes) override;
  void free_pinned(void* ptr) override;
  bool pinned(const void* ptr) const;
  // Runs `use` (which reads [src, src + bytes) of pinned memory) when queued work runs; refuses,
  // as copy_from_pinned_async does, a source the host changed after issuing it.
  // `what` names the memory, `reader` the work ("the copy").
  std::function<void()> reading_pinned(const void* src, size_t bytes, const std::string& what,
                                       const std::string& reader, std::function<void()> use);
  void copy_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_to_device(void* dst, const void* src, size_t bytes) override;
  void copy_on_device(void* dst, const void* src, size_t bytes) override;
  void fill(float* dst, size_t count, float value) override;
  void host_write(const void* ptr, size_t bytes, const char* what) override;
  void name_memory(const void* ptr, size_t bytes, const std::string& name) override;

 private:
  struct Queue {
    std::deque<DeviceWork> work;
    std::deque<uint64_t> issue_index;  // per work: its place among issue-ordered work, or ~0
    uint64_t issued = 0, executed = 0;
    int priority = 0;
    bool used = false;  // real work launched on it (not only the poisoning of freed memory)
  };
  Queue& queue(int stream);
  bool ready_at_head(const Queue& q) const;
  void run_head(int stream);  // runs the head of `stream`'s queue, which must be ready
  std::vector<Queue> queues_;
  std::mt19937_64 rng_;
  int running_stream_ = -1;
  uint64_t ordered_issued_ = 0, ordered_started_ = 0, executed_total_ = 0;
  RaceDetector races_;
  StrictGraph graph_{races_};
  std::function<bool()> progress_;
  bool completed_always_ = false;
  bool retiring_ = false;  // retire() launching: a free is no work a CUDA device does on a stream
  GlueBug glue_bug_ = GlueBug::None;
  uint64_t synchronizations_ = 0;
  std::map<const char*, size_t> pinned_;  // pinned buffers: start -> bytes
  // Per pinned source: what it held when each of its queued readers was issued, oldest first.
  std::map<const void*, std::deque<uint64_t>> pinned_issued_;
};

}  // namespace wt
