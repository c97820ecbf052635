// What the host spends on a replayed whole-step graph (device.cuda_graphs): on a GPU, a replayed
// step's host code still issues the step for its bookkeeping (the allocator, the optimizer's
// counts, the batch and labels into their fixed pinned buffers) with every launch dropped, and
// then launches the graph (exec/executor_graphs.cpp, device/graph_replay_ops.hpp). With one
// read-back per step that host time adds to the graph's device time, so it bounds how close a
// rank comes to PyTorch's back-to-back graph replays (issue 31's targets).
//
// Measured here without a GPU: a rank's real Job (deck, model, data, executor, guard) on a device
// that is the CUDA backend's host side without CUDA: device-only memory the host copies in and
// out, the host's kernels for the eager and captured steps, and in a replayed step
// GraphReplayOps and no copies or fills, as CudaDevice has them. What it leaves out is the CUDA
// API itself: cudaGraphLaunch and the read-back's copy and synchronisation (a few microseconds
// each on a GPU node). Built and run by bench/replay_host_cost.sh.
//
// The device's time per replay is a spin of DEVICE_US microseconds at the graph's launch (the host
// then waits for the read-back), so the batch preloader works beside it as it would beside a GPU;
// the host's cost is each replayed step's wall time less DEVICE_US.
//
// Usage: replay_host_cost DECK STEPS DEVICE_US [KEY=VALUE ...] [--run-dir=DIR]
//   (1 MPI rank; KEY=VALUE as wavetrain's --set; the run directory defaults to
//   /tmp/replay_host_cost/<run.name>)
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "deck/deck_parser.hpp"
#include "device/device_context.hpp"
#include "device/graph_replay_ops.hpp"
#include "device/host_backend.hpp"
#include "job/job.hpp"
#include "ops/precision.hpp"
#include "tensor/host_access.hpp"

using namespace wt;

namespace {

// Device memory in host RAM that host code may not address (so batches come in through pinned
// staging, as on a GPU), with CudaDevice's rules (cuda_device.cpp): an event recorded inside a
// graphed step is no real event and counts as complete only after the next synchronisation (the
// step's read-back), the others at once (the host's kernels have run); a replayed step's copies
// and fills are the graph's nodes, so none is made; a copy from pageable memory in a capture and
// the blocking operations (each a synchronisation) inside a graphed step are refused.
class DryStreams final : public DeviceStreams {
 public:
  using Clock = std::chrono::steady_clock;
  DryStreams(const bool& replaying, const bool& in_graph)
      : replaying_(replaying), in_graph_(in_graph) {}
  // An event outside a graph completes when the device is done with the work launched so far.
  StreamEvent record(int stream) override {
    Counts& c = counts_[stream];
    ++c.recorded;
    if (!in_graph_) c.done_at.emplace_back(c.recorded, busy_until_);
    return {stream, c.recorded};
  }
  bool completed(const StreamEvent& event) override {
    Counts& c = counts_[event.stream];
    while (!c.done_at.empty() && c.done_at.front().second <= Clock::now()) {
      c.completed = c.done_at.front().first;
      c.done_at.pop_front();
    }
    return c.completed >= event.sequence;
  }
  void wait(const StreamEvent& event) override {
    refuse_in_graph("waiting for an event");
    ++synchronizations_;
    while (!completed(event)) {
    }
  }
  void synchronize() override {
    refuse_in_graph("a device synchronisation");
    ++synchronizations_;
    while (Clock::now() < busy_until_) {
    }
    for (auto& [stream, c] : counts_) {
      c.completed = c.recorded;
      c.done_at.clear();
    }
  }
  uint64_t synchronizations() const { return synchronizations_; }
  // A graph launched now: the device runs it for `device_time` after what it runs already.
  void launch_graph(Clock::duration device_time) {
    busy_until_ = std::max(busy_until_, Clock::now()) + device_time;
  }
  bool host_addressable() const override { return false; }
  void copy_to_device_async(int stream, void* dst, const void* src, size_t bytes,
                            const char* what) override {
    if (replaying_) return;
    if (in_graph_)
      throw std::logic_error(std::string("cuda: ") + what +
                             ", a copy from pageable host memory, while a step is captured");
    DeviceStreams::copy_to_device_async(stream, dst, src, bytes, what);
  }
  void copy_from_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                              const char* what) override {
    if (!replaying_) DeviceStreams::copy_to_device_async(stream, dst, src, bytes, what);
  }
  void copy_to_pinned_async(int stream, void* dst, const void* src, size_t bytes,
                            const char* what) override {
    if (!replaying_) DeviceStreams::copy_to_pinned_async(stream, dst, src, bytes, what);
  }
  void fill_async(int stream, float* dst, size_t count, float value, const char* what) override {
    if (!replaying_) DeviceStreams::fill_async(stream, dst, count, value, what);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    synchronize();
    DeviceStreams::copy_to_host(dst, src, bytes);
  }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    synchronize();
    DeviceStreams::copy_to_device(dst, src, bytes);
  }
  void copy_on_device(void* dst, const void* src, size_t bytes) override {
    synchronize();
    DeviceStreams::copy_on_device(dst, src, bytes);
  }
  void fill(float* dst, size_t count, float value) override {
    synchronize();
    DeviceStreams::fill(dst, count, value);
  }

 private:
  struct Counts {
    uint64_t recorded = 0, completed = 0;
    std::deque<std::pair<uint64_t, Clock::time_point>> done_at;  // recorded, not yet seen done
  };
  void refuse_in_graph(const char* what) const {
    if (in_graph_)
      throw std::logic_error(std::string("cuda: ") + what +
                             " inside a step captured or replayed as a graph");
  }
  const bool& replaying_;
  const bool& in_graph_;
  std::map<int, Counts> counts_;  // by stream
  uint64_t synchronizations_ = 0;
  Clock::time_point busy_until_{};
};

