#pragma once
// The BatchSource for training: global batch `sequence` is batch (sequence mod batches/epoch) of
// epoch (sequence div batches/epoch) in the sampler's seeded permutation, and each rank reads only
// its own part's rows from the HDF5 file (ScaleDNN: no master scatters data). With preload on, the
// batch the rank will most likely ask for next (same part, next sequence) is read on a background
// thread while the current one computes. The thread lives as long as the source: starting one per
// batch cost more than the read itself once rows come from a memory map.
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "data/batch_sampler.hpp"
#include "data/dataset_reader.hpp"
#include "exec/batch_source.hpp"

namespace wt {

class DatasetBatchSource : public BatchSource {
 public:
  DatasetBatchSource(DatasetReader& reader, const BatchSampler& sampler, int64_t global_batch,
                     bool preload);
  ~DatasetBatchSource() override;
  int64_t global_batch() const override { return global_batch_; }
  int64_t batches_per_epoch() const { return sampler_.batches_per_epoch(); }
  void fetch(int64_t sequence, int part, int parts, Tensor& inputs,
             std::vector<int32_t>& labels) override;
  // Finishes any background read (before other code touches HDF5, e.g. evaluation).
  void quiesce();

 private:
  struct Loaded {
    int64_t sequence = -1;
    int part = -1, parts = -1;
    Tensor inputs;
    std::vector<int32_t> labels;
  };
  Loaded read(int64_t sequence, int part, int parts);
  void preload_loop();
  DatasetReader& reader_;
  const BatchSampler& sampler_;
  int64_t global_batch_;
  bool preload_;

  // Preload thread state, guarded by mutex_: a request is posted, the thread reads it into
  // `next_` (or records the error) and clears `busy_`.
  std::mutex mutex_;
  std::condition_variable changed_;
  bool busy_ = false, ready_ = false, stop_ = false;
  Loaded request_, next_;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace wt
