#pragma once
// Where LoadBatch instructions get their data: part `part` of `parts` of global batch number
// `sequence`, counted from the start of training. Stateless by sequence number, so any schedule
// can ask for any batch, and a restart only needs the sequence number.
//
// Preloading is driven by the program (schedules are data): the executor knows exactly which
// LoadBatch instructions its rank runs in the next step and posts them with plan() as soon as the
// current step's loads are done, so a preloading source reads precisely those while the step
// computes (ScaleDNN's preloading), with no guessing.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.hpp"

namespace wt {

struct BatchRequest {
  int64_t sequence = 0;
  int part = 0;
  int parts = 1;
  bool labels_only = false;  // the inputs arrive from another stage: read the labels alone
  // When samples > 0: positions [first_sample, first_sample + samples) of the global batch
  // instead of a part (burst reads the loss's labels by runs of rows; labels only).
  int64_t first_sample = 0;
  int64_t samples = 0;
  bool operator==(const BatchRequest& o) const {
    return sequence == o.sequence && part == o.part && parts == o.parts &&
           labels_only == o.labels_only && first_sample == o.first_sample && samples == o.samples;
  }
};

// The positions [first, end) of the global batch of `batch` samples that `request` asks for.
inline std::pair<int64_t, int64_t> request_positions(const BatchRequest& request, int64_t batch) {
  if (request.samples > 0) return {request.first_sample, request.first_sample + request.samples};
  return {batch * request.part / request.parts, batch * (request.part + 1) / request.parts};
}

// Fetches that found their batch read ahead (hits) or had to read it then (misses).
struct PreloadStats {
  int64_t hits = 0;
  int64_t misses = 0;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual int64_t global_batch() const = 0;
  // inputs: [n, sample shape...] float, left empty for a labels-only request; labels: n * labels
  // per sample entries. stream: the stream that reads the batch; where host code cannot write
  // device memory (the strict device), the copy in is issued on it, asynchronously, as from a
  // GPU host's staging buffer.
  virtual void fetch(const BatchRequest& request, Tensor& inputs, std::vector<int32_t>& labels,
                     int stream = 1) = 0;
  // The requests that will be fetched next, in order; replaces an earlier plan's unread ones. A
  // source that does not preload ignores it.
  virtual void plan(const std::vector<BatchRequest>& next) { (void)next; }
  virtual PreloadStats preload_stats() const { return {}; }
  // Whole-step graphs (device.cuda_graphs): whether fetch() can copy every batch in from the same
  // place each step, and turning that on (fixed pinned buffers, one per fetch of a step, in the
  // order of the step's fetches; no event queries while fetching). A graph replays its copies
  // from the addresses they were captured with, so only such a source can feed one.
  virtual bool supports_graph_staging() const { return false; }
  virtual void set_graph_staging(bool on) { (void)on; }
  // Which of two sets of fixed buffers the step's fetches use from now on (0 or 1): a step may
  // be issued while the device still copies the last one's batch in from the other set.
  virtual void use_graph_set(int set) { (void)set; }
  // The data's name in an input error found on the device (a bad token id): its file.
  virtual std::string name() const { return "the training data"; }
};

}  // namespace wt
