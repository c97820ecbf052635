#include "exec/planted_bug.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "util/device_library_error.hpp"

namespace wt {

namespace {

const std::pair<const char*, PlantedBug> kNames[] = {
    {"wait_after_read", PlantedBug::WaitAfterRead},
    {"free_sent_gradient", PlantedBug::FreeSentGradient},
    {"stale_graph", PlantedBug::StaleGraph},
    {"graph_inputs_moved", PlantedBug::GraphInputsMoved},
    {"graph_labels_moved", PlantedBug::GraphLabelsMoved},
    {"graph_sync_in_step", PlantedBug::GraphSyncInStep},
    {"graph_dropout_by_value", PlantedBug::GraphDropoutByValue},
    {"graph_reuse_unordered", PlantedBug::GraphReuseUnordered},
    {"op_scratch_at_issue", PlantedBug::OpScratchAtIssue},
    {"read_totals_unsynced", PlantedBug::ReadTotalsUnsynced},
    {"overlap_one_input_set", PlantedBug::OverlapOneInputSet},
    {"overlap_read_unwaited", PlantedBug::OverlapReadUnwaited},
    {"step_before_wait", PlantedBug::StepBeforeWait},
    {"keep_on_other_stream", PlantedBug::KeepOnOtherStream},
    {"completed_always", PlantedBug::CompletedAlways},
    {"comm_not_gated", PlantedBug::CommNotGated},
    {"record_done_at_issue", PlantedBug::RecordDoneAtIssue},
    {"completion_after_done", PlantedBug::CompletionAfterDone},
    {"capture_forks_none", PlantedBug::CaptureForksNone},
    {"comm_not_joined", PlantedBug::CommNotJoined},
    {"polled_in_graph", PlantedBug::PolledInGraph},
    {"host_copy_in_allreduce", PlantedBug::HostCopyInAllreduce},
    {"record_before_work", PlantedBug::RecordBeforeWork},
    {"write_during_transfer", PlantedBug::WriteDuringTransfer},
    {"wait_on_wrong_event", PlantedBug::WaitOnWrongEvent},
    {"library_failure", PlantedBug::LibraryFailure},
    {"halves_free_early", PlantedBug::HalvesFreeEarly},
};

using Stream = std::vector<Instruction>;

// Moves the first Wait on a RecvActivation's event to just after the Forward that follows it.
bool move_wait_after_read(Stream& stream) {
  for (size_t r = 0; r < stream.size(); ++r) {
    if (stream[r].op != OpCode::RecvActivation) continue;
    const int event = stream[r].event;
    auto wait = std::find_if(stream.begin() + long(r), stream.end(), [&](const Instruction& i) {
      return i.op == OpCode::Wait && i.event == event;
    });
    auto forward = std::find_if(wait, stream.end(),
                                [](const Instruction& i) { return i.op == OpCode::Forward; });
    if (wait == stream.end() || forward == stream.end()) continue;
    std::rotate(wait, wait + 1, forward + 1);  // the Wait now follows the Forward
    return true;
  }
  return false;
}

// Moves the first Step before the Waits that precede it.
bool move_step_before_wait(Stream& stream) {
  for (size_t k = 1; k < stream.size(); ++k) {
    if (stream[k].op != OpCode::Step || stream[k - 1].op != OpCode::Wait) continue;
    size_t first_wait = k - 1;
    while (first_wait > 0 && stream[first_wait - 1].op == OpCode::Wait) --first_wait;
    std::rotate(stream.begin() + long(first_wait), stream.begin() + long(k),
                stream.begin() + long(k) + 1);
    return true;
  }
  return false;
}

// Moves the first KeepGradient to the same position of the rank's other stream.
bool move_keep_to_other_stream(RankProgram& rank) {
  if (rank.streams.size() < 2) return false;
  for (size_t s = 0; s < rank.streams.size(); ++s) {
    Stream& from = rank.streams[s];
    auto keep = std::find_if(from.begin(), from.end(),
                             [](const Instruction& i) { return i.op == OpCode::KeepGradient; });
    if (keep == from.end()) continue;
    Stream& to = rank.streams[(s + 1) % rank.streams.size()];
    const long at = std::min(long(keep - from.begin()), long(to.size()));
    to.insert(to.begin() + at, *keep);
    from.erase(keep);
    return true;
  }
  return false;
}

// Moves the last Record of a stream (in ticktock the one after the wave's kept gradient, which the
// other wave reads) to the front of its stream, before the work it stands for.
bool move_record_first(Stream& stream) {
  for (size_t k = stream.size(); k-- > 1;) {
    if (stream[k].op != OpCode::Record) continue;
    std::rotate(stream.begin(), stream.begin() + long(k), stream.begin() + long(k) + 1);
    return true;
  }
  return false;
}

// Points the last stream's last Wait on another stream's Record (in ticktock the tock's, before it
// adds the tick's kept gradient) at an event its own stream recorded earlier, complete by then:
// the cross-stream wait is gone.
bool wait_on_own_event(RankProgram& rank) {
  for (size_t s = rank.streams.size(); s-- > 0;) {
    Stream& stream = rank.streams[s];
    for (size_t k = stream.size(); k-- > 0;) {
      if (stream[k].op != OpCode::Wait) continue;
      int own_event = -1;
      for (size_t j = 0; j < k; ++j)
        if (stream[j].op == OpCode::Record) own_event = stream[j].event;
      bool cross = false;
      for (size_t other = 0; other < rank.streams.size(); ++other)
        for (const Instruction& rec : rank.streams[other])
          cross = cross || (other != s && rec.op == OpCode::Record && rec.event == stream[k].event);
      if (!cross || own_event < 0) continue;
      stream[k].event = own_event;
      return true;
    }
  }
  return false;
}

}  // namespace

PlantedBug parse_planted_bug(const std::string& name) {
  if (name.empty()) return PlantedBug::None;
  std::string known;
  for (const auto& [text, bug] : kNames) {
    if (name == text) return bug;
    known += std::string(known.empty() ? "" : ", ") + text;
  }
  throw std::invalid_argument("WAVETRAIN_TEST_PLANT_BUG: unknown bug '" + name + "' (" + known +
                              ")");
}

void plant_in_program(PlantedBug bug, Program& program) {
  if (bug != PlantedBug::WaitAfterRead && bug != PlantedBug::StepBeforeWait &&
      bug != PlantedBug::KeepOnOtherStream && bug != PlantedBug::RecordBeforeWork &&
      bug != PlantedBug::WaitOnWrongEvent)
    return;
  bool planted = false;
  for (RankProgram& rank : program.ranks) {
    if (bug == PlantedBug::KeepOnOtherStream) {
      planted = move_keep_to_other_stream(rank) || planted;
      continue;
    }
    if (bug == PlantedBug::WaitOnWrongEvent) {
      planted = wait_on_own_event(rank) || planted;
      continue;
    }
    if (bug == PlantedBug::RecordBeforeWork) {
      for (Stream& stream : rank.streams)
        if (move_record_first(stream)) {
          planted = true;
          break;
        }
      continue;
    }
    for (Stream& stream : rank.streams) {
      const bool here = bug == PlantedBug::WaitAfterRead ? move_wait_after_read(stream)
                                                         : move_step_before_wait(stream);
      planted = planted || here;
      if (here) break;
    }
  }
  if (!planted)
    throw std::logic_error("WAVETRAIN_TEST_PLANT_BUG: schedule '" + program.schedule +
                           "' has no place for this bug");
}

void throw_planted_library_failure(const std::string& layer_type) {
  const char* where = " failed at (planted by WAVETRAIN_TEST_PLANT_BUG=library_failure): ";
  if (layer_type == "conv2d")
    throw DeviceLibraryError(std::string("cudnnConvolutionForward(...)") + where +
                             "CUDNN_STATUS_EXECUTION_FAILED");
  if (layer_type == "linear")
    throw DeviceLibraryError(std::string("cublasSgemm(...)") + where +
                             "the function failed to launch on the GPU (cuBLAS status 13)");
}

}  // namespace wt
