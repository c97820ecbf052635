// The strict device's program events. Every ordering edge the race detector is told about is
// also checked against what the queues really did when the edge is used, so a change to this
// glue (the code the CUDA backend ports) that breaks ordering is a race with a message, not wrong
// numbers:
//   - a transfer is declared (comm_begin) as ordered after its issuing stream's work so far; its
//     start is queued on the communication stream, held until that stream has run that far, and
//     checks when it runs that it has;
//   - a Record is declared to cover its stream's work so far; the queued work that marks it
//     complete runs at that point of the stream, and a Wait that passes on it checks that the
//     stream really ran that far;
//   - a transfer's completion work (a decode, a zeroing) is declared with the transfer's own
//     accesses and runs on the communication stream after the transfer and before the event is
//     marked complete; a Wait that passes on the event checks that it ran.
// The communication stream is one queue: a rank's transfers complete in the order they were
// issued, as NCCL's do on its stream (the programs are validated under NCCL's rules).
// In a whole-step graph (device.cuda_graphs) a transfer is captured like a kernel, as NCCL's are
// on a GPU: the communication stream joins the capture by waiting for an event recorded on the
// issuing stream (a transfer issued without joining it is refused, as CUDA would run it once,
// outside the graph), the start is checked at each replay to move the same memory, and the host
// neither polls nor queries a graphed transfer: it sees it complete at the step's
// synchronisation (CUDA refuses an event query during a capture, and a replay's events are the
// graph's, not the host's).
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "device/program_events.hpp"
#include "device/strict_streams.hpp"

namespace wt {

namespace {

class StrictProgramEvents final : public ProgramEvents {
 public:
  StrictProgramEvents(StrictStreams& queues, const OpsBackend& kernels, int count, int first_id)
      : q_(queues), kernels_(kernels), first_id_(first_id), events_(size_t(count)) {}

  void reset() override {
    // The step ended with the device drained: every transfer has run (a send nothing waited for
    // is seen complete now).
    for (size_t e = 0; e < events_.size(); ++e)
      if (in_flight(int(e)) && !completed(int(e)))
        throw std::logic_error("strict device: a new step while the transfer completing event " +
                               std::to_string(e) + " is still in flight");
    for (Event& e : events_) e = Event{};
  }

  void record(int event, int stream) override {
    Event& e = events_[size_t(event)];
    e.stream = stream;
    e.sequence = q_.next_sequence(stream);
    e.recorded = true;
    e.issued_by = q_.races().instruction();
    q_.races().record_event(id(event), stream, e.sequence);
    q_.graph().note_record(id(event), stream);
    if (q_.glue_bug() == StrictStreams::GlueBug::RecordDoneAtIssue) e.done = true;  // the bug
    q_.launch(stream, DeviceWork{[&e] { e.done = true; }, nullptr, false});
  }

  void wait(int stream, int event) override {
    q_.races().wait_event(stream, id(event), q_.next_sequence(stream));
    q_.graph().note_wait(stream, id(event));  // a wait for a captured event joins the capture
    Event& e = events_[size_t(event)];
    q_.launch(stream, DeviceWork{[this, event, stream, waiter = q_.races().instruction()] {
                                   check_passed(event, stream, waiter);
                                 },
                                 [&e] { return e.done; }, false,
                                 q_.races().instruction() + ", waiting for event " +
                                     std::to_string(event) + " of " + e.issued_by});
  }

  bool waitable(int event) override { return events_[size_t(event)].recorded; }

  void complete(int event) override {
    Event& e = events_[size_t(event)];
    e.recorded = e.done = e.finished = true;
  }

  void transfer(Transfer t) override {
    Event& e = events_[size_t(t.event)];
    q_.races().comm_begin(id(t.event), t.stream);
    for (const TransferAccess& a : t.accesses)
      q_.races().comm_access(id(t.event), a.ptr, a.bytes, a.write, a.what);
    e.recorded = e.transfer = true;
    e.stream = t.stream;
    e.issued_by = q_.races().instruction();
    e.memory = t.accesses.empty() ? "no device memory" : q_.races().memory_at(t.accesses[0].ptr);
    e.hold = std::move(t.hold);
    if (q_.graph().active()) join_capture(e, t);
    const StreamEvent after = q_.record(t.stream);
    const int event = t.event;
    std::function<bool()> gate = [this, after] { return q_.reached(after); };
    if (q_.glue_bug() == StrictStreams::GlueBug::CommNotGated) gate = nullptr;  // the bug
    q_.launch(kCommStream, DeviceWork{[this, event, after, begin = std::move(t.begin)] {
                                        check_started_after(event, after);
                                        events_[size_t(event)].operation = begin(kernels_);
                                      },
                                      std::move(gate), true, "the start of " + e.issued_by});
    q_.launch(kCommStream,
              DeviceWork{[this, &e, then = std::move(t.then)]() mutable { finish(e, then); },
                         [&e] { return e.operation && e.operation->test(); }, true,
                         "the completion of " + e.issued_by + ", waiting for its peers"});
  }

  bool completed(int event) override {
    q_.refuse_in_graph("an event query (the host asking whether a transfer has finished)");
    Event& e = events_[size_t(event)];
    if (e.graphed && q_.synchronizations() <= e.synchronized_at) return false;
    if (!e.done) return false;
    if (!e.seen) {
      e.seen = true;
      q_.races().host_saw_event(id(event));  // the host issues what follows knowing it
      e.hold.clear();
      if (e.transfer) tell_completed(event);
    }
    return true;
  }

  bool in_flight(int event) const override {
    const Event& e = events_[size_t(event)];
    return e.transfer && !e.seen;
  }

