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
#include "tensor/host_access.hpp"

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
  bool device_only;   // the strict device's memory: host code must stage (host_access.hpp)
  std::string label;  // what the tensor holds, for errors ("stage 1 parameters")
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

  // Device memory: on the strict device only device work may call these (host_access.hpp).
  float* data() {
    check_access();
    return data_;
  }
  const float* data() const {
    check_access();
    return data_;
  }
  FloatView view() const {
    check_access();
    return FloatView(data_, numel_);
  }

  // The storage's device address, unchecked: a kernel's argument (issued now, run later) and the
  // allocator's key (record_use). Host code must not dereference it.
  float* device_ptr() const { return data_; }
  // Work on `stream` uses this tensor too (it crosses streams): its memory is not reused after
  // the host drops it until that stream's work issued by then has run.
  void record_use(int stream) const;

  // Staged copies between host memory and the tensor (the device's DeviceStreams): the device is
  // synchronised first, so the copy sees (or precedes) all work issued before it. On the host
  // device these are plain copies; on a GPU, cudaMemcpy.
  std::vector<float> to_host() const;
  void copy_from_host(const float* values);  // numel() values
  // The copy in is issued on `stream`, after its work so far, without waiting for the device
  // (cudaMemcpyAsync from pageable memory: `values` is staged at once). Work on other streams
  // must be ordered after it by the caller.
  void copy_from_host_async(std::vector<float> values, int stream);
  // fill(), issued on `stream` after its work so far, without waiting (cudaMemsetAsync).
  void fill_async(float value, int stream);

  // Names the storage in errors (a host access on the strict device); slices share the name.
  void set_label(std::string label);
  std::string label() const;

  // Same storage, new shape (same numel).
  Tensor reshaped(const Shape& shape) const;
  // Elements [offset, offset + numel(shape)) of this tensor's storage, as a tensor of `shape`.
  Tensor slice(int64_t offset, const Shape& shape) const;

  // Kernels: host code may call them on any device; on a device with queues a call from host code
  // synchronises the device and runs at once (a blocking kernel).
  void fill(float value);
  void copy_from(const Tensor& other);  // same numel

 private:
  void check_access() const {
    if (block_ && block_->device_only && !in_device_work()) throw_host_access();
  }
  [[noreturn]] void throw_host_access() const;
  friend class HostReadable;

  std::shared_ptr<MemoryBlock> block_;
  float* data_ = nullptr;
  Shape shape_;
  int64_t numel_ = 0;
};

// Host-readable values of a tensor while this lives: the tensor's own memory where host code may
// read it, a staged copy on the strict device (so the host device pays no copy).
class HostReadable {
 public:
  explicit HostReadable(const Tensor& t);
  const float* data() const { return ptr_; }  // nullptr for an undefined tensor

 private:
  std::vector<float> copy_;
  const float* ptr_ = nullptr;
};

}  // namespace wt
