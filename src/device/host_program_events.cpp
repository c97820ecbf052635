// The host device's program events (host_backend.hpp): flags the host sets and polls.
#include <stdexcept>
#include <string>

#include "device/host_backend.hpp"

namespace wt {

namespace {

class HostProgramEvents final : public ProgramEvents {
 public:
  HostProgramEvents(int count, const OpsBackend& kernels)
      : kernels_(kernels), done_(size_t(count), 0), in_flight_(size_t(count)) {}

  void reset() override {
    // A transfer the step never waited for (a send) finishes first: its buffer is held till then.
    for (size_t e = 0; e < in_flight_.size(); ++e)
      if (in_flight_[e].operation) {
        in_flight_[e].operation->wait();
        completed(int(e));
      }
    std::fill(done_.begin(), done_.end(), 0);
  }
  void record(int event, int) override { complete(event); }
  void wait(int, int) override {}  // waitable() held the host until the event completed
  bool waitable(int event) override { return completed(event); }
  void complete(int event) override { done_[size_t(event)] = 1; }
  void transfer(Transfer t) override {
    InFlight& f = in_flight_[size_t(t.event)];
    f.operation = t.begin(kernels_);
    f.then = std::move(t.then);
    f.hold = std::move(t.hold);
    completed(t.event);  // a blocking one, or one that finished at once
  }
  bool completed(int event) override {
    if (done_[size_t(event)]) return true;
    InFlight& f = in_flight_[size_t(event)];
    if (!f.operation || !f.operation->test()) return false;
    if (f.then) f.then(kernels_);
    f = InFlight{};
    complete(event);
    tell_completed(event);
    return true;
  }
  bool in_flight(int event) const override {
    return in_flight_[size_t(event)].operation != nullptr;
  }
  bool stream_ordered() const override { return false; }
  bool poll() override {
    bool any = false;
    for (size_t e = 0; e < in_flight_.size(); ++e)
      if (in_flight_[e].operation) {
        any = true;
        completed(int(e));
      }
    return any;
  }

 private:
  struct InFlight {
    std::unique_ptr<AsyncOperation> operation;
    std::function<void(const OpsBackend&)> then;
    std::vector<Tensor> hold;
  };
  const OpsBackend& kernels_;
  std::vector<char> done_;
  std::vector<InFlight> in_flight_;
};

}  // namespace

std::unique_ptr<ProgramEvents> HostBackend::program_events(int count, void*) {
  return std::make_unique<HostProgramEvents>(count, ops_);
}

}  // namespace wt
