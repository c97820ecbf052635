#include "data/eval_loader.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace wt {

std::vector<int64_t> eval_rows(int64_t size, int64_t start, int64_t count, int part, int parts) {
  if (parts < 1 || part < 0 || part >= parts)
    throw std::invalid_argument("part " + std::to_string(part) + " of " + std::to_string(parts));
  if (start < 0 || count < 0) throw std::invalid_argument("negative eval start or count");
  const int64_t n = std::max<int64_t>(0, std::min(count, size - start));
  const int64_t first = start + part * n / parts, last = start + (part + 1) * n / parts;
  std::vector<int64_t> rows(static_cast<size_t>(last - first));
  std::iota(rows.begin(), rows.end(), first);
  return rows;
}

EvalLoader::EvalLoader(DatasetReader& reader, CachingAllocator& memory, int64_t global_batch,
                       int part, int parts)
    : reader_(reader), memory_(memory), global_batch_(global_batch), part_(part), parts_(parts) {
  if (global_batch_ < 1) throw std::invalid_argument("eval batch must be >= 1");
  eval_rows(0, 0, 0, part_, parts_);  // validates part/parts
}

int64_t EvalLoader::batches() const { return (reader_.size() + global_batch_ - 1) / global_batch_; }

bool EvalLoader::next(Tensor& inputs, std::vector<int32_t>& labels) {
  if (next_start_ >= reader_.size()) return false;
  const std::vector<int64_t> rows =
      eval_rows(reader_.size(), next_start_, global_batch_, part_, parts_);
  next_start_ += global_batch_;
  Shape shape = reader_.sample_shape();
  shape.insert(shape.begin(), static_cast<int64_t>(rows.size()));
  inputs = Tensor::empty(shape, memory_, 1);  // stream 1: the data buffers' pool
  inputs.set_label("a batch of " + reader_.split() + " inputs");
  labels.resize(rows.size() * size_t(reader_.labels_per_sample()));
  if (!memory_.device_only()) {
    reader_.read(rows, inputs.data(), labels.data());
    return true;
  }
  std::vector<float> staged(static_cast<size_t>(inputs.numel()));  // host memory, then staged
  reader_.read(rows, staged.data(), labels.data());
  inputs.copy_from_host(staged.data());
  return true;
}

}  // namespace wt