// CudaDevice's host side: kernels and program events from the host device, launches dropped
// while a graph replays.
class DryReplayBackend final : public DeviceBackend {
 public:
  explicit DryReplayBackend(Precision precision)
      : host_(precision), streams_(replaying_, in_graph_), replay_(host_.kernels()) {}
  const char* name() const override { return "dry-replay"; }
  DeviceStreams& streams() override { return streams_; }
  const OpsBackend& ops(int stream) override {
    return replaying_ ? static_cast<const OpsBackend&>(replay_) : host_.ops(stream);
  }
  const OpsBackend& kernels() override { return ops(0); }
  void launch(int, DeviceWork work) override {
    if (work.ready) throw std::logic_error("cuda: device work with a host-side readiness test");
    DeviceWorkScope device_work;
    work.run();
  }
  void run_on_device(const std::function<void()>& work,
                     const std::function<bool()>& progress) override {
    {
      DeviceWorkScope device_work;
      work();
    }
    streams_.synchronize();
    if (progress)
      while (progress()) {
      }
  }
  bool counts_synchronizations() const override { return true; }
  uint64_t synchronizations() const override { return streams_.synchronizations(); }
  std::unique_ptr<ProgramEvents> program_events(int count, void* comm_stream) override {
    return host_.program_events(count, comm_stream);
  }
  bool supports_graphs() const override { return true; }
  void begin_graph_capture(int) override { in_graph_ = true; }
  void end_graph_capture() override { in_graph_ = false; }
  void begin_graph_replay(int) override { replaying_ = in_graph_ = true; }
  // The graph's launch: the device is busy with it for `device_us` after the work before it; the
  // host finds that out when it waits for an event recorded after the launch (a spin, not a sleep,
  // whose wake-up would add tens of microseconds).
  void end_graph_replay() override {
    replaying_ = in_graph_ = false;
    streams_.launch_graph(device_time_);
  }
  void set_device_time(double us) {
    device_time_ = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double, std::micro>(us));
  }

 private:
  std::chrono::steady_clock::duration device_time_{0};
  bool replaying_ = false, in_graph_ = false;
  HostBackend host_;
  DryStreams streams_;
  GraphReplayOps replay_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Args {
  std::string deck, run_dir;
  int64_t steps = 0;
  double device_us = 0;
  std::vector<std::string> overrides;
};

