#include "mem/caching_allocator.hpp"

#include <cstdlib>
#include <new>

namespace wt {

OutOfMemory::OutOfMemory(size_t requested_bytes, size_t in_use, size_t limit)
    : std::runtime_error("out of device memory: requested " + std::to_string(requested_bytes) +
                         " bytes with " + std::to_string(in_use) + " in use of a " +
                         std::to_string(limit) + "-byte limit (device.memory_limit)"),
      requested(requested_bytes) {}

CachingAllocator::~CachingAllocator() { empty_cache(); }

size_t CachingAllocator::round_size(size_t bytes) {
  // 512-byte granularity below 1 MiB, then quarter-power-of-two classes, so reuse is likely but
  // waste stays under 25%.
  if (bytes == 0) bytes = 1;
  if (bytes < (size_t(1) << 20)) return (bytes + 511) & ~size_t(511);
  size_t pow = size_t(1) << (63 - __builtin_clzll(bytes));
  size_t step = pow / 4;
  return (bytes + step - 1) / step * step;
}

void* CachingAllocator::allocate(size_t bytes, int stream, size_t* granted) {
  const size_t size = round_size(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.allocations++;
  void* ptr = nullptr;
  auto it = free_blocks_.find({stream, size});
  if (it == free_blocks_.end()) {
    // Another stream's cached block of the same size is the next best thing.
    for (auto jt = free_blocks_.begin(); jt != free_blocks_.end(); ++jt) {
      if (jt->first.second == size) {
        it = jt;
        break;
      }
    }
  }
  if (it != free_blocks_.end()) {
    ptr = it->second;
    free_blocks_.erase(it);
  } else {
    if (limit_ && stats_.reserved + size > limit_) free_cached_locked();
    if (limit_ && stats_.reserved + size > limit_) throw OutOfMemory(bytes, stats_.in_use, limit_);
    ptr = std::aligned_alloc(64, size);
    if (!ptr)
      throw OutOfMemory("out of host memory: requested " + std::to_string(bytes) +
                            " bytes, which this process cannot get (" +
                            std::to_string(stats_.in_use) + " in use)",
                        bytes);
    stats_.reserved += size;
    stats_.system_allocations++;
  }
  stats_.in_use += size;
  if (stats_.in_use > stats_.peak_in_use) stats_.peak_in_use = stats_.in_use;
  if (stats_.reserved > stats_.peak_reserved) stats_.peak_reserved = stats_.reserved;
  *granted = size;
  if (observer_) observer_(stats_);
  return ptr;
}

void CachingAllocator::release(void* ptr, size_t granted, int stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.in_use -= granted;
  free_blocks_.emplace(std::make_pair(stream, granted), ptr);
  if (observer_) observer_(stats_);
}

void CachingAllocator::free_cached_locked() {
  for (auto& [key, ptr] : free_blocks_) {
    std::free(ptr);
    stats_.reserved -= key.second;
  }
  free_blocks_.clear();
}

void CachingAllocator::set_limit(size_t limit_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_ = limit_bytes;
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peaks() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_in_use = stats_.in_use;
  stats_.peak_reserved = stats_.reserved;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached_locked();
}

void CachingAllocator::set_observer(std::function<void(const MemoryStats&)> observer) {
  std::lock_guard<std::mutex> lock(mutex_);
  observer_ = std::move(observer);
}

CachingAllocator& device_allocator() {
  static CachingAllocator* instance = new CachingAllocator();
  return *instance;
}

}  // namespace wt
