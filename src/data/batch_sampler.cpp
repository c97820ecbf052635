#include "data/batch_sampler.hpp"

#include <numeric>
#include <stdexcept>
#include <string>

#include "tensor/rng.hpp"

namespace wt {

BatchSampler::BatchSampler(int64_t dataset_size, int64_t global_batch, uint64_t seed, bool shuffle)
    : size_(dataset_size), global_batch_(global_batch), seed_(seed), shuffle_(shuffle) {
  if (global_batch_ < 1) throw std::invalid_argument("global batch must be >= 1");
  if (global_batch_ > size_)
    throw std::invalid_argument("global batch " + std::to_string(global_batch_) +
                                " is larger than the dataset (" + std::to_string(size_) +
                                " samples)");
}

void BatchSampler::ensure_epoch(int64_t epoch) const {
  if (epoch == cached_epoch_) return;
  permutation_.resize(static_cast<size_t>(size_));
  std::iota(permutation_.begin(), permutation_.end(), int64_t(0));
  if (shuffle_) {
    // Fisher-Yates with our own generator: std::shuffle's algorithm is implementation-defined,
    // and the order must be identical on every rank, compiler and restart.
    Rng rng = Rng(seed_).fork(static_cast<uint64_t>(epoch) + 1);
    for (int64_t i = size_ - 1; i > 0; --i) {
      const int64_t j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
      std::swap(permutation_[size_t(i)], permutation_[size_t(j)]);
    }
  }
  cached_epoch_ = epoch;
}

int64_t BatchSampler::part_size(int part, int parts) const {
  if (parts < 1 || part < 0 || part >= parts)
    throw std::invalid_argument("part " + std::to_string(part) + " of " + std::to_string(parts));
  return (part + 1) * global_batch_ / parts - part * global_batch_ / parts;
}

std::vector<int64_t> BatchSampler::rows(int64_t epoch, int64_t batch, int part, int parts) const {
  const int64_t n = part_size(part, parts);
  if (epoch < 0 || batch < 0 || batch >= batches_per_epoch())
    throw std::out_of_range("batch " + std::to_string(batch) + " of epoch " +
                            std::to_string(epoch) + " (an epoch has " +
                            std::to_string(batches_per_epoch()) + " batches)");
  const int64_t first = batch * global_batch_ + part * global_batch_ / parts;
  std::lock_guard<std::mutex> lock(mutex_);
  ensure_epoch(epoch);
  return std::vector<int64_t>(permutation_.begin() + first, permutation_.begin() + first + n);
}

DataCursor BatchSampler::advance(DataCursor c) const {
  if (++c.batch >= batches_per_epoch()) {
    c.batch = 0;
    ++c.epoch;
  }
  return c;
}

}  // namespace wt
