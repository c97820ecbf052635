// Two co-resident jobs of different models under one allocator (issue 11's target: peak reserved
// at most 1.1x peak in use). Each job is a real model (models/*.toml) whose training passes
// (forward and backward over a random batch) allocate through the rank's caching allocator, in
// that job's account. Phases, each from an empty cache: job A alone, job B alone, A and B taking
// turns step by step (co-location on one rank), and the turns again under a budget of 1.1x the
// unbudgeted peak in use. Built and run by bench/coresident_jobs.sh.
// Usage: coresident_jobs [steps] [model A] [model B] [batch]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "device/device_context.hpp"
#include "model/graph_pass.hpp"
#include "tensor/rng.hpp"

using namespace wt;

namespace {

struct BenchJob {
  int id;
  std::string name;
  Model model;
  Tensor input;
  std::vector<int32_t> labels;
  const OpsBackend* ops;  // the device's kernels
};

BenchJob make_job(int id, const std::string& model_file, int64_t batch, DeviceContext& device) {
  CachingAllocator& memory = device.allocator();
  CachingAllocator::JobScope account(memory, id);  // its parameters count as its own
  BenchJob job{id, model_file, Model(Graph::load(model_file), memory), Tensor(), {}, &device.ops()};
  job.model.init(uint64_t(id) + 1);
  const Graph& graph = job.model.graph;
  Shape shape{batch};
  for (int64_t d : graph.input_shape) shape.push_back(d);
  job.input = Tensor::empty(shape, memory);
  Rng rng(uint64_t(id) + 7);
  // Small integers: valid pixels for an image model and token ids for a language model (whose
  // vocabulary is its class count).
  for (int64_t i = 0; i < job.input.numel(); ++i)
    job.input.data()[i] = float(rng.below(uint64_t(graph.classes)));
  const int64_t labels = batch * graph.nodes.back().layer->labels_per_sample();
  for (int64_t i = 0; i < labels; ++i) job.labels.push_back(int32_t(rng.below(graph.classes)));
  return job;
}

void train_pass(BenchJob& job) {
  CachingAllocator::JobScope account(job.model.allocator(), job.id);
  job.model.zero_grads();
  run_graph_pass(job.model, *job.ops, job.input, job.labels, true);
}

void report(const char* phase, const std::vector<BenchJob*>& jobs, CachingAllocator& memory) {
  const MemoryStats s = memory.stats();
  std::printf(
      "%-28s peak in use %8.2f MB  peak reserved %8.2f MB  ratio %.3f  system allocs %4zu"
      "  forced syncs %zu",
      phase, s.peak_in_use / 1048576.0, s.peak_reserved / 1048576.0,
      s.peak_in_use ? double(s.peak_reserved) / double(s.peak_in_use) : 0.0, s.system_allocations,
      s.forced_syncs);
  for (BenchJob* job : jobs)
    std::printf("  job %d peak %.2f MB", job->id,
                memory.job_stats(job->id).peak_in_use / 1048576.0);
  std::printf("\n");
}

// Runs `steps` turns of the jobs (each job one pass per turn) from an empty cache.
void phase(const char* name, const std::vector<BenchJob*>& jobs, int steps,
           CachingAllocator& memory) {
  memory.empty_cache();
  memory.reset_peaks();
  const size_t system_before = memory.stats().system_allocations;
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s)
    for (BenchJob* job : jobs) train_pass(*job);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-28s %.1f ms and %.1f system allocations per turn\n", name, ms / steps,
              double(memory.stats().system_allocations - system_before) / steps);
  report(name, jobs, memory);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  const std::string a = argc > 2 ? argv[2] : WT_SOURCE_DIR "/models/lenet.toml";
  const std::string b = argc > 3 ? argv[3] : WT_SOURCE_DIR "/models/transformer_small.toml";
  const int64_t batch = argc > 4 ? std::atoll(argv[4]) : 32;
  DeviceContext device;  // one rank's, shared by both jobs
  CachingAllocator& memory = device.allocator();
  BenchJob job_a = make_job(0, a, batch, device);
  BenchJob job_b = make_job(1, b, batch, device);
  std::printf(
      "job 0: %s, job 1: %s, batch %lld, %d steps per phase (parameters and inputs are "
      "held throughout and count as in use)\n",
      a.c_str(), b.c_str(), (long long)batch, steps);
  phase("job 0 alone", {&job_a}, steps, memory);
  phase("job 1 alone", {&job_b}, steps, memory);
  phase("jobs 0 and 1 taking turns", {&job_a, &job_b}, steps, memory);
  const size_t budget = size_t(1.1 * double(memory.stats().peak_in_use));
  memory.set_limit(budget);
  char name[64];
  std::snprintf(name, sizeof name, "turns, budget %.2f MB", budget / 1048576.0);
  try {
    phase(name, {&job_a, &job_b}, steps, memory);
  } catch (const OutOfMemory& e) {
    std::printf("%-28s %s\n", name, e.what());
    return 1;
  }
  const MemoryStats s = memory.stats();
  const double ratio = double(s.peak_reserved) / double(s.peak_in_use);
  std::printf("co-resident peak reserved / peak in use = %.3f (target <= 1.1): %s\n", ratio,
              ratio <= 1.1 ? "met" : "NOT met");
  return ratio <= 1.1 ? 0 : 1;
}