// false (with the usage printed) when the command line is not one.
bool parse_args(int argc, char** argv, Args& args) {
  if (argc >= 4) {
    args.deck = argv[1];
    args.steps = std::atoll(argv[2]);
    args.device_us = std::atof(argv[3]);
    for (int a = 4; a < argc; ++a) {
      const std::string arg = argv[a];
      if (arg.rfind("--run-dir=", 0) == 0)
        args.run_dir = arg.substr(10);
      else
        args.overrides.push_back(arg);
    }
  }
  if (args.steps >= 4 && args.device_us >= 0) return true;
  std::fprintf(stderr,
               "usage: replay_host_cost DECK STEPS DEVICE_US [KEY=VALUE ...] [--run-dir=DIR]\n"
               "  STEPS >= 4 (an eager step, the two captures, then replays)\n");
  return false;
}

int run(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) return 2;
  args.overrides.push_back("device.cuda_graphs=true");
  args.overrides.push_back("device.kind=\"host\"");
  const RunConfig config = parse_deck(args.deck, args.overrides);
  JobOptions options;
  options.run_dir =
      args.run_dir.empty() ? "/tmp/replay_host_cost/" + config.run.name : args.run_dir;
  options.quiet = true;
  options.overwrite = true;
  options.max_steps = args.steps;
  auto backend = std::make_unique<DryReplayBackend>(parse_precision(config.train.precision));
  backend->set_device_time(args.device_us);
  DeviceContext device(std::move(backend), DeviceKind::Host, 0);
  MpiCommunicator comm;
  Job job(config, options, device, comm.rank(), comm.size());
  job.start(comm);
  // Driven as the training loop drives a job alone with no observer (app/training_loop.cpp): a
  // step that may run on (device.overlap_steps) is collected after the next step's launch. A
  // step's time runs from the last collection to its own, so the steps' times add up to the run's.
  using Clock = std::chrono::steady_clock;
  std::vector<double> step_us;  // per replayed step
  double eager_us = 0;
  uint64_t replay_synchronizations = 0;
  Clock::time_point last = Clock::now();
  uint64_t synchronizations_at_last = device.backend().synchronizations();
  auto collect = [&](int64_t step) {
    job.collect_step(step);
    const Clock::time_point now = Clock::now();
    const double us = std::chrono::duration<double, std::micro>(now - last).count();
    if (step == 0) eager_us = us;
    if (step >= 3) {  // after the eager step and the captures (two with overlap)
      step_us.push_back(us);
      replay_synchronizations += device.backend().synchronizations() - synchronizations_at_last;
    }
    last = now;
    synchronizations_at_last = device.backend().synchronizations();
  };
  int64_t running = -1;
  for (int64_t step = 0; step < args.steps; ++step) {
    job.launch_step(step);
    if (running >= 0) collect(std::exchange(running, -1));
    if (job.may_run_on() && step + 1 < args.steps)
      running = step;
    else
      collect(step);
  }
  const int64_t captures = job.executor().graph_captures();  // one per pinned set in use
  if (captures < 1 || job.executor().graph_replays() != args.steps - 1 - captures) {
    std::fprintf(stderr, "replay_host_cost: %lld replays of %lld steps: graphs were refused\n",
                 (long long)job.executor().graph_replays(), (long long)args.steps);
    return 1;
  }
  const double step = median(step_us);
  std::printf(
      "{\"deck\": \"%s\", \"batch\": %lld, \"replays\": %lld, \"device_us\": %.1f, "
      "\"replay_step_us_median\": %.1f, \"replay_host_us_median\": %.1f, "
      "\"replay_host_us_min\": %.1f, \"device_share\": %.3f, "
      "\"synchronizations_per_replay\": %.2f, \"overlapped_steps\": %lld, "
      "\"eager_step_us\": %.1f}\n",
      config.run.name.c_str(), (long long)config.train.global_batch, (long long)step_us.size(),
      args.device_us, step, step - args.device_us,
      *std::min_element(step_us.begin(), step_us.end()) - args.device_us, args.device_us / step,
      double(replay_synchronizations) / step_us.size(),
      (long long)job.executor().overlapped_steps(), eager_us);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  Kokkos::initialize();
  int rc = 1;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "replay_host_cost: %s\n", e.what());
  }
  Kokkos::finalize();
  MPI_Finalize();
  return rc;
}
