#pragma once
// Hands out this rank's shard of each training batch, in order, rolling over epochs. With
// preload on, the next shard is read on a background thread while the caller computes
// (ScaleDNN's preloading). At most two batches exist at a time: the one the caller holds and
// the one being read.
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "data/batch_sampler.hpp"
#include "data/dataset_reader.hpp"
#include "tensor/tensor.hpp"

namespace wt {

class BatchLoader {
 public:
  // `reader` and `sampler` must outlive the loader. part/parts: this rank's shard of every
  // global batch (see BatchSampler::rows).
  BatchLoader(DatasetReader& reader, BatchSampler& sampler, int part, int parts, bool preload);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // Continue from `cursor` (e.g. a checkpoint's); drops any batch read ahead.
  void seek(DataCursor cursor);
  // The batch the next call to next() returns.
  DataCursor cursor() const { return cursor_; }

  // Returns the shard of the batch at cursor(), as a fresh tensor [n, sample_shape...] of
  // normalised floats and its n labels, and advances the cursor. The tensor is the caller's:
  // the loader never writes into it again, so it may be kept (e.g. saved for backward) for as
  // long as needed. Allocation happens here, on the caller's thread, never on the reader thread.
  void next(Tensor& inputs, std::vector<int32_t>& labels);

 private:
  struct Pending {
    DataCursor cursor;
    Tensor inputs;
    std::vector<int32_t> labels;
    std::thread worker;
    std::exception_ptr error;
    bool active = false;
  };
  void start_read(DataCursor cursor);  // into pending_, on a thread if preloading
  void finish_read();                  // waits for pending_; rethrows a read error
  void read_shard(DataCursor cursor, Tensor& inputs, std::vector<int32_t>& labels);

  DatasetReader& reader_;
  BatchSampler& sampler_;
  int part_, parts_;
  bool preload_;
  DataCursor cursor_;
  Pending pending_;
};

}  // namespace wt
