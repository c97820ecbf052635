#pragma once
// The master data path ScaleDNN improves on (data.distribution = "scatter"): rank 0 reads the
// whole global batch and scatters each rank its part, as PyTorch DataParallel copies the batch to
// the master device and splits it there. The default, "shard", has each rank read its own rows
// (DatasetBatchSource). Both give every rank the same rows, so training is bitwise the same.
// Data-parallel programs only: every rank's LoadBatch is part r of N of one batch, fetched at the
// same point of the step (the fetch is a collective).
#include <memory>

#include "comm/communicator.hpp"
#include "data/batch_source.hpp"
#include "data/dataset_batch_source.hpp"
#include "mem/caching_allocator.hpp"

namespace wt {

class ScatterBatchSource : public BatchSource {
 public:
  // whole: the file's source, read on rank 0 only (a part 0 of 1 per batch, preloaded as planned).
  ScatterBatchSource(DatasetBatchSource& whole, Communicator& comm, CachingAllocator& memory);
  int64_t global_batch() const override { return whole_.global_batch(); }
  void fetch(const BatchRequest& request, Tensor& inputs, std::vector<int32_t>& labels,
             int stream = 1) override;
  void plan(const std::vector<BatchRequest>& next) override;
  PreloadStats preload_stats() const override { return whole_.preload_stats(); }
  std::string name() const override { return whole_.name(); }

 private:
  // Collective, on the first fetch: the sample shape and labels per sample, from rank 0.
  void learn_shape(const Shape& whole, int64_t labels_per_sample);
  DatasetBatchSource& whole_;
  Communicator& comm_;
  CachingAllocator& memory_;
  Shape sample_shape_;  // learnt from the first batch, broadcast by rank 0
  int64_t labels_per_sample_ = -1;
};

}  // namespace wt
