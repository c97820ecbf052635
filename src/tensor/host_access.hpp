#pragma once
// The strict device's first rule: host code cannot touch device memory. Tensors whose storage is
// device-only (CachingAllocator::device_only()) check every access: it is allowed only while
// this thread runs device work (a queued kernel, or a kernel the host runs synchronously after
// synchronising the device) and otherwise throws HostAccessError naming the tensor. Host code
// moves data in and out through staged copies (Tensor::to_host, Tensor::copy_from_host).
#include <stdexcept>
#include <string>

namespace wt {

// A program error: host code read or wrote device memory without a staged copy.
class HostAccessError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Whether this thread is running device work now.
bool in_device_work();

// Marks the enclosed code as device work on this thread (nests).
class DeviceWorkScope {
 public:
  DeviceWorkScope();
  ~DeviceWorkScope();
  DeviceWorkScope(const DeviceWorkScope&) = delete;
  DeviceWorkScope& operator=(const DeviceWorkScope&) = delete;
};

}  // namespace wt
