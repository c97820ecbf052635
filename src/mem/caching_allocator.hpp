#pragma once
// Device-memory budget and caching allocator. On a CPU rank the "device" is host memory and the
// budget (device.memory_limit) is enforced here, so out-of-memory behaviour is real and testable.
// Freed blocks are cached per stream (Waterwave: a block freed on one stream is reused on that
// stream first), which also keeps glibc from returning and re-faulting large buffers every step.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace wt {

struct MemoryStats {
  size_t in_use = 0;    // bytes handed out and not yet released
  size_t reserved = 0;  // bytes held from the system (in use + cached)
  size_t peak_in_use = 0;
  size_t peak_reserved = 0;
  size_t allocations = 0;         // calls to allocate()
  size_t system_allocations = 0;  // calls that had to go to the system
};

// Exit status 3. The budget's own message, or one naming what could not be allocated (host
// memory exhausted, or a caller adding which tensor or dataset it was for).
class OutOfMemory : public std::runtime_error {
 public:
  OutOfMemory(size_t requested, size_t in_use, size_t limit);
  explicit OutOfMemory(const std::string& message, size_t requested_bytes = 0)
      : std::runtime_error(message), requested(requested_bytes) {}
  size_t requested;
};

class CachingAllocator {
 public:
  // limit_bytes == 0 means no budget.
  explicit CachingAllocator(size_t limit_bytes = 0) : limit_(limit_bytes) {}
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Returns 64-byte aligned memory of at least `bytes`; `*granted` receives the block size.
  void* allocate(size_t bytes, int stream, size_t* granted);
  void release(void* ptr, size_t granted, int stream);

  void set_limit(size_t limit_bytes);
  size_t limit() const { return limit_; }
  MemoryStats stats() const;
  void reset_peaks();
  // Returns every cached (free) block to the system.
  void empty_cache();
  // Called after every allocate/release with the new stats (the trace's memory samples).
  void set_observer(std::function<void(const MemoryStats&)> observer);

  static size_t round_size(size_t bytes);

 private:
  void free_cached_locked();
  size_t limit_;
  MemoryStats stats_;
  // (stream, size) -> free blocks of exactly that rounded size.
  std::multimap<std::pair<int, size_t>, void*> free_blocks_;
  std::function<void(const MemoryStats&)> observer_;
  mutable std::mutex mutex_;
};

// The process-wide allocator for this rank's device. Deliberately never destroyed, so tensors
// in static storage can still release into it at exit.
CachingAllocator& device_allocator();

}  // namespace wt
