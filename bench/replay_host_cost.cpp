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
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "deck/deck_parser.hpp"
#include "device/device_context.hpp"
#include "device/graph_replay_ops.hpp"
#include "device/host_backend.hpp"
#include "job/job.hpp"
#include "tensor/host_access.hpp"

using namespace wt;

namespace {

// Device memory in host RAM that host code may not address (so batches come in through pinned
// staging, as on a GPU); a replayed step's copies are the graph's copy nodes, so none is made.
// Events as CudaDevice has them: one recorded inside a graphed step is no real event and counts
// as complete only after the next synchronisation (the step's read-back); the others at once (the
// host's kernels have run).
class DryStreams final : public DeviceStreams {
 public:
  DryStreams(const bool& replaying, const bool& in_graph)
      : replaying_(replaying), in_graph_(in_graph) {}
  StreamEvent record(int stream) override {
    Counts& c = counts_[stream];
    ++c.recorded;
    if (!in_graph_) c.completed = c.recorded;
    return {stream, c.recorded};
  }
  bool completed(const StreamEvent& event) override {
    return counts_[event.stream].completed >= event.sequence;
  }
  void synchronize() override {
    for (auto& [stream, c] : counts_) c.completed = c.recorded;
  }
  bool host_addressable() const override { return false; }
  void copy_to_device_async(int stream, void* dst, const void* src, size_t bytes,
                            const char* what) override {
    if (!replaying_) DeviceStreams::copy_to_device_async(stream, dst, src, bytes, what);
  }
  void fill_async(int stream, float* dst, size_t count, float value, const char* what) override {
    if (!replaying_) DeviceStreams::fill_async(stream, dst, count, value, what);
  }

 private:
  struct Counts {
    uint64_t recorded = 0, completed = 0;
  };
  const bool& replaying_;
  const bool& in_graph_;
  std::map<int, Counts> counts_;  // by stream
};

// CudaDevice's host side: kernels and program events from the host device, launches dropped
// while a graph replays.
class DryReplayBackend final : public DeviceBackend {
 public:
  DryReplayBackend() : streams_(replaying_, in_graph_), replay_(host_.kernels()) {}
  const char* name() const override { return "dry-replay"; }
  DeviceStreams& streams() override { return streams_; }
  const OpsBackend& ops(int stream) override {
    return replaying_ ? static_cast<const OpsBackend&>(replay_) : host_.ops(stream);
  }
  const OpsBackend& kernels() override { return ops(0); }
  void launch(int, DeviceWork work) override {
    if (work.ready) throw std::logic_error("cuda: device work with a host-side readiness test");
    work.run();
  }
  void run_on_device(const std::function<void()>& work, const std::function<bool()>&) override {
    work();
  }
  std::unique_ptr<ProgramEvents> program_events(int count, void* comm_stream) override {
    return host_.program_events(count, comm_stream);
  }
  bool supports_graphs() const override { return true; }
  void begin_graph_capture() override { in_graph_ = true; }
  void end_graph_capture() override { in_graph_ = false; }
  void begin_graph_replay() override { replaying_ = in_graph_ = true; }
  // The graph's launch: the device runs it for `device_us` while the host waits for the step's
  // read-back (a spin, not a sleep, whose wake-up would add tens of microseconds).
  void end_graph_replay() override {
    replaying_ = in_graph_ = false;
    const auto until = std::chrono::steady_clock::now() + device_time_;
    while (std::chrono::steady_clock::now() < until) {
    }
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

int run(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: replay_host_cost DECK STEPS DEVICE_US [KEY=VALUE ...] [--run-dir=DIR]\n");
    return 2;
  }
  const int64_t steps = std::atoll(argv[2]);
  const double device_us = std::atof(argv[3]);
  std::vector<std::string> overrides;
  std::string run_dir;
  for (int a = 4; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg.rfind("--run-dir=", 0) == 0)
      run_dir = arg.substr(10);
    else
      overrides.push_back(arg);
  }
  overrides.push_back("device.cuda_graphs=true");
  overrides.push_back("device.kind=\"host\"");
  const RunConfig config = parse_deck(argv[1], overrides);
  JobOptions options;
  options.run_dir = run_dir.empty() ? "/tmp/replay_host_cost/" + config.run.name : run_dir;
  options.quiet = true;
  options.overwrite = true;
  options.max_steps = steps;
  auto backend = std::make_unique<DryReplayBackend>();
  backend->set_device_time(device_us);
  DeviceContext device(std::move(backend), DeviceKind::Host, 0);
  MpiCommunicator comm;
  Job job(config, options, device, comm.rank(), comm.size());
  job.start(comm);
  std::vector<double> eager_us, replay_us;
  for (int64_t step = 0; step < steps; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    if (step < 2) {  // the host's kernels, called by host code here, may address device memory
      DeviceWorkScope kernels;
      job.run_step(step);
    } else {
      job.run_step(step);
    }
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    (step < 2 ? eager_us : replay_us).push_back(step < 2 ? us : us - device_us);
  }
  if (job.executor().graph_replays() != steps - 2) {
    std::fprintf(stderr, "replay_host_cost: %lld replays of %lld steps: graphs were refused\n",
                 (long long)job.executor().graph_replays(), (long long)steps);
    return 1;
  }
  const double host = median(replay_us);
  std::printf(
      "{\"deck\": \"%s\", \"batch\": %lld, \"replays\": %lld, \"device_us\": %.1f, "
      "\"replay_host_us_median\": %.1f, \"replay_host_us_min\": %.1f, "
      "\"device_share\": %.3f, \"eager_step_us\": %.1f}\n",
      config.run.name.c_str(), (long long)config.train.global_batch, (long long)replay_us.size(),
      device_us, host, *std::min_element(replay_us.begin(), replay_us.end()),
      device_us / (device_us + host), eager_us[0]);
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
