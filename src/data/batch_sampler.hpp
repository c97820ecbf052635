#pragma once
// Which dataset rows make up each batch. Stateless from the caller's point of view: the rows of
// (epoch, batch, part) depend only on the constructor arguments, so a checkpoint only stores a
// DataCursor and every rank computes its own shard without communication.
#include <cstdint>
#include <mutex>
#include <vector>

namespace wt {

// What a checkpoint stores: the next global batch to load.
struct DataCursor {
  int64_t epoch = 0;
  int64_t batch = 0;
  bool operator==(const DataCursor& o) const { return epoch == o.epoch && batch == o.batch; }
  bool operator!=(const DataCursor& o) const { return !(*this == o); }
};

class BatchSampler {
 public:
  // drop_last semantics: an epoch is floor(dataset_size / global_batch) full batches; the
  // remainder of each epoch's permutation is skipped. Throws std::invalid_argument if
  // global_batch < 1 or global_batch > dataset_size.
  BatchSampler(int64_t dataset_size, int64_t global_batch, uint64_t seed, bool shuffle);

  int64_t dataset_size() const { return size_; }
  int64_t global_batch() const { return global_batch_; }
  int64_t batches_per_epoch() const { return size_ / global_batch_; }

  // Rows of part p of P of global batch b in epoch e: entries [p*B/P, (p+1)*B/P) of that batch's
  // slice of the epoch's permutation (a seeded Fisher-Yates shuffle, identity if !shuffle).
  std::vector<int64_t> rows(int64_t epoch, int64_t batch, int part, int parts) const;
  // Number of rows rows(..., part, parts) returns.
  int64_t part_size(int part, int parts) const;

  // The cursor after `c`, rolling over to the next epoch.
  DataCursor advance(DataCursor c) const;

 private:
  void ensure_epoch(int64_t epoch) const;  // caller holds mutex_

  int64_t size_, global_batch_;
  uint64_t seed_;
  bool shuffle_;
  // The current epoch's permutation, recomputed when another epoch is asked for. Guarded so one
  // sampler may serve a loader's background thread and the caller at once.
  mutable std::mutex mutex_;
  mutable int64_t cached_epoch_ = -1;
  mutable std::vector<int64_t> permutation_;
};

}  // namespace wt
