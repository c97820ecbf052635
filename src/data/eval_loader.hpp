#pragma once
// Sequential pass over an evaluation split: global batches of `global_batch` rows in file order
// (the last one may be short, nothing is dropped), each split into `parts` shards so every rank
// reads only its own rows. Reads synchronously; evaluation is not on the training hot path.
#include <cstdint>
#include <vector>

#include "data/dataset_reader.hpp"
#include "tensor/tensor.hpp"

namespace wt {

// Rows [start + p*n/P, start + (p+1)*n/P) with n = min(count, size - start): part p of P of the
// eval batch that starts at `start`. May be empty when n < P.
std::vector<int64_t> eval_rows(int64_t size, int64_t start, int64_t count, int part, int parts);

class EvalLoader {
 public:
  // Batches come from `memory` (the device's).
  EvalLoader(DatasetReader& reader, CachingAllocator& memory, int64_t global_batch, int part,
             int parts);

  // Number of global batches in one pass (ceil(size / global_batch)).
  int64_t batches() const;
  // Reads this part's shard of the next batch (possibly 0 rows: every rank still takes part in
  // the same number of batches, so collective reductions line up). False after the last batch.
  bool next(Tensor& inputs, std::vector<int32_t>& labels);
  void reset() { next_start_ = 0; }

  // Samples with a NaN or Inf input value are counted; with `drop` they are also left out of
  // the batches (failure.on_nonfinite = "skip"), so they never reach the accuracy.
  void set_drop_nonfinite(bool drop) { drop_nonfinite_ = drop; }
  int64_t nonfinite_samples() const { return nonfinite_samples_; }
  int64_t nonfinite_values() const { return nonfinite_values_; }

 private:
  DatasetReader& reader_;
  CachingAllocator& memory_;
  int64_t global_batch_;
  int part_, parts_;
  // Counts the staged rows' non-finite values; drops those rows when asked. Returns rows kept.
  int64_t screen_nonfinite(int64_t rows, int64_t per_sample, std::vector<int32_t>& labels);

  int64_t next_start_ = 0;
  bool drop_nonfinite_ = false;
  int64_t nonfinite_samples_ = 0, nonfinite_values_ = 0;
  std::vector<float> staged_;  // host rows, screened before they go to the device
};

}  // namespace wt
