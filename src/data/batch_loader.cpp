#include "data/batch_loader.hpp"

#include <stdexcept>

namespace wt {

BatchLoader::BatchLoader(DatasetReader& reader, BatchSampler& sampler, int part, int parts,
                         bool preload)
    : reader_(reader), sampler_(sampler), part_(part), parts_(parts), preload_(preload) {
  if (sampler_.dataset_size() != reader_.size())
    throw std::invalid_argument("sampler built for " + std::to_string(sampler_.dataset_size()) +
                                " samples, dataset split has " + std::to_string(reader_.size()));
  sampler_.part_size(part_, parts_);  // validates part/parts
}

BatchLoader::~BatchLoader() {
  if (pending_.worker.joinable()) pending_.worker.join();
}

void BatchLoader::seek(DataCursor cursor) {
  if (cursor.epoch < 0 || cursor.batch < 0 || cursor.batch >= sampler_.batches_per_epoch())
    throw std::out_of_range("data cursor (epoch " + std::to_string(cursor.epoch) + ", batch " +
                            std::to_string(cursor.batch) + ") outside an epoch of " +
                            std::to_string(sampler_.batches_per_epoch()) + " batches");
  if (pending_.worker.joinable()) pending_.worker.join();
  pending_.active = false;
  pending_.error = nullptr;
  cursor_ = cursor;
}

void BatchLoader::read_shard(DataCursor cursor, Tensor& inputs, std::vector<int32_t>& labels) {
  const std::vector<int64_t> rows = sampler_.rows(cursor.epoch, cursor.batch, part_, parts_);
  labels.resize(rows.size() * size_t(reader_.labels_per_sample()));
  reader_.read(rows, inputs.data(), labels.data());
}

void BatchLoader::start_read(DataCursor cursor) {
  Shape shape = reader_.sample_shape();
  shape.insert(shape.begin(), sampler_.part_size(part_, parts_));
  pending_.cursor = cursor;
  pending_.inputs = Tensor::empty(shape);
  pending_.error = nullptr;
  pending_.active = true;
  if (!preload_) {
    read_shard(cursor, pending_.inputs, pending_.labels);
    return;
  }
  // The thread only touches the reader (which serialises HDF5 through hdf5_mutex()), the
  // sampler (internally locked) and pending_'s buffers; no Kokkos, no allocation.
  pending_.worker = std::thread([this, cursor] {
    try {
      read_shard(cursor, pending_.inputs, pending_.labels);
    } catch (...) {
      pending_.error = std::current_exception();
    }
  });
}

void BatchLoader::finish_read() {
  if (pending_.worker.joinable()) pending_.worker.join();
  if (pending_.error) {
    std::exception_ptr error = pending_.error;
    pending_.error = nullptr;
    pending_.active = false;
    std::rethrow_exception(error);
  }
}

void BatchLoader::next(Tensor& inputs, std::vector<int32_t>& labels) {
  if (!pending_.active || pending_.cursor != cursor_) {
    if (pending_.worker.joinable()) pending_.worker.join();
    start_read(cursor_);
  }
  finish_read();
  inputs = std::move(pending_.inputs);
  labels.swap(pending_.labels);
  pending_.inputs = Tensor();
  pending_.active = false;
  cursor_ = sampler_.advance(cursor_);
  if (preload_) start_read(cursor_);
}

}  // namespace wt
