#pragma once
// Pinned host buffers for batches on their way to the device (a GPU's DMA reads them without the
// driver staging a copy, so the copy in returns at once and overlaps the host's next reads). The
// reading thread fills one, the rank's thread issues its copy and hands it back with the stream;
// it is reused only once an event recorded after the copy has completed, never while the device
// may still read it (the strict device refuses a source changed under its copy). The pool grows
// instead of waiting: at most two steps' loads are in flight (the executor's step ends with a
// synchronisation), so it stays a few buffers.
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include "mem/device_streams.hpp"

namespace wt {

class PinnedStaging {
 public:
  struct Buffer {
    void* ptr = nullptr;
    size_t bytes = 0;
  };
  explicit PinnedStaging(DeviceStreams& device) : device_(device) {}
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // A buffer of at least `bytes`, from the pool or new; any thread. Throws std::bad_alloc when
  // the system refuses pinned memory.
  Buffer acquire(size_t bytes);
  // The rank's thread: `buffer`'s copy was issued on `stream`; it returns to the pool once the
  // work issued there so far has completed.
  void release_after_copy(Buffer buffer, int stream);
  // A buffer no copy reads (a failed read).
  void release(Buffer buffer);
  // The rank's thread: buffers whose copies have completed go back to the pool.
  void reclaim();
  size_t buffers() const;  // allocated, in the pool or in flight
  // Test only: a buffer goes back to the pool as soon as its copy is issued (the bug the strict
  // device must catch: the next batch overwrites it before the device has read it).
  void plant_early_release(bool on) { early_release_ = on; }

 private:
  DeviceStreams& device_;
  mutable std::mutex mutex_;
  std::vector<Buffer> free_;
  std::vector<std::pair<Buffer, StreamEvent>> in_flight_;
  size_t allocated_ = 0;
  bool early_release_ = false;
};

}  // namespace wt
