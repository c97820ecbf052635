#pragma once
// A one-rank communicator for unit tests of code that agrees over ranks: every collective is the
// identity, and the double allreduces (the agreements: the non-finite guard's, the stop
// decision's) are counted, so a test can tell whether a call communicated.
#include <memory>
#include <vector>

#include "comm/communicator.hpp"

namespace wt::test {

class SoloComm : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int add_group(const std::vector<int>&) override { return 0; }
  std::unique_ptr<CommRequest> iallreduce_sum(float*, int64_t, int) override {
    return std::make_unique<CompletedRequest>();
  }
  void allreduce_sum(float*, int64_t, int) override {}
  void allreduce_sum(double*, int64_t, int) override { ++double_allreduces; }
  void broadcast(float*, int64_t, int, int) override {}
  void broadcast_bytes(void*, int64_t, int) override {}
  std::unique_ptr<CommRequest> isend(const float*, int64_t, int, int) override {
    return std::make_unique<CompletedRequest>();
  }
  std::unique_ptr<CommRequest> irecv(float*, int64_t, int, int) override {
    return std::make_unique<CompletedRequest>();
  }
  void barrier() override {}
  int double_allreduces = 0;
};

}  // namespace wt::test
