#include "data/pinned_staging.hpp"

#include <algorithm>
#include <new>

namespace wt {

PinnedStaging::~PinnedStaging() {
  // A copy still queued reads its buffer: let it run first (a job ending normally has
  // synchronised already; one unwinding from an error may not have).
  if (!in_flight_.empty()) {
    try {
      device_.synchronize();
    } catch (...) {
      for (auto& flight : in_flight_) flight.first.ptr = nullptr;  // leaked, never freed under it
    }
  }
  for (const auto& flight : in_flight_)
    if (flight.first.ptr) device_.free_pinned(flight.first.ptr);
  for (const Buffer& b : free_) device_.free_pinned(b.ptr);
}

PinnedStaging::Buffer PinnedStaging::acquire(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The smallest that fits: batches of one job are all one size but the last.
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->bytes >= bytes && (best == free_.end() || it->bytes < best->bytes)) best = it;
    if (best != free_.end()) {
      const Buffer b = *best;
      free_.erase(best);
      return b;
    }
    ++allocated_;
  }
  Buffer b{device_.allocate_pinned(bytes), bytes};
  if (!b.ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    --allocated_;
    throw std::bad_alloc();
  }
  return b;
}

void PinnedStaging::release_after_copy(Buffer buffer, int stream) {
  if (early_release_) return release(buffer);  // the planted bug
  const StreamEvent copied = device_.record(stream);
  std::lock_guard<std::mutex> lock(mutex_);
  in_flight_.emplace_back(buffer, copied);
}

void PinnedStaging::release(Buffer buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(buffer);
}

void PinnedStaging::reclaim() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto done = std::stable_partition(in_flight_.begin(), in_flight_.end(),
                                    [this](const auto& f) { return !device_.completed(f.second); });
  for (auto it = done; it != in_flight_.end(); ++it) free_.push_back(it->first);
  in_flight_.erase(done, in_flight_.end());
}

size_t PinnedStaging::buffers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_;
}

}  // namespace wt
