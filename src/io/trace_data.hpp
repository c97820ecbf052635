#pragma once
// What one rank's profiling trace holds, in the shape trace.h5 stores it (see trace_writer.hpp).
// Plain fixed-size records, so the recorder appends them without allocating strings and the
// gather to rank 0 moves them as raw bytes.
#include <cstdint>
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
};

}  // namespace wt
