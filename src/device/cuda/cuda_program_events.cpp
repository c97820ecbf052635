// The CUDA device's program events (cuda_backend.hpp). A Record is cudaEventRecord on its
// stream and a Wait cudaStreamWaitEvent, so the host never waits for either. Transfers take one
// of two paths:
//   - stream ordered (NCCL): at issue, an event recorded on the issuing stream is waited for on
//     the communicator's stream, the operation is enqueued there, then its completion work, then
//     the event's cudaEvent: a later Wait orders any stream after all of it on the device;
//   - host driven (MPI, e.g. ranks sharing one GPU): the host starts each transfer, in issue
//     order, once the issuing stream's event has completed (polled), and finishes it when MPI
//     says it is done (the staged copy back is synchronous); the completion work then runs on
//     the device's communication stream, synchronised, before the host marks the event complete.
//     A Wait on such an event holds the host until then (waitable), so it needs nothing on the
//     device.
// In a whole-step graph (device.cuda_graphs) a stream-ordered transfer is captured as issued: the
// communicator's stream joins the capture by its wait for the issuing stream's event, NCCL's call
// and the completion work become graph nodes, and the device joins that stream back before the
// capture ends (cuda_device.cpp). A replay issues nothing (the graph holds it). The host never
// queries a graphed transfer (an event recorded in a capture is no real event, and CUDA refuses
// queries during one): it is complete once the host has synchronised after the graph's launch.
// The strict device models the same glue (strict_program_events.cpp); its race detector is what
// checks it in CI.
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "device/cuda/cuda_device.hpp"
#include "util/cuda_check.hpp"

namespace wt::cuda {

namespace {

class CudaProgramEvents final : public ProgramEvents {
 public:
  CudaProgramEvents(CudaDevice& device, int count, cudaStream_t comm)
      : device_(device), comm_(comm), events_(size_t(count)) {
    for (Event& e : events_) {
      e.done_event = device_.take_event();
      e.issue_event = device_.take_event();
    }
  }
  ~CudaProgramEvents() override {
    for (Event& e : events_) {
      device_.give_event(e.done_event);
      device_.give_event(e.issue_event);
    }
  }

  void reset() override {
    // A transfer the step never waited for (a send) finishes first: its buffer is held till then.
    for (size_t i = 0; i < events_.size(); ++i) {
      Event& e = events_[i];
      if (!in_flight(int(i))) continue;
      if (e.graphed) {
        if (device_.synchronizations() <= e.synchronized_at) device_.synchronize();
      } else if (comm_) {
        WT_CUDA_CHECK(cudaEventSynchronize(e.done_event));
      } else {
        while (!e.operation) pump();
        e.operation->wait();
      }
      if (!completed(int(i))) throw std::logic_error("cuda: a transfer did not complete");
    }
    for (Event& e : events_) e.reset();
    queued_.clear();
  }

  void record(int event, int stream) override {
    Event& e = events_[size_t(event)];
    // A replayed graph step: the captured record and wait are the graph's edges.
    if (!device_.replaying()) WT_CUDA_CHECK(cudaEventRecord(e.done_event, device_.stream(stream)));
    e.recorded = true;
  }

  void wait(int stream, int event) override {
    const Event& e = events_[size_t(event)];
    if (e.trivial || (e.transfer && !comm_)) return;  // complete already: nothing to wait for
    if (device_.replaying()) return;
    WT_CUDA_CHECK(cudaStreamWaitEvent(device_.stream(stream), e.done_event, 0));
  }

  bool waitable(int event) override {
    const Event& e = events_[size_t(event)];
    if (e.transfer && !comm_) return completed(event);
    return e.recorded;
  }

  void complete(int event) override {
    Event& e = events_[size_t(event)];
    e.recorded = e.trivial = e.seen = true;
  }

