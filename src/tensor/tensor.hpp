#pragma once
// Tensor: a shape plus a reference-counted block from the caching allocator. Kernels see it as a
// Kokkos::View (view()) or a raw pointer for BLAS. Slices share the block, so per-stage flat
// parameter/gradient buffers can hand out per-parameter tensors without copies.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mem/caching_allocator.hpp"

namespace wt {

using Shape = std::vector<int64_t>;
int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);

using DeviceSpace = Kokkos::DefaultExecutionSpace;
using FloatView =
    Kokkos::View<float*, DeviceSpace::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Owns one allocation; returns it to the allocator when the last tensor lets go.
struct MemoryBlock {
  MemoryBlock(CachingAllocator& alloc, size_t bytes, int stream);
  ~MemoryBlock();
  MemoryBlock(const MemoryBlock&) = delete;
  MemoryBlock& operator=(const MemoryBlock&) = delete;
  CachingAllocator& allocator;
  void* ptr;
  int stream;
};

class Tensor {
 public:
  Tensor() = default;
  // Uninitialised storage from `alloc` (the device context's allocator) for work on `stream`.
  static Tensor empty(const Shape& shape, CachingAllocator& alloc, int stream = 0);
  static Tensor zeros(const Shape& shape, CachingAllocator& alloc, int stream = 0);

  bool defined() const { return block_ != nullptr; }
  // The allocator this tensor's storage came from: new tensors that go with it come from there.
  CachingAllocator& allocator() const { return block_->allocator; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_[i < 0 ? i + rank() : i]; }
  int64_t numel() const { return numel_; }
  size_t bytes() const { return static_cast<size_t>(numel_) * sizeof(float); }

  float* data() { return data_; }
  const float* data() const { return data_; }
  FloatView view() const { return FloatView(data_, numel_); }

  // Same storage, new shape (same numel).
  Tensor reshaped(const Shape& shape) const;
  // Elements [offset, offset + numel(shape)) of this tensor's storage, as a tensor of `shape`.
  Tensor slice(int64_t offset, const Shape& shape) const;

  void fill(float value);
  void copy_from(const Tensor& other);  // same numel

 private:
  std::shared_ptr<MemoryBlock> block_;
  float* data_ = nullptr;
  Shape shape_;
  int64_t numel_ = 0;
};

}  // namespace wt
