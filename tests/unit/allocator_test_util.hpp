#pragma once
// Allocator test helpers: events of streams that finish only when the test says so (a device
// whose streams run behind the host), and an allocation that remembers its stream.
#include <map>

#include "mem/caching_allocator.hpp"

namespace wt_test {

// Work issued on a stream finishes only when the test says so (finish, synchronize).
class QueuedStreamEvents final : public wt::DeviceStreams {
 public:
  wt::StreamEvent record(int stream) override { return {stream, ++issued_[stream]}; }
  bool completed(const wt::StreamEvent& e) override { return e.sequence <= finished_[e.stream]; }
  void synchronize() override {
    ++synchronizations;
    for (auto& [stream, n] : issued_) finished_[stream] = n;
  }
  void finish(int stream) { finished_[stream] = issued_[stream]; }
  int synchronizations = 0;

 private:
  std::map<int, uint64_t> issued_, finished_;
};

inline constexpr size_t KiB = 1024;
// A block that fills its segment: no fresh tail beside it can stand in for a freed block.
inline constexpr size_t kWhole = 2048 * KiB;

struct Allocation {
  wt::CachingAllocator& allocator;
  void* ptr;
  size_t granted;
  int stream;
  Allocation(wt::CachingAllocator& a, size_t bytes, int s) : allocator(a), stream(s) {
    ptr = a.allocate(bytes, s, &granted);
  }
  void free() { allocator.release(ptr, stream); }
};

}  // namespace wt_test
