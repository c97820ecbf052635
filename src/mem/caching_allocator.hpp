#pragma once
// The device's stream-ordered caching allocator with a budget. On a CPU rank the "device" is
// host memory and the budget (device.memory_limit) is enforced here, so out-of-memory behaviour
// is real and testable. Best fit over blocks that split and coalesce (block_pool.hpp).
//
// Stream order (PyTorch's caching allocator, Waterwave's free lists): a block freed on a stream
// is reusable at once on that stream; another stream gets it only after an event recorded at
// the free has completed or a synchronisation. A block read on other streams (record_use) waits
// for events on those too. An allocation searches: the stream's own freed blocks; blocks known
// to be safe for every stream; fresh memory within the budget (after returning cached segments
// to the system); then, only if that fails, it synchronises the device (counted as a forced
// sync) and tries again before throwing OutOfMemory (exit status 3).
//
// Segments, as PyTorch's allocator: requests under 1 MiB are cut from shared 2 MiB segments,
// larger ones from segments rounded up to a multiple of 2 MiB, so a training step after
// warm-up makes no system allocation. Under a budget (device.memory_limit) segments are the
// block's own size: the budget bounds reserved bytes exactly, and rounding's unusable tails
// never turn a run that fits into a failure.
// Cached segments go back to the system (a synchronising cudaFree on a GPU) only when an
// allocation would otherwise fail, or when reserved bytes would pass the release threshold.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "mem/block_pool.hpp"
#include "mem/device_streams.hpp"

namespace wt {

struct MemoryStats {
  size_t in_use = 0;    // bytes handed out and not yet released
  size_t reserved = 0;  // bytes held from the system (in use + cached)
  size_t peak_in_use = 0;
  size_t peak_reserved = 0;
  size_t allocations = 0;         // calls to allocate()
  size_t system_allocations = 0;  // calls that had to go to the system
  size_t forced_syncs = 0;        // device synchronisations forced by memory pressure
  size_t largest_free = 0;        // the largest cached block
  // Cached bytes that the largest cached block does not cover, as a fraction of all cached
  // bytes: 0 when the cache is one block (or empty), near 1 when it is many slivers.
  double fragmentation() const;
};

// When a block freed on one stream may serve another (set_cross_stream_reuse).
enum class CrossStreamReuse {
  // Once its events show the streams that used it have finished with it (PyTorch's allocator):
  // the default.
  AfterEvents,
  // Only after a synchronisation: sync_and_coalesce at a co-located pair's boundary, or one forced
  // by memory pressure (Waterwave's allocator, §4.2 Listing 1: "no-synced" free lists per stream,
  // one "synced" set, no event queries).
  AfterSync,
};

// One job's share of the budget.
struct JobMemory {
  size_t in_use = 0;
  size_t peak_in_use = 0;
};

// Exit status 3. The budget's own message, or one naming what could not be allocated (host
// memory exhausted, or a caller adding which tensor or dataset it was for).
class OutOfMemory : public std::runtime_error {
 public:
  OutOfMemory(size_t requested, size_t in_use, size_t limit);
  explicit OutOfMemory(const std::string& message, size_t requested_bytes = 0)
      : std::runtime_error(message), requested(requested_bytes) {}
  size_t requested;
};

class CachingAllocator {
 public:
  // limit_bytes == 0 means no budget. `events` (default: the host's, where work is done when
  // issued) must outlive the allocator.
  explicit CachingAllocator(size_t limit_bytes = 0, DeviceStreams* events = nullptr);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Returns 64-byte aligned memory of at least `bytes` for work on `stream`, counted for the
  // current job; `*granted`, when given, receives the block size.
  void* allocate(size_t bytes, int stream, size_t* granted = nullptr);
  // Frees on `stream` (the block knows its size), stream ordered: later work on `stream` may have
  // it at once; other streams once the free's point has run, and once every stream that used it
  // (record_use) has run the work issued before the free.
  void release(void* ptr, int stream);
  // `ptr`'s block is read or written by work on `stream` as well (a tensor handed to another
  // stream): its reuse will wait for that stream too.
  void record_use(void* ptr, int stream);
  // Names the live block at `ptr` in the device's diagnostics (a tensor's label).
  void name_block(const void* ptr, const std::string& name) {
    if (device_only_) events_->name_memory(ptr, 0, name);
  }
  // Marks every freed block safe for every stream after a device synchronisation and merges
  // neighbours (Waterwave's SyncAndCoalesce). synchronize_device = false is a planted bug for
  // tests (the blocks marked safe while other streams may still use them), nothing else.
  void sync_and_coalesce(bool synchronize_device = true);
  void set_cross_stream_reuse(CrossStreamReuse reuse) { cross_stream_reuse_ = reuse; }
  CrossStreamReuse cross_stream_reuse() const { return cross_stream_reuse_; }

