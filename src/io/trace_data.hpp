#pragma once
// What one rank's profiling trace holds, in the shape trace.h5 stores it (see trace_writer.hpp).
// Plain fixed-size records, so the recorder appends them without allocating strings and the
// gather to rank 0 moves them as raw bytes.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace wt {

constexpr int kTraceNameBytes = 16;  // fixed-length, NUL-padded opcode name in the file

// One executed instruction. Times are seconds on the run's shared clock (see TraceRecorder).
struct TraceEvent {
  char name[kTraceNameBytes];  // opcode_enum_name(), NUL-padded
  int32_t stage;
  int32_t batch;
  int32_t wave;
  int32_t stream;
  int64_t step;
  double begin;   // issue time for asynchronous communication
  double end;     // when the executor saw it complete
  int64_t bytes;  // LoadBatch: input bytes; communication: payload bytes; else 0
  // When the device ran the instruction's work, on the same clock (TraceRecorder): from the
  // point its stream reached the instruction to the point it passed it. NaN on a device whose
  // work runs when issued (the host), where begin and end say it.
  double device_begin = std::numeric_limits<double>::quiet_NaN();
  double device_end = std::numeric_limits<double>::quiet_NaN();
};

// One whole run_step call.
struct TraceStep {
  int64_t step;
  double begin;
  double end;
};

// The caching allocator after one allocate or release.
struct TraceMemorySample {
  double time;
  int64_t in_use;
  int64_t reserved;
  int64_t forced_syncs = 0;  // so far: device synchronisations forced by memory pressure
  int64_t largest_free = 0;  // the largest cached block (fragmentation = 1 - it / cached)
  int64_t job_in_use = 0;    // the traced job's own bytes in use (the device is shared by jobs)
};

struct RankTrace {
  int rank = 0;
  int64_t clock_origin_ns = 0;  // this rank's steady_clock (CLOCK_MONOTONIC) at time zero
  std::vector<TraceEvent> events;
  std::vector<TraceStep> steps;
  std::vector<TraceMemorySample> memory;
};

// The root attributes of trace.h5.
struct TraceInfo {
  int world_size = 1;
  std::string schedule;
  std::string model;
  int64_t start_step = 0;
  int64_t end_step = 0;
  // Whose clock device_begin/device_end read: "cuda" (CUDA events), "strict" (when the strict
  // device's queues ran the work) or "none" (NaN: the host device, a simulation).
  std::string device_clock = "none";
};

}  // namespace wt
