#include "exec/trace_recorder.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "comm/mpi_communicator.hpp"
#include "io/trace_gather.hpp"
#include "io/trace_writer.hpp"
#include "sched/opcode_traits.hpp"
#include "util/steady_seconds.hpp"

namespace wt {

namespace {

// Reservations cover the whole window up to this many records; a wider window grows the vectors.
constexpr int64_t kMaxReservedRecords = int64_t(1) << 18;
constexpr int64_t kReservedMemorySamplesPerStep = 256;

}  // namespace

TraceRecorder::TraceRecorder(Communicator& comm, Executor& executor, CachingAllocator& allocator,
                             int job, TraceInfo info, std::string path)
    : comm_(comm),
      executor_(executor),
      allocator_(allocator),
      job_(job),
      info_(std::move(info)),
      path_(std::move(path)),
      device_(executor.device().backend()) {
  if (info_.end_step <= info_.start_step)
    throw std::logic_error("trace window is empty: end_step <= start_step");
  trace_.rank = comm_.rank();
  const DeviceKind kind = executor_.device().kind();
  info_.device_clock = kind == DeviceKind::Cuda     ? "cuda"
                       : kind == DeviceKind::Strict ? "strict"
                                                    : "none";
  event_row_.assign(std::max(executor_.program().events, 0), -1);
  slot_batch_.assign(std::max(executor_.program().slots, 0), -1);
  comm_.barrier();
  origin_ = steady_seconds();
  trace_.clock_origin_ns = static_cast<int64_t>(origin_ * 1e9);
}

TraceRecorder::~TraceRecorder() {
  if (recording_) detach();
}

void TraceRecorder::begin_step(int64_t step) {
  // A run resumed inside the window starts recording at its first step.
  if (starts_at(step)) attach();
  if (!recording_) return;
  step_ = step;
  step_begin_ = since_origin(steady_seconds());
  step_marker_ = device_.time_marker(0);
  spans_.clear();
  before_.assign(executor_.rank_program().streams.size(), -1);
}

void TraceRecorder::end_step(int64_t step) {
  if (!recording_) return;
  resolve_device_times();
  trace_.steps.push_back({step, step_begin_, since_origin(steady_seconds())});
  if (step + 1 >= info_.end_step) write();
}

void TraceRecorder::finish() {
  if (recording_) write();
}

void TraceRecorder::attach() {
  recording_ = true;
  int64_t per_step = 0;
  for (const auto& stream : executor_.program().ranks[comm_.rank()].streams)
    per_step += static_cast<int64_t>(stream.size());
  const int64_t steps = std::min(info_.end_step - info_.start_step, kMaxReservedRecords);
  trace_.events.reserve(std::min(per_step * steps, kMaxReservedRecords));
  trace_.steps.reserve(steps);
  trace_.memory.reserve(std::min(kReservedMemorySamplesPerStep * steps, kMaxReservedRecords));
  std::fill(event_row_.begin(), event_row_.end(), -1);
  const MemoryStats now = allocator_.stats();
  trace_.memory.push_back(memory_sample(now, allocator_.job_stats(job_).in_use));
  // The allocator calls this under its own lock, so samples from the preload thread and the
  // main thread never race on the vector.
  observer_ =
      allocator_.add_observer([this](const MemoryStats& s, const std::map<int, JobMemory>& jobs) {
        auto it = jobs.find(job_);
        trace_.memory.push_back(memory_sample(s, it == jobs.end() ? 0 : it->second.in_use));
      });
  previous_ = executor_.observer();  // kept informed (the foreground's slowdown feedback)
  executor_.set_observer(this);
}

TraceMemorySample TraceRecorder::memory_sample(const MemoryStats& s, size_t job_in_use) const {
  return {since_origin(steady_seconds()), int64_t(s.in_use),       int64_t(s.reserved),
          int64_t(s.forced_syncs),        int64_t(s.largest_free), int64_t(job_in_use)};
}

void TraceRecorder::detach() {
  if (executor_.observer() == this) executor_.set_observer(previous_);
  previous_ = nullptr;
  if (observer_ >= 0) allocator_.remove_observer(observer_);  // no sample in flight after it
  observer_ = -1;
  recording_ = false;
}

void TraceRecorder::write() {
  detach();
  written_ = true;
  std::vector<RankTrace> all;
  if (auto* mpi = dynamic_cast<MpiCommunicator*>(&comm_.underlying()))
    all = gather_rank_traces(trace_, mpi->world(), 0);
  else if (comm_.size() == 1)
    all.push_back(trace_);
  else
    throw std::logic_error("traces on several ranks need the MPI communicator");
  if (comm_.rank() == 0) write_trace_file(path_, info_, all);
  trace_ = RankTrace{comm_.rank(), trace_.clock_origin_ns, {}, {}, {}};  // release the records
}

const char* TraceRecorder::name_of(OpCode op) {
  const size_t i = static_cast<size_t>(op);
  if (i >= names_.size()) names_.resize(i + 1, std::array<char, kTraceNameBytes>{});
  if (names_[i][0] == 0) {  // longer names are cut at 16 bytes (the file's fixed width)
    const char* name = opcode_enum_name(op);
    std::memcpy(names_[i].data(), name, strnlen(name, kTraceNameBytes));
  }
  return names_[i].data();
}

void TraceRecorder::executed(int stream, const Instruction& ins, double t_begin, double t_end,
                             int64_t bytes) {
  if (previous_) previous_->executed(stream, ins, t_begin, t_end, bytes);
  TraceEvent e;
  std::memcpy(e.name, name_of(ins.op), kTraceNameBytes);
  e.stage = ins.stage;
  // Forward and Backward name a slot; the batch is the one last loaded into it.
  if (ins.op == OpCode::LoadBatch && ins.slot >= 0 && size_t(ins.slot) < slot_batch_.size())
    slot_batch_[ins.slot] = ins.batch;
  e.batch = ins.batch >= 0 || ins.slot < 0 || size_t(ins.slot) >= slot_batch_.size()
                ? ins.batch
                : slot_batch_[ins.slot];
  e.wave = ins.wave;
  e.stream = stream;
  e.step = step_;
  e.begin = since_origin(t_begin);
  e.end = since_origin(t_end);
  e.bytes = bytes;
  if (size_t(stream) < before_.size() && before_[size_t(stream)] >= 0) {
    spans_.push_back({trace_.events.size(), before_[size_t(stream)], device_.time_marker(stream)});
    before_[size_t(stream)] = -1;
  }
  // Communication that completes an event ends when the executor sees it complete.
  if (opcode_traits(ins.op).completes_event && ins.event >= 0 &&
      size_t(ins.event) < event_row_.size())
    event_row_[ins.event] = static_cast<int64_t>(trace_.events.size());
  trace_.events.push_back(e);
}

void TraceRecorder::issuing(int stream, const Instruction& ins) {
  if (previous_) previous_->issuing(stream, ins);
  if (step_marker_ >= 0 && size_t(stream) < before_.size())
    before_[size_t(stream)] = device_.time_marker(stream);
}

void TraceRecorder::resolve_device_times() {
  if (step_marker_ < 0) return;
  // The step's earliest marker sits at the step's begin: on a GPU that is the step marker (the
  // device idle when it is recorded); the strict device may run another stream's work first.
  double earliest = 0;
  for (const DeviceSpan& span : spans_) {
    TraceEvent& e = trace_.events[span.row];
    e.device_begin = device_.seconds_between(step_marker_, span.before);
    e.device_end = device_.seconds_between(step_marker_, span.after);
    earliest = std::min(earliest, e.device_begin);
    device_.release_time_marker(span.before);
    device_.release_time_marker(span.after);
  }
  for (const DeviceSpan& span : spans_) {
    trace_.events[span.row].device_begin += step_begin_ - earliest;
    trace_.events[span.row].device_end += step_begin_ - earliest;
  }
  spans_.clear();
  device_.release_time_marker(step_marker_);
  step_marker_ = -1;
}

void TraceRecorder::completed(int event, double t) {
  if (previous_) previous_->completed(event, t);
  if (event < 0 || size_t(event) >= event_row_.size() || event_row_[event] < 0) return;
  trace_.events[event_row_[event]].end = since_origin(t);
  event_row_[event] = -1;
}

}  // namespace wt