  bool stream_ordered() const override { return true; }

  bool poll() override {
    // A graphed step's transfers are the graph's: the host learns of them at its synchronisation.
    if (q_.graph().active() && q_.glue_bug() != StrictStreams::GlueBug::PolledInGraph) return false;
    // True while anything was in flight, also when this poll saw the last of it complete.
    bool any = false;
    for (size_t e = 0; e < events_.size(); ++e)
      if (in_flight(int(e))) {
        any = true;
        (void)completed(int(e));
      }
    return any;
  }

 private:
  struct Event {
    bool recorded = false;         // its Record or transfer has been issued
    bool transfer = false;         // completed by a transfer (else by a Record)
    bool done = false;             // marked complete by the device
    bool finished = false;         // a transfer and its completion work have run
    bool seen = false;             // the host has seen it complete
    int stream = 0;                // the Record's or the transfer's issuing stream
    uint64_t sequence = 0;         // the Record's place in its stream
    std::string issued_by;         // the instruction that issued the Record or the transfer
    std::string memory;            // a transfer's: what it moves
    bool graphed = false;          // issued in a graphed step: complete once the host synchronised
    uint64_t synchronized_at = 0;  // the host's synchronisations when it was issued
    std::unique_ptr<AsyncOperation> operation;
    std::vector<Tensor> hold;
  };
  int id(int event) const { return first_id_ + event; }

  // A transfer in a graphed step: the communication stream waits for an event recorded on the
  // issuing stream (cudaEventRecord, cudaStreamWaitEvent), which brings it into the capture; the
  // start is named and its memory noted, so a replay moving other memory is refused. What it
  // holds is marked used on the communication stream and let go: the graph's memory keeps a block
  // used on another stream until the step's end (CachingAllocator::end_graph_step), where a held
  // tensor would outlive the step.
  void join_capture(Event& e, const Transfer& t) {
    e.graphed = true;
    e.synchronized_at = q_.synchronizations();
    for (const Tensor& held : e.hold) held.record_use(kCommStream);
    e.hold.clear();
    const int64_t issue_event = -1 - int64_t(id(t.event));  // apart from the program's ids
    q_.graph().note_record(issue_event, t.stream);
    if (q_.glue_bug() != StrictStreams::GlueBug::CommNotJoined)
      q_.graph().note_wait(kCommStream, issue_event);
    q_.graph().note_record(id(t.event), kCommStream);  // the event completes there
    q_.graph().note_kernel("a transfer's start");
    for (const TransferAccess& a : t.accesses) q_.graph().note_access(a.ptr, a.bytes, a.write);
  }

  // A transfer has completed: its completion work, then the event.
  void finish(Event& e, std::function<void(const OpsBackend&)>& then) {
    e.operation.reset();
    if (q_.glue_bug() == StrictStreams::GlueBug::CompletionAfterDone) {  // the bug: done first,
      e.done = true;                                                     // the work queued after
      q_.launch(kCommStream, DeviceWork{[this, &e, then = std::move(then)] {
                                          if (then) then(kernels_);
                                          e.finished = true;
                                        },
                                        nullptr, true});
      return;
    }
    if (then) then(kernels_);
    e.finished = true;
    e.done = true;
  }

  // A Wait on `event` by `waiter` passes: the ordering the race detector assumed must hold.
  void check_passed(int event, int waiter, const std::string& wait) const {
    const Event& e = events_[size_t(event)];
    const std::string passed = "strict device: " + wait + " (a Wait on event " +
                               std::to_string(event) + " on stream " + std::to_string(waiter) +
                               ") passed ";
    if (e.transfer && !e.finished)
      throw OrderingError(passed + "before the transfer of " + e.issued_by + " (" + e.memory +
                          ") and its completion work had run: the event was marked complete "
                          "too early");
    const uint64_t ran = q_.executed(e.stream);
    if (e.transfer || ran >= e.sequence) return;
    const std::string unrun = q_.races().write_between(e.stream, ran, e.sequence);
    throw OrderingError(passed + "when stream " + std::to_string(e.stream) + " had run " +
                        std::to_string(ran) + " of the " + std::to_string(e.sequence) +
                        " pieces of work that " + e.issued_by + " covers" +
                        (unrun.empty() ? std::string() : " (not yet run: " + unrun + ")") +
                        ": the event was marked complete before the work it stands for");
  }

  // A transfer starts: its issuing stream must have run what it was issued after.
  void check_started_after(int event, const StreamEvent& after) const {
    const uint64_t ran = q_.executed(after.stream);
    if (ran >= after.sequence) return;
    const Event& e = events_[size_t(event)];
    const std::string unrun = q_.races().write_between(after.stream, ran, after.sequence);
    throw OrderingError("strict device: the transfer of " + e.issued_by + " (event " +
                        std::to_string(event) + ", " + e.memory + ") started when stream " +
                        std::to_string(after.stream) + " had run " + std::to_string(ran) +
                        " of the " + std::to_string(after.sequence) +
                        " pieces of work issued before it" +
                        (unrun.empty() ? std::string() : " (not yet run: " + unrun + ")") +
                        ": a transfer must start after its stream's work (an event recorded on "
                        "the stream, waited for on the communication stream)");
  }

  StrictStreams& q_;
  const OpsBackend& kernels_;
  int first_id_;
  std::vector<Event> events_;
};

}  // namespace

std::unique_ptr<ProgramEvents> make_strict_program_events(StrictStreams& queues,
                                                          const OpsBackend& kernels, int count,
                                                          int first_id) {
  return std::make_unique<StrictProgramEvents>(queues, kernels, count, first_id);
}

}  // namespace wt
