#pragma once
// Work in flight that the host polls: a collective or point-to-point transfer (comm/), as the
// device layer sees it when it starts a program's transfer after a stream's work
// (device/program_events.hpp). Defined here, below both, so neither depends on the other.
namespace wt {

class AsyncOperation {
 public:
  virtual ~AsyncOperation() = default;
  virtual bool test() = 0;  // true once complete; drives progress
  virtual void wait() = 0;
};

// An operation that finished when it was made (a blocking collective, an empty transfer).
class CompletedOperation : public AsyncOperation {
 public:
  bool test() override { return true; }
  void wait() override {}
};

}  // namespace wt
