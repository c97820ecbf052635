#pragma once
// Records this rank's profiling trace inside the deck's step window [start_step, end_step):
// every executed instruction, every run_step, and the caching allocator's bytes in use/reserved
// after each allocate and release. The executor's and the allocator's observers are attached
// only while inside the window, so steps outside it run exactly as untraced ones. Records go into
// vectors reserved up front: the hot path reads the clock and appends a fixed-size record, with
// no strings, no locks of its own and (normally) no allocation.
//
// trace.h5 is written when the window closes, not at the end of the run, so a later crash still
// leaves the trace; finish() writes it if the run ends inside the window. Writing is collective:
// every rank's records are gathered on rank 0, which writes the file.
//
// Time zero is a barrier taken in the constructor (collective): each rank subtracts its own
// steady_clock reading taken right after it, so times from different ranks share one clock.
// The file keeps each rank's reading (/rank_<r> attribute clock_origin_ns), to line the trace up
// with other records of the rank (a background job's tasklets). An observer the executor had before
// the window opens is told of every instruction too.
//
// On a device whose work runs after it is issued (a GPU, the strict device), host times say when
// an instruction was issued, not when it ran: each instruction also gets device times, from a
// time marker its stream passes before its work and one after (CUDA timing events; the strict
// device's queued clock readings), read once the step's synchronisation has passed them. They sit
// on the run's clock by placing the step's earliest marker at the step's begin (on a GPU the one
// recorded on stream 0 as the step begins, the device idle after the last step's
// synchronisation).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "exec/executor.hpp"
#include "io/trace_data.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {

class TraceRecorder : public InstructionObserver {
 public:
  // info: root attributes (world size, schedule, model, the window). `job`: the traced job's
  // account in `allocator` (the rank's device, which its jobs share). Collective (barrier).
  TraceRecorder(Communicator& comm, Executor& executor, CachingAllocator& allocator, int job,
                TraceInfo info, std::string path);
  ~TraceRecorder() override;
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  // Around every executor.run_step(step), on every rank. end_step of the window's last step
  // writes the file (collective).
  void begin_step(int64_t step);
  void end_step(int64_t step);
  // At the end of the run: writes the trace if the run stopped inside the window (collective).
  void finish();

  bool recording() const { return recording_; }
  // Whether end_step(step) writes the file.
  bool writes_after(int64_t step) const { return recording_ && step + 1 >= info_.end_step; }
  // Whether begin_step(step) starts recording (the executor then runs the step eagerly).
  bool starts_at(int64_t step) const {
    return !recording_ && !written_ && step >= info_.start_step && step < info_.end_step;
  }
  bool written() const { return written_; }
  const std::string& path() const { return path_; }

  // InstructionObserver
  void issuing(int stream, const Instruction& ins) override;
  void executed(int stream, const Instruction& ins, double t_begin, double t_end,
                int64_t bytes) override;
  void completed(int event, double t) override;

 private:
  void attach();
  void detach();
  void write();
  double since_origin(double steady_seconds) const { return steady_seconds - origin_; }
  TraceMemorySample memory_sample(const MemoryStats& stats, size_t job_in_use) const;
  const char* name_of(OpCode op);
  // The step's device times into its rows (after the step's synchronisation); frees the markers.
  void resolve_device_times();

  Communicator& comm_;
  Executor& executor_;
  CachingAllocator& allocator_;
  int job_;
  int observer_ = -1;                        // the allocator observer's handle while recording
  InstructionObserver* previous_ = nullptr;  // the executor's observer before ours, told too
  TraceInfo info_;
  std::string path_;
  double origin_ = 0;  // steady_clock seconds right after the start barrier
  bool recording_ = false;
  bool written_ = false;
  int64_t step_ = -1;  // the step being run while recording
  double step_begin_ = 0;
  RankTrace trace_;
  std::vector<int64_t> event_row_;   // per event id: the row of the instruction it completes
  std::vector<int32_t> slot_batch_;  // per batch slot: the global batch last loaded into it
  std::vector<std::array<char, kTraceNameBytes>> names_;  // per opcode, filled on first use
  DeviceBackend& device_;                                 // the executor's: its time markers
  int64_t step_marker_ = -1;     // the step's first marker, -1: the device has no clock of its own
  std::vector<int64_t> before_;  // per stream: the marker before the instruction being issued
  struct DeviceSpan {
    size_t row;  // in trace_.events
    int64_t before, after;
  };
  std::vector<DeviceSpan> spans_;  // this step's
};

}  // namespace wt
