#pragma once
// The strict device's ordering check: a happens-before race detector over device memory, run when
// work is *issued*, so an ordering bug is found every time, whatever order the shuffled queues
// later run the work in, and the message names both pieces of work instead of a NaN appearing
// steps later.
//
// Agents are the device's streams and, one per event id, the asynchronous communication that
// completes that event (an MPI or NCCL transfer runs beside the streams). Each agent has a vector
// clock. Stream order orders one stream's work; a device Wait on an event joins the event's
// clock into the waiting stream's; a communication starts with its issuing stream's clock; the
// host joins what it has seen finish (a synchronisation, an event it found complete, MPI
// completion) and every later issue inherits that. Every access to device memory is recorded
// per byte range; a write that is not ordered after every earlier access of the range by
// another agent, or a read not ordered after the last write, throws OrderingError naming the
// memory, both accesses, their instructions and agents. Memory keeps its history across a free,
// so a reuse before the last user finished is caught the same way.
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wt {

// A program error found by the strict device: two accesses to device memory that nothing
// orders (exit status 1, like every internal error).
class OrderingError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class RaceDetector {
 public:
  static constexpr int kHost = -1;
  using Clock = std::vector<uint64_t>;

  // What the host knows has finished, now: work issued now is ordered after it.
  const Clock& host_knowledge() const { return host_; }
  // Work issued earlier with `issued_knowing` (its host_knowledge() then) starts running on this
  // thread: its accesses are ordered after that, and after what is observed while it runs, not
  // after what the host learnt between its issue and its run.
  void begin_work(const Clock& issued_knowing);
  void end_work();

  // What is being issued now, for messages: e.g. "Forward(stage 1, slot 0)".
  void set_instruction(const std::string& what);
  // Names the memory [ptr, ptr + bytes) in messages (a tensor's label, or what allocated it).
  void name_memory(const void* ptr, size_t bytes, const std::string& name);
  void forget_memory(const void* ptr);
  // Bytes from `ptr` to the end of the named memory holding it (0 if none).
  size_t bytes_to_end(const void* ptr) const;
  // For messages: what is being issued now; the memory holding `ptr`; the last write by
  // `stream`'s work at queue sequences (after, upto], "" if none ("tensor 'x' by relu_forward").
  std::string instruction() const;
  std::string memory_at(const void* ptr) const { return memory_name(uintptr_t(ptr)); }
  std::string write_between(int stream, uint64_t after, uint64_t upto) const;

  // Work issued on `stream` with queue sequence `sequence` (its position in the stream) is about
  // to access [ptr, ptr + bytes). kernel: the op's name. freeing: the access is the poisoning of
  // memory that running work frees now.
  void access(int stream, uint64_t sequence, const void* ptr, size_t bytes, bool write,
              const char* kernel, bool freeing = false);
  // Communication: the transfer completing `event` begins, ordered after `stream`'s work so far;
  // its accesses follow with comm_access. Each start is a new epoch of the event's agent.
  void comm_begin(int event, int stream);
  void comm_access(int event, const void* ptr, size_t bytes, bool write, const char* what);
  // Record(event) on `stream` at `sequence`: the event covers the stream's work so far.
  void record_event(int event, int stream, uint64_t sequence);
  // A device Wait on `event` by `stream` at `sequence`: later work on the stream is ordered
  // after the event.
  void wait_event(int stream, int event, uint64_t sequence);
  // The host found `event` complete (and issues later work knowing it).
  void host_saw_event(int event);
  // The host found `stream`'s work up to `sequence` complete.
  void host_saw_stream(int stream, uint64_t sequence);
  // A host write to device memory after what it has seen finish (the allocator poisoning a block
  // it hands back, a staged copy in): it must be ordered after every access of the range.
  void host_write(const void* ptr, size_t bytes, const char* what);
  // A host read of device memory (a staged copy out): ordered after the range's last write. A
  // transfer counts as finished for the host only once it has seen it complete (an event query,
  // MPI's test), not because a synchronisation drained the device: the host device's MPI would
  // still be writing.
  void host_read(const void* ptr, size_t bytes, const char* what);
  // A device synchronisation: everything issued so far has finished.
  void synchronized();
  // An error found where nothing may throw (a free, in a destructor): kept, the first one, and
  // thrown by the next raise_deferred() (the executor calls it after each instruction it issues).
  void defer(const OrderingError& error) {
    if (deferred_.empty()) deferred_ = error.what();
  }
  void raise_deferred() {
    if (!deferred_.empty()) throw OrderingError(std::exchange(deferred_, std::string()));
  }

 private:
  struct Access {
    int agent = 0;
    uint64_t epoch = 0;
    int what = -1;  // interned description of the access
  };
  struct Range {
    uintptr_t end = 0;
    Access last_write;
    bool written = false;
    std::vector<Access> reads;  // since the last write, at most one per agent
  };
  int agent_of_stream(int stream);
  int agent_of_event(int event);
  Clock& clock(int agent);
  uint64_t& at(Clock& c, int agent);
  static void join(Clock& into, const Clock& from);
  void inherit_host(int agent);
  // knowing: the accessor's knowledge when it is not its clock (a free by running work).
  void check_and_record(int agent, const Access& mine, uintptr_t begin, uintptr_t end, bool write,
                        const Clock* knowing = nullptr);
  void split_at(uintptr_t address);
  [[noreturn]] void report(const Access& mine, const Access& theirs, bool mine_writes,
                           bool theirs_writes, uintptr_t address) const;
  int intern(const std::string& text);
  std::string agent_name(int agent) const;
  std::string memory_name(uintptr_t address) const;

  std::vector<int> stream_agent_, event_agent_;  // agent ids, -1 until first seen
  std::vector<int> agent_stream_, agent_event_;  // the reverse, -1 where not one
  std::vector<Clock> clocks_;                    // per agent
  // Per agent: (sequence, clock) after each of its device Waits, so that a host that saw the
  // stream reach a point also knows what the stream had waited for by then.
  std::vector<std::vector<std::pair<uint64_t, Clock>>> waits_;
  Clock host_;                         // what the host has seen finish
  std::vector<Clock> suspended_host_;  // host_ outside the running work (begin_work)
  std::vector<Clock> event_clock_;     // per event: what waiting on it orders after
  std::map<uintptr_t, Range> ranges_;  // by begin address, disjoint
  std::map<uintptr_t, std::pair<uintptr_t, int>> names_;  // begin -> (end, interned name)
  std::vector<std::string> texts_;
  std::unordered_map<std::string, int> text_ids_;
  int instruction_ = -1;  // interned
  std::string deferred_;  // defer()'s error, until raised
};

}  // namespace wt
