#pragma once
// The BatchSource for training: global batch `sequence` is batch (sequence mod batches/epoch) of
// epoch (sequence div batches/epoch) in the sampler's seeded permutation, and each rank reads only
// its own part's rows from the HDF5 file (ScaleDNN: no master scatters data). With preload on, a
// background thread reads the planned requests (the next step's LoadBatch instructions, from the
// executor) in order while the current step computes; a fetch of a planned request is a hit,
// anything else a miss, read on the spot. The thread lives as long as the source: starting one
// per batch cost more than the read itself once rows come from a memory map. At most one step's
// planned loads are held ahead.
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "data/batch_sampler.hpp"
#include "data/batch_source.hpp"
#include "data/dataset_reader.hpp"

namespace wt {

class DatasetBatchSource : public BatchSource {
 public:
  // Batches come from `memory` (the device's; the preload thread allocates too).
  DatasetBatchSource(DatasetReader& reader, CachingAllocator& memory, const BatchSampler& sampler,
                     int64_t global_batch, bool preload);
  ~DatasetBatchSource() override;
  DatasetBatchSource(const DatasetBatchSource&) = delete;
  DatasetBatchSource& operator=(const DatasetBatchSource&) = delete;
  int64_t global_batch() const override { return global_batch_; }
  int64_t batches_per_epoch() const { return sampler_.batches_per_epoch(); }
  void fetch(const BatchRequest& request, Tensor& inputs, std::vector<int32_t>& labels,
             int stream = 1) override;
  // The same rows in host memory, for a master that sends them on (ScatterBatchSource): no device
  // round trip, whose synchronisation would wait for transfers the other ranks cannot start while
  // they wait for the master's scatter.
  void fetch_host(const BatchRequest& request, std::vector<float>& inputs, Shape& shape,
                  std::vector<int32_t>& labels);
  void plan(const std::vector<BatchRequest>& next) override;
  PreloadStats preload_stats() const override;
  std::string name() const override { return reader_.path(); }
  // Finishes the planned reads (before other code uses HDF5 heavily, e.g. evaluation).
  void quiesce();

 private:
  struct Loaded {
    BatchRequest request;
    Tensor inputs;
    // A device that host code cannot write (the strict device): the rows in host memory, staged
    // into `inputs` by fetch() (device work), as a GPU stages a pinned buffer.
    std::vector<float> staged;
    Shape shape;
    std::vector<int32_t> labels;
    std::exception_ptr error;  // the read failed: the fetch of this request rethrows it
  };
  Loaded read(const BatchRequest& request);
  Loaded take(const BatchRequest& request);  // the preloaded batch, or read now
  Tensor allocate_inputs(const Shape& shape, int stream = 1);
  void preload_loop();
  bool pending(const BatchRequest& request) const;  // planned and not yet read (mutex_ held)

  DatasetReader& reader_;
  CachingAllocator& memory_;
  int job_;  // the job whose memory account the batches go to: the creator's
  const BatchSampler& sampler_;
  int64_t global_batch_;
  bool preload_;

  // Guarded by mutex_: the plan's unread requests, the one being read, the ones read.
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<BatchRequest> planned_;
  bool reading_ = false, stop_ = false;
  BatchRequest current_;
  std::vector<Loaded> ready_;
  PreloadStats stats_;
  std::thread thread_;
};

}  // namespace wt