  void transfer(Transfer t) override {
    Event& e = events_[size_t(t.event)];
    e.transfer = true;
    e.hold = std::move(t.hold);
    if (!device_.replaying())
      WT_CUDA_CHECK(cudaEventRecord(e.issue_event, device_.stream(t.stream)));
    if (!comm_) {  // host driven: started by pump() in issue order
      e.begin = std::move(t.begin);
      e.then = std::move(t.then);
      queued_.push_back(t.event);
      pump();
      return;
    }
    e.recorded = true;
    if (device_.in_graph()) {
      e.graphed = true;
      e.synchronized_at = device_.synchronizations();
      // The graph's memory keeps a block used on another stream until the step's end.
      for (const Tensor& held : e.hold) held.record_use(kCommStream);
      e.hold.clear();
      if (device_.replaying()) return;  // the graph holds the wait, the call and its completion
    }
    WT_CUDA_CHECK(cudaStreamWaitEvent(comm_, e.issue_event, 0));
    const OpsBackend& comm_ops = device_.ops_on(comm_);
    e.operation = t.begin(comm_ops);
    if (e.graphed) e.operation.reset();  // its event is a capture's: never to be queried
    if (t.then) t.then(comm_ops);
    WT_CUDA_CHECK(cudaEventRecord(e.done_event, comm_));
  }

  bool completed(int event) override {
    Event& e = events_[size_t(event)];
    if (e.seen) return true;
    if (!comm_ && e.transfer) return finish_host_driven(event);
    if (!e.recorded) return false;
    if (e.graphed) {  // no query: the host's synchronisation after the graph's launch tells
      if (device_.in_graph() || device_.synchronizations() <= e.synchronized_at) return false;
      seen(event);
      return true;
    }
    // The operation's own test first: a communicator reports a failed peer there (NCCL's
    // asynchronous errors), and a watched one publishes the wait to the stall watchdog.
    if (e.operation && !e.operation->test()) return false;
    const cudaError_t rc = cudaEventQuery(e.done_event);
    if (rc == cudaErrorNotReady) return false;
    WT_CUDA_CHECK(rc);
    seen(event);
    return true;
  }

  bool in_flight(int event) const override {
    const Event& e = events_[size_t(event)];
    return e.transfer && !e.seen;
  }

  bool stream_ordered() const override { return comm_ != nullptr; }

  bool poll() override {
    // A graphed step's transfers complete only in its synchronisation: nothing to poll (and a
    // Wait that cannot be issued is a deadlock to report, not to spin on).
    if (device_.in_graph()) return false;
    // True while anything was in flight, also when this very poll saw the last of it complete:
    // that is progress, and the executor's deadlock check must not read it as none.
    pump();
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
    cudaEvent_t done_event = nullptr;   // recorded where the event completes on the device
    cudaEvent_t issue_event = nullptr;  // a transfer's issuing stream, at its issue
    bool recorded = false, transfer = false, trivial = false, seen = false;
    bool graphed = false;          // issued in a graphed step (captured or replayed)
    uint64_t synchronized_at = 0;  // the device's synchronisations when it was issued
    std::unique_ptr<AsyncOperation> operation;
    std::function<std::unique_ptr<AsyncOperation>(const OpsBackend&)> begin;  // host driven
    std::function<void(const OpsBackend&)> then;                              // host driven
    std::vector<Tensor> hold;
    void reset() {
      recorded = transfer = trivial = seen = graphed = false;
      operation.reset();
      begin = nullptr;
      then = nullptr;
      hold.clear();
    }
  };

  void seen(int event) {
    Event& e = events_[size_t(event)];
    e.seen = true;
    e.operation.reset();
    e.hold.clear();
    if (e.transfer) tell_completed(event);
  }

  // Host driven: starts the queued transfers, oldest first, whose issuing streams have reached
  // them (MPI matches in issue order).
  void pump() {
    while (!queued_.empty()) {
      Event& e = events_[size_t(queued_.front())];
      const cudaError_t rc = cudaEventQuery(e.issue_event);
      if (rc == cudaErrorNotReady) return;
      WT_CUDA_CHECK(rc);
      e.operation = e.begin(device_.kernels());
      queued_.pop_front();
    }
  }

  bool finish_host_driven(int event) {
    Event& e = events_[size_t(event)];
    pump();
    if (!e.operation || !e.operation->test()) return false;
    if (e.then) {
      e.then(device_.ops(kCommStream));
      WT_CUDA_CHECK(cudaStreamSynchronize(device_.stream(kCommStream)));
    }
    seen(event);
    return true;
  }

  CudaDevice& device_;
  cudaStream_t comm_;  // the communicator's stream (NCCL); nullptr: host driven
  std::vector<Event> events_;
  std::deque<int> queued_;  // host driven transfers not yet started, in issue order
};

}  // namespace

std::unique_ptr<ProgramEvents> make_cuda_program_events(CudaDevice& device, int count,
                                                        cudaStream_t comm) {
  return std::make_unique<CudaProgramEvents>(device, count, comm);
}

}  // namespace wt::cuda