  // The job that this thread's allocations count towards until the scope ends (jobs of one rank
  // take turns on its thread; a job's helper thread, like the preloader, opens its own scope).
  class JobScope {
   public:
    JobScope(CachingAllocator& allocator, int job);
    ~JobScope();
    JobScope(const JobScope&) = delete;
    JobScope& operator=(const JobScope&) = delete;

   private:
    int previous_;
  };
  // The job this thread's allocations count towards now (0 outside any scope).
  static int current_job();

  // Device memory that host code must not touch (strict, cuda): tensors refuse host access
  // outside device work (tensor/host_access.hpp) and copy through the device's staged copies.
  void set_device_only(bool device_only) { device_only_ = device_only; }
  bool device_only() const { return device_only_; }
  // The strict device: freed blocks are filled with NaN (at the free's point in its stream)
  // until reused, so a read of freed or uninitialised memory shows.
  void set_poison_freed(bool poison) { poison_freed_ = poison; }
  // The device this allocator's memory belongs to: its copies, fills and events.
  DeviceStreams& device() { return *events_; }
  // Waits for every stream's issued work (a staged copy or a blocking kernel does this first).
  void synchronize_device() { events_->synchronize(); }

  void set_limit(size_t limit_bytes);
  size_t limit() const { return limit_; }
  // A job's own share of the budget: its allocations beyond it throw OutOfMemory naming the job's
  // share (0: none, only the device's budget).
  void set_job_limit(int job, size_t limit_bytes);
  // Reserved bytes above which cached segments are returned before the cache grows (0 = none:
  // only when an allocation would fail).
  void set_release_threshold(size_t bytes);
  size_t release_threshold() const { return release_threshold_; }
  // Cached blocks larger than this are never split for a smaller request (0 = no limit).
  void set_max_split_bytes(size_t bytes);
  size_t max_split_bytes() const;
  MemoryStats stats() const;
  JobMemory job_stats(int job) const;
  void reset_peaks();
  // Synchronises the device (so frees still queued at their streams' points take effect), then
  // returns every cached block, as whole segments, to the system.
  void empty_cache();
  // Called after every allocate/release, under the allocator's lock, with the new statistics
  // and every job's account (the traces' memory samples; each job's trace adds its own).
  using Observer = std::function<void(const MemoryStats&, const std::map<int, JobMemory>&)>;
  int add_observer(Observer observer);  // returns a handle for remove_observer
  void remove_observer(int handle);     // no call is in flight once this returns

  // Whole-step graphs (device.cuda_graphs): a graph replays its kernels on the addresses they
  // were captured with, so the step's tensors must get those addresses every step. While a step
  // is captured, the calling thread's allocations come from a pool of the graph's own, decided
  // without event queries (a block freed on its stream serves that stream again, and another once
  // a captured Record and Wait order the free first: graph_record, graph_wait; one used on other
  // streams waits for the step's end) and recorded in order; while one is replayed, the
  // n-th allocation gets the capture's n-th address (same size and stream, else std::logic_error).
  // The graph's memory serves nothing else, as PyTorch's private graph pools. A device keeps two
  // graphs (device_backend.hpp), each with its own record of addresses, cut from the one pool:
  // they run one after the other.
  void begin_graph_capture(int graph = 0);
  void begin_graph_replay(int graph = 0);
  // After the step's device work has finished (device_done), or, where the step may still run
  // (a replay the host does not wait for), once all of its work is joined into stream 0: its
  // blocks are free again (poisoned on the strict device: by the host, or on stream 0). Throws
  // std::logic_error when a tensor allocated in the step is still held.
  void end_graph_step(bool device_done = true);
  size_t graph_bytes() const;  // the tensors of the larger graph
  // The program's Record of `event` on `stream` and a Wait for it on another (the executor tells
  // them while a step is captured; no-ops otherwise): an event captured into the graph orders the
  // recording stream's work before the waiting stream's, so a block freed on the one before the
  // Record can serve the other after the Wait (a captured step cannot ask an event).
  void graph_record(int event, int stream);
  void graph_wait(int stream, int event);
  // Test only: a capture hands a block freed on one stream to another without an ordering event.
  void plant_unordered_graph_reuse(bool on) { unordered_graph_reuse_ = on; }

