#pragma once
// Several communication requests behind one event (a stage's parameters and its buffers; encoded
// words and their side list): done when all are.
#include <memory>
#include <vector>

#include "comm/communicator.hpp"

namespace wt {

class RequestGroup : public CommRequest {
 public:
  void add(std::unique_ptr<AsyncOperation> r) { parts_.push_back(std::move(r)); }
  bool empty() const { return parts_.empty(); }
  bool test() override {
    bool all = true;
    for (auto& r : parts_) all = r->test() && all;  // drive every part
    return all;
  }
  void wait() override {
    for (auto& r : parts_) r->wait();
  }

 private:
  std::vector<std::unique_ptr<AsyncOperation>> parts_;
};

}  // namespace wt
