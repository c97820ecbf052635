#pragma once
// Scratch memory an ops backend owns and grows on demand (a GPU's staged labels, the loss's rows,
// bf16 operand copies, a convolution's fallback workspace). Growing keeps the earlier storage
// until release(): a CUDA graph replays the addresses it was captured with, so a captured copy or
// kernel must still find memory at the old address after an evaluation's larger batch grew the
// buffer (freeing it there was a use after free in every later replay). Growth at least doubles,
// so what is kept is at most the final size again. Memory: static void* allocate(size_t bytes)
// (throws on failure) and static void free(void*).
#include <algorithm>
#include <cstddef>
#include <vector>

namespace wt {

template <class Memory>
class GrowingBuffer {
 public:
  GrowingBuffer() = default;
  GrowingBuffer(const GrowingBuffer&) = delete;
  GrowingBuffer& operator=(const GrowingBuffer&) = delete;
  ~GrowingBuffer() { release(); }

  // At least `wanted` bytes. Work queued before the call may still use the earlier storage.
  void* at_least(size_t wanted) {
    if (wanted <= bytes_) return data_;
    const size_t grown = std::max(wanted, 2 * bytes_);
    kept_.reserve(kept_.size() + 1);  // so that keeping the old storage cannot throw
    void* fresh = Memory::allocate(grown);
    if (data_) kept_.push_back(data_);
    data_ = fresh;
    bytes_ = grown;
    return data_;
  }
  // Frees every storage it has held: the caller has waited for all work that used any of them.
  void release() {
    for (void* p : kept_) Memory::free(p);
    kept_.clear();
    if (data_) Memory::free(data_);
    data_ = nullptr;
    bytes_ = 0;
  }
  size_t bytes() const { return bytes_; }  // the current storage's
  size_t kept() const { return kept_.size(); }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  std::vector<void*> kept_;  // earlier storage, which captured graphs may still address
};

}  // namespace wt
