#pragma once
// The strict device's model of a whole-step CUDA graph (device.cuda_graphs). A CUDA graph replays
// every kernel with the arguments and addresses it had when it was captured. The strict device
// queues each kernel as a closure whose arguments are captured by value, which is what a graph
// node is: capturing keeps a copy of every closure the step launches (and runs the step as
// usual); in a replayed step the host code issues as usual, but each piece of work it launches is
// replaced by the captured one at the same place, once it is checked to be the same kernel on the
// same stream touching the same memory. A tensor at a new address, or work the capture did not
// have, is refused with a message naming both (a GPU would silently use the captured memory); a
// scalar that changed but was baked into the capture (a learning rate passed by value) runs
// stale, as it would on a GPU, and the graphs-on/off equivalence tests show it.
//
// Which streams a capture holds follows CUDA's rules: the stream the capture began on (0), the
// streams the device forked from it then (by an event: cuda_device.cpp forks every stream it has
// used, and the strict backend the same), and any stream that waits for an event recorded in the
// capture. Work launched on any other stream during a capture is refused: a GPU would run it
// once, at once, outside the graph, and never in a replay.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "device/device_backend.hpp"
#include "device/race_detector.hpp"

namespace wt {

// A step's work that a graph cannot replay as issued (an OrderingError: deferred where it is found
// inside a destructor, exit status 1).
class GraphReplayError : public OrderingError {
 public:
  using OrderingError::OrderingError;
};

class StrictGraph {
 public:
  enum class Mode { Off, Capturing, Replaying };
  explicit StrictGraph(const RaceDetector& races) : races_(races) {}

  Mode mode() const { return mode_; }
  bool active() const { return mode_ != Mode::Off; }
  // Forgets any earlier graph of index `graph` (0 or 1: device_backend.hpp keeps two) and records
  // the work launched until end_capture(), on stream 0, the `forked` streams and the streams that
  // join by waiting (above).
  void begin_capture(const std::vector<int>& forked, int graph = 0);
  // A program event recorded on `stream`, and one that `stream` waits for (ids unique on the
  // device): a wait for an event recorded in the capture brings the waiting stream into it; a
  // stream in the capture waiting for one recorded outside it is refused.
  void note_record(int64_t event, int stream);
  void note_wait(int stream, int64_t event);
  void end_capture();
  // The work launched until end_replay() is checked against graph `graph`'s capture and replaced
  // by it.
  void begin_replay(int graph = 0);
  void end_replay();  // throws GraphReplayError when the step issued less than the capture
  size_t nodes() const { return graphs_[current_].nodes.size(); }
  // The streams in the graph being captured or replayed, and in graph `graph` (stream 0 among
  // them).
  const std::set<int>& captured_streams() const { return graphs_[current_].streams; }
  const std::set<int>& streams_of(int graph) const { return graphs_[graph & 1].streams; }

  // What the next launched work is and touches (StrictOps' kernels, the queues' own writes).
  void note_kernel(const char* name) {
    if (active()) kernel_ = name;
  }
  void note_access(const void* ptr, size_t bytes, bool write) {
    if (active()) accesses_.push_back({ptr, bytes, write});
  }
  // Called for each launch while active: records `work`, or swaps in the captured closure.
  // in_capture_only: refuse it on a stream outside the capture (all but the device's own checks).
  void on_launch(int stream, DeviceWork& work, bool in_capture_only = true);

 private:
  struct Access {
    const void* ptr;
    size_t bytes;
    bool write;
    bool operator==(const Access& o) const {
      return ptr == o.ptr && bytes == o.bytes && write == o.write;
    }
  };
  struct Node {
    int stream;
    std::string kernel;
    std::vector<Access> accesses;
    std::function<void()> run;
  };
  std::string describe(const std::string& kernel, int stream, size_t index) const;
  void check_same(const Node& captured, const std::string& kernel, int stream, size_t index) const;

  struct Captured {
    std::set<int> streams;  // the streams in the capture
    std::vector<Node> nodes;
  };
  const RaceDetector& races_;
  Mode mode_ = Mode::Off;
  Captured graphs_[2];
  int current_ = 0;                    // the graph being captured or replayed
  std::set<int64_t> captured_events_;  // capturing: events recorded in it
  size_t cursor_ = 0;                  // replaying: the next captured node
  const char* kernel_ = nullptr;
  std::vector<Access> accesses_;  // noted for the next launch
};

}  // namespace wt
