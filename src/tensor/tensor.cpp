#include "tensor/tensor.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace wt {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

MemoryBlock::MemoryBlock(CachingAllocator& alloc, size_t bytes, int stream_id)
    : allocator(alloc),
      ptr(alloc.allocate(bytes, stream_id)),
      stream(stream_id),
      device_only(alloc.device_only()) {}

MemoryBlock::~MemoryBlock() { allocator.release(ptr, stream); }

Tensor Tensor::empty(const Shape& shape, CachingAllocator& alloc, int stream) {
  Tensor t;
  t.shape_ = shape;
  t.numel_ = shape_numel(shape);
  if (t.numel_ < 0) throw std::invalid_argument("negative tensor shape " + shape_str(shape));
  t.block_ =
      std::make_shared<MemoryBlock>(alloc, static_cast<size_t>(t.numel_) * sizeof(float), stream);
  t.data_ = static_cast<float*>(t.block_->ptr);
  return t;
}

Tensor Tensor::zeros(const Shape& shape, CachingAllocator& alloc, int stream) {
  Tensor t = empty(shape, alloc, stream);
  t.fill(0.0f);
  return t;
}

Tensor Tensor::reshaped(const Shape& shape) const {
  if (shape_numel(shape) != numel_)
    throw std::invalid_argument("cannot reshape " + shape_str(shape_) + " to " + shape_str(shape));
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::slice(int64_t offset, const Shape& shape) const {
  const int64_t n = shape_numel(shape);
  if (offset < 0 || offset + n > numel_)
    throw std::out_of_range("slice out of range of " + shape_str(shape_));
  Tensor t = *this;
  t.shape_ = shape;
  t.numel_ = n;
  t.data_ = data_ + offset;
  return t;
}

void Tensor::fill(float value) {
  if (block_ && numel_ > 0) block_->allocator.device().fill(data_, size_t(numel_), value);
}

void Tensor::copy_from(const Tensor& other) {
  if (other.numel_ != numel_)
    throw std::invalid_argument("copy_from: " + shape_str(other.shape_) + " into " +
                                shape_str(shape_));
  if (numel_ == 0) return;
  const auto& block = block_ ? block_ : other.block_;
  block->allocator.device().copy_on_device(data_, other.data_, bytes());
}

std::vector<float> Tensor::to_host() const {
  std::vector<float> values(static_cast<size_t>(numel_));
  if (block_ && numel_ > 0) block_->allocator.device().copy_to_host(values.data(), data_, bytes());
  return values;
}

void Tensor::copy_from_host(const float* values) {
  if (block_ && numel_ > 0) block_->allocator.device().copy_to_device(data_, values, bytes());
}

void Tensor::copy_from_host_async(std::vector<float> values, int stream) {
  if (int64_t(values.size()) != numel_)
    throw std::invalid_argument("copy_from_host_async: " + std::to_string(values.size()) +
                                " values into " + shape_str(shape_));
  if (block_ && numel_ > 0)
    block_->allocator.device().copy_to_device_async(stream, data_, values.data(), bytes(),
                                                    "the copy from host");
}

void Tensor::fill_async(float value, int stream) {
  if (block_ && numel_ > 0)
    block_->allocator.device().fill_async(stream, data_, size_t(numel_), value, "fill");
}

HostReadable::HostReadable(const Tensor& t) {
  if (!t.defined()) return;
  if (!t.block_->device_only) {
    ptr_ = t.data_;
    return;
  }
  copy_ = t.to_host();
  ptr_ = copy_.data();
}

void Tensor::record_use(int stream) const {
  if (block_) block_->allocator.record_use(block_->ptr, stream);
}

void Tensor::set_label(std::string label) {
  if (!block_) return;
  block_->allocator.name_block(block_->ptr, "tensor '" + label + "'");
  block_->label = std::move(label);
}

std::string Tensor::label() const { return block_ ? block_->label : std::string(); }

void Tensor::throw_host_access() const {
  const std::string name = block_->label.empty() ? "an unnamed tensor" : "'" + block_->label + "'";
  throw HostAccessError("host code accessed device memory of " + name + " " + shape_str(shape_) +
                        " (allocated on stream " + std::to_string(block_->stream) +
                        "), which this device keeps from the host: copy it through a staged copy "
                        "(Tensor::to_host / copy_from_host) or run it as device work");
}

}  // namespace wt
