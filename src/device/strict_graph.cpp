#include "device/strict_graph.hpp"

#include <sstream>

namespace wt {

void StrictGraph::begin_capture(const std::vector<int>& forked, int graph) {
  current_ = graph & 1;
  Captured& g = graphs_[current_];
  g.streams = std::set<int>(forked.begin(), forked.end());
  g.streams.insert(0);
  captured_events_.clear();
  g.nodes.clear();
  cursor_ = 0;
  kernel_ = nullptr;
  accesses_.clear();
  mode_ = Mode::Capturing;
}

void StrictGraph::end_capture() { mode_ = Mode::Off; }

void StrictGraph::begin_replay(int graph) {
  current_ = graph & 1;
  if (graphs_[current_].nodes.empty())
    throw GraphReplayError("strict device: graph " + std::to_string(current_) +
                           " replayed before its capture");
  cursor_ = 0;
  kernel_ = nullptr;
  accesses_.clear();
  mode_ = Mode::Replaying;
}

void StrictGraph::end_replay() {
  mode_ = Mode::Off;
  const std::vector<Node>& nodes = graphs_[current_].nodes;
  if (cursor_ == nodes.size()) return;
  throw GraphReplayError("strict device: the replayed step issued " + std::to_string(cursor_) +
                         " of the captured step's " + std::to_string(nodes.size()) +
                         " pieces of device work; the first one missing is " +
                         describe(nodes[cursor_].kernel, nodes[cursor_].stream, cursor_) +
                         ": a graph replays the captured work, so every step must issue the same");
}

std::string StrictGraph::describe(const std::string& kernel, int stream, size_t index) const {
  return kernel + " on stream " + std::to_string(stream) + " (piece " + std::to_string(index + 1) +
         " of the step)";
}

void StrictGraph::note_record(int64_t event, int stream) {
  if (mode_ == Mode::Capturing && graphs_[current_].streams.count(stream))
    captured_events_.insert(event);
}

void StrictGraph::note_wait(int stream, int64_t event) {
  if (mode_ != Mode::Capturing) return;
  if (captured_events_.count(event)) {
    graphs_[current_].streams.insert(stream);
  } else if (graphs_[current_].streams.count(stream)) {
    throw GraphReplayError(
        "strict device: " + races_.instruction() + " waits on stream " + std::to_string(stream) +
        " for an event recorded outside the step's capture: a graph holds no edge to work "
        "outside it (CUDA refuses the wait: cudaErrorStreamCaptureIsolation)");
  }
}

void StrictGraph::on_launch(int stream, DeviceWork& work, bool in_capture_only) {
  std::string kernel = kernel_ ? kernel_ : (work.what.empty() ? "device work" : work.what);
  kernel_ = nullptr;
  if (mode_ == Mode::Capturing && in_capture_only && !graphs_[current_].streams.count(stream))
    throw GraphReplayError(
        "strict device: " + kernel + " of " + races_.instruction() +
        " was launched while a step is captured as a graph, but stream " + std::to_string(stream) +
        " is not in the capture: it was not forked from the capturing stream when the capture "
        "began and has not waited for an event recorded in it. A GPU would run this work once, "
        "now, outside the graph, and never in a replay");
  std::vector<Node>& nodes = graphs_[current_].nodes;
  if (mode_ == Mode::Capturing) {
    nodes.push_back(Node{stream, std::move(kernel), std::move(accesses_), work.run});
    accesses_.clear();
    return;
  }
  const size_t index = cursor_++;
  if (index >= nodes.size())
    throw GraphReplayError("strict device: the replayed step issued " +
                           describe(kernel, stream, index) + " beyond the captured step's " +
                           std::to_string(nodes.size()) +
                           " pieces of work: a graph replays only what it captured");
  const Node& captured = nodes[index];
  check_same(captured, kernel, stream, index);
  accesses_.clear();
  // The device runs what it captured, with the arguments it captured; the stream order and the
  // event dependencies stay the newly issued work's, which check_same found to be the same work.
  work.run = captured.run;
}

void StrictGraph::check_same(const Node& captured, const std::string& kernel, int stream,
                             size_t index) const {
  if (captured.stream != stream || captured.kernel != kernel)
    throw GraphReplayError("strict device: the replayed step issued " +
                           describe(kernel, stream, index) + " where the captured step had " +
                           describe(captured.kernel, captured.stream, index) +
                           ": a graph replays the captured work, so every step must issue the "
                           "same work in the same order");
  if (captured.accesses.size() != accesses_.size())
    throw GraphReplayError("strict device: the replayed step's " + describe(kernel, stream, index) +
                           " touches " + std::to_string(accesses_.size()) +
                           " memory ranges where the captured one touched " +
                           std::to_string(captured.accesses.size()) +
                           ": an optional argument that changed between steps, or memory a "
                           "kernel call sets up itself (a workspace it allocates), which exists "
                           "only in the captured step since a replay runs none of the call's "
                           "host code; the caller must set it up before the call, the same in "
                           "every step");
  for (size_t a = 0; a < accesses_.size(); ++a) {
    if (accesses_[a] == captured.accesses[a]) continue;
    std::ostringstream msg;
    msg << "strict device: the replayed step's " << describe(kernel, stream, index)
        << (accesses_[a].write ? " writes " : " reads ") << races_.memory_at(accesses_[a].ptr)
        << " at " << accesses_[a].ptr << " (" << accesses_[a].bytes
        << " bytes) where the captured step's touched " << captured.accesses[a].ptr << " ("
        << captured.accesses[a].bytes
        << " bytes): the tensor moved between steps, and the graph would use the captured "
           "address; memory a graph touches must stay where it was captured";
    throw GraphReplayError(msg.str());
  }
}

}  // namespace wt