  // The block size a request gets (512-byte granules, then quarter-power-of-two classes).
  static size_t round_size(size_t bytes);
  // The system allocation that serves a new block of `size` (a round_size) without a budget:
  // 2 MiB for small blocks, else `size` rounded up to a multiple of 2 MiB.
  static size_t segment_size(size_t size);

 private:
  enum class GraphPhase { Off, Capturing, Replaying };
  bool in_graph() const {
    return graph_phase_ != GraphPhase::Off && std::this_thread::get_id() == graph_thread_;
  }
  void* graph_allocate(size_t size, int stream, size_t requested);
  bool graph_release(void* ptr, int stream);  // false: not the graph's
  // size: the rounded block size; requested: the bytes asked for (named in errors).
  MemBlock* find_or_reserve(size_t size, int stream, size_t requested);
  MemBlock* reserve(size_t size, size_t requested, BlockPool& pool);
  void release_cached_for(size_t bytes, size_t cap);
  void settle_pending_locked();
  void count_allocation(MemBlock* block);
  void check_job_limit(size_t size, size_t requested);  // throws OutOfMemory
  void notify_locked();                                 // the observer, with current stats
  size_t limit_;
  size_t release_threshold_ = 0;
  bool device_only_ = false;
  bool poison_freed_ = false;
  CrossStreamReuse cross_stream_reuse_ = CrossStreamReuse::AfterEvents;
  DeviceStreams* events_;
  HostStreams host_events_;
  BlockPool pool_;
  std::unordered_map<void*, MemBlock*> live_;  // allocated blocks by address
  std::vector<MemBlock*> pending_;             // freed, waiting for other streams' events
  MemoryStats stats_;
  std::map<int, JobMemory> jobs_;
  std::map<int, size_t> job_limits_;
  std::map<int, Observer> observers_;
  GraphPhase graph_phase_ = GraphPhase::Off;
  std::thread::id graph_thread_;
  BlockPool graph_pool_;
  struct GraphBlock {
    void* ptr;
    size_t size;
    int stream;
    std::vector<int> used_on;  // replaying: record_use
  };
  std::vector<GraphBlock> graph_orders_[2];  // each capture's allocations, in order
  int graph_index_ = 0;                      // the graph captured or replayed now
  std::vector<GraphBlock>& graph_order() { return graph_orders_[graph_index_]; }
  size_t graph_next_ = 0;                         // replaying: the next of graph_order()
  std::unordered_map<void*, size_t> graph_live_;  // replaying: address -> index in graph_order()
  struct HeldGraphBlock {
    void* ptr;
    size_t size;
    MemBlock* captured;  // capturing: the block, back to the graph's pool at the step's end
  };
  std::vector<HeldGraphBlock> graph_held_;  // freed, used on other streams
  // Capturing: how far each stream's work is ordered after every other stream's (a vector clock
  // per stream: other stream -> its sequence), and each recorded event's clock.
  using StreamClock = std::map<int, uint64_t>;
  std::map<int, StreamClock> graph_follows_;
  std::map<int, StreamClock> graph_event_clock_;
  bool unordered_graph_reuse_ = false;  // the planted bug
  int next_observer_ = 0;
  // Recursive: a forced synchronisation (under the lock) runs the strict device's queued frees,
  // which take it again on the same thread.
  mutable std::recursive_mutex mutex_;
};

}  // namespace wt
