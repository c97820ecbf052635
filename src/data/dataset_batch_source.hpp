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
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "data/batch_sampler.hpp"
#include "data/batch_source.hpp"
#include "data/dataset_reader.hpp"
#include "data/pinned_staging.hpp"
#include "device/device_context.hpp"

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
  bool supports_graph_staging() const override { return staging_ != nullptr; }
  void set_graph_staging(bool on) override;
  void use_graph_set(int set) override { fixed_set_ = set & 1; }
  std::string name() const override { return reader_.path(); }
  // Finishes the planned reads (before other code uses HDF5 heavily, e.g. evaluation).
  void quiesce();
  // Where host code cannot write device memory (strict, cuda): uint8 batches travel as their
  // raw bytes, a quarter of the floats, through pinned buffers, and `device`'s kernels normalise
  // them on the loading stream (the reader's table, the host's floats bit for bit). Without it
  // the host normalises and the floats travel (pinned all the same).
  void dequantize_on(DeviceContext& device);
  const PinnedStaging* staging() const { return staging_.get(); }  // tests
  PinnedStaging* staging() { return staging_.get(); }

 private:
  struct Loaded {
    BatchRequest request;
    Tensor inputs;
    // A device that host code cannot write (strict, cuda): the rows in a pinned buffer, copied
    // into `inputs` by fetch() on the loading stream; raw uint8 bytes when `raw_u8`, else floats.
    PinnedStaging::Buffer pinned;
    bool raw_u8 = false;
    Shape shape;
    std::vector<int32_t> labels;
    std::exception_ptr error;  // the read failed: the fetch of this request rethrows it
  };
  Loaded read(const BatchRequest& request);
  Loaded take(const BatchRequest& request);  // the preloaded batch, or read now
  Tensor allocate_inputs(const Shape& shape, int stream = 1);
  // Issues the copy of `l`'s pinned rows into l.inputs (and their normalisation) on `stream`.
  void copy_in(Loaded& l, int stream);
  // Graph staging: moves `l`'s rows into the step's next fixed buffer (l.pinned becomes it).
  void into_fixed_buffer(Loaded& l);
  void drop(Loaded& l);  // gives back its pinned buffer, if any (a batch never fetched)
  void preload_loop();
  bool pending(const BatchRequest& request) const;  // planned and not yet read (mutex_ held)

  DatasetReader& reader_;
  CachingAllocator& memory_;
  int job_;  // the job whose memory account the batches go to: the creator's
  const BatchSampler& sampler_;
  int64_t global_batch_;
  bool preload_;
  std::unique_ptr<PinnedStaging> staging_;  // device-only memory: the rows' way in
  DeviceContext* device_ = nullptr;         // dequantize_on()
  Tensor u8_table_;                         // the reader's table, on the device
  bool graph_staging_ = false;
  // Graph staging: per set, per fetch of a step, never freed.
  std::vector<PinnedStaging::Buffer> fixed_[2];
  int fixed_set_ = 0;
  size_t fixed_next_ = 0;  // the step's next fetch

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
