#include "data/eval_loader.hpp"

#include <algorithm>
#include <cmath>
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
  const int64_t per_sample = std::accumulate(shape.begin(), shape.end(), int64_t(1),
                                             [](int64_t a, int64_t b) { return a * b; });
  const size_t per_labels = size_t(reader_.labels_per_sample());
  staged_.resize(rows.size() * size_t(per_sample));
  labels.resize(rows.size() * per_labels);
  reader_.read(rows, staged_.data(), labels.data());
  const int64_t kept = screen_nonfinite(int64_t(rows.size()), per_sample, labels);
  shape.insert(shape.begin(), kept);
  try {
    inputs = Tensor::empty(shape, memory_, 1);  // stream 1: the data buffers' pool
  } catch (const OutOfMemory& e) {
    throw OutOfMemory("cannot allocate an evaluation batch of " + std::to_string(kept) +
                          " samples of " + reader_.path() + " /" + reader_.split() +
                          "/inputs (train.eval_batch bounds it): " + e.what(),
                      e.requested);
  }
  inputs.set_label("a batch of " + reader_.split() + " inputs");
  if (!memory_.device_only())
    std::copy(staged_.begin(), staged_.begin() + kept * per_sample, inputs.data());
  else
    inputs.copy_from_host(staged_.data());
  return true;
}

int64_t EvalLoader::screen_nonfinite(int64_t rows, int64_t per_sample,
                                     std::vector<int32_t>& labels) {
  const size_t per_labels = labels.size() / size_t(std::max<int64_t>(rows, 1));
  int64_t kept = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = staged_.data() + r * per_sample;
    int64_t bad = 0;
    for (int64_t i = 0; i < per_sample; ++i) bad += !std::isfinite(row[i]);
    nonfinite_values_ += bad;
    nonfinite_samples_ += bad > 0;
    if (bad > 0 && drop_nonfinite_) continue;
    if (kept != r) {  // compact the kept rows and their labels
      std::copy(row, row + per_sample, staged_.data() + kept * per_sample);
      std::copy(labels.begin() + r * per_labels, labels.begin() + (r + 1) * per_labels,
                labels.begin() + kept * per_labels);
    }
    ++kept;
  }
  labels.resize(size_t(kept) * per_labels);
  return kept;
}

}  // namespace wt
