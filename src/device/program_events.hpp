#pragma once
// A program's events on one device, as one executor runs them: how Record, Wait and transfers
// happen (ARCHITECTURE.md, "One stream interface, three backends"). The executor has no branch per
// device kind; each backend maps these calls to what it has:
//   host:   issuing is executing: a Record completes at once, a transfer starts at once and the
//           host polls it, a Wait holds the host until its event has completed;
//   strict: Record, Wait and the transfers' start and completion are queued work, a transfer on
//           the communication stream after the issuing stream's work, and the race detector's
//           ordering is checked against what the queues really ran (strict_program_events.hpp);
//   cuda:   cudaEventRecord and cudaStreamWaitEvent; NCCL enqueued on the communication stream
//           after an event from the issuing stream, or MPI staged through host memory.
// Event ids are the program's (0..count-1), all pending again at reset().
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "ops/ops_backend.hpp"
#include "tensor/tensor.hpp"
#include "util/async_operation.hpp"

namespace wt {

// Device memory a transfer (or its completion work) reads or writes: declared when it is issued,
// so the strict device can check it.
struct TransferAccess {
  const void* ptr = nullptr;
  size_t bytes = 0;
  bool write = false;
  const char* what = "the transfer";
};

// A transfer that completes an event: it starts once the issuing stream has run the work issued
// on it before, on the communication stream (`comm`: the device's kernels as they run there).
struct Transfer {
  int event = 0;
  int stream = 0;  // the issuing stream
  // Starts the transfer; returns it in flight (a blocking one returns it complete).
  std::function<std::unique_ptr<AsyncOperation>(const OpsBackend& comm)> begin;
  // Device work once the transfer is complete, before its event completes (a decode, a zeroing).
  std::function<void(const OpsBackend& comm)> then;
  std::vector<Tensor> hold;              // alive until the host sees it complete (a send's buffer)
  std::vector<TransferAccess> accesses;  // what `begin`'s transfer and `then` touch
};

class ProgramEvents {
 public:
  virtual ~ProgramEvents() = default;
  // A new step: every event pending again. Nothing may be in flight.
  virtual void reset() = 0;
  // Record: `event` completes once `stream` has run the work issued on it so far.
  virtual void record(int event, int stream) = 0;
  // A device Wait: work issued on `stream` from now on runs after `event` has completed.
  virtual void wait(int stream, int event) = 0;
  // Whether a Wait on `event` may be issued now: a device that waits on the device needs the
  // event's producer issued (a CUDA host cannot wait on an event not yet recorded); one whose
  // waits hold the host needs the event complete.
  virtual bool waitable(int event) = 0;
  virtual void transfer(Transfer transfer) = 0;
  // `event` completes now (a transfer with nothing to move).
  virtual void complete(int event) = 0;
  // Whether the host has seen `event` complete (polling it if need be); work issued after a true
  // answer is ordered after the event.
  virtual bool completed(int event) = 0;
  // Whether `event`'s transfer has been issued and not yet seen complete by the host.
  virtual bool in_flight(int event) const = 0;
  // Polls the transfers in flight; false when there are none.
  virtual bool poll() = 0;
  // Whether transfers are device work ordered by events on the device (NCCL's stream, the strict
  // device's communication queue), so a whole-step graph can hold them; false where the host
  // drives them (MPI, staged through host memory). In a graphed step the host learns that a
  // transfer completed only from the step's synchronisation: nothing is polled or queried.
  virtual bool stream_ordered() const = 0;
  // Told each event the host sees complete (traces); nullptr detaches.
  void on_completed(std::function<void(int event)> told) { told_ = std::move(told); }

 protected:
  void tell_completed(int event) {
    if (told_) told_(event);
  }

 private:
  std::function<void(int)> told_;
};

}  // namespace wt
