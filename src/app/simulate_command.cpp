#include "app/simulate_command.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "app/simulate_background.hpp"
#include "app/text_format.hpp"
#include "io/trace_writer.hpp"
#include "job/simulated_run.hpp"
#include "plan/layer_profile_file.hpp"
#include "sim/simulator.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

void print_rank_row(std::ostream& out, const std::string& label, double compute, double comm,
                    double step, double peak, int64_t memory) {
  out << "  " << label << std::string(std::max<size_t>(1, 10 - label.size()), ' ')
      << format_number("%8.1f%%", 100 * compute / step)
      << format_number("%9.1f%%", 100 * comm / step) << "   " << human_bytes(peak);
  if (memory > 0) out << format_number("  (%.0f%% of the device)", 100 * peak / double(memory));
  out << "\n";
}

void write_simulated_trace(const std::string& path, const RunConfig& config, const Program& p,
                           const SimResult& r) {
  std::vector<RankTrace> ranks(p.world_size);
  for (int i = 0; i < p.world_size; ++i) {
    ranks[i].rank = i;
    ranks[i].steps.push_back({0, 0.0, r.step_s});
  }
  for (const SimulatedSpan& s : r.spans) {
    TraceEvent e{};
    std::snprintf(e.name, sizeof e.name, "%s", opcode_enum_name(s.ins.op));
    e.stage = s.ins.stage;
    e.batch = s.ins.batch;
    e.wave = s.ins.wave;
    e.stream = s.stream;
    e.step = 0;
    e.begin = s.begin_s;
    e.end = s.end_s;
    e.bytes = s.ins.bytes;
    ranks[s.rank].events.push_back(e);
  }
  for (const SimulatedMemory& m : r.memory)
    ranks[m.rank].memory.push_back({m.t_s, m.bytes, m.bytes});
  TraceInfo info;
  info.world_size = p.world_size;
  info.schedule = p.schedule + " (simulated)";
  info.model = config.model.file;
  info.start_step = 0;
  info.end_step = 1;
  try {
    write_trace_file(path, info, ranks);
  } catch (const std::runtime_error& e) {
    throw InputError(path, 0, "--simulate-trace", e.what());
  }
}

}  // namespace

void run_simulate_command(const RunConfig& config, const SimulateRequest& request,
                          std::ostream& out) {
  const DeviceModel device = load_device_model(request.device);
  Graph graph = Graph::load(config.model.file);
  // Measured layer times, when given, price the layers and balance the stages as a run would.
  LayerProfile profile;
  if (!request.profile.empty()) profile = load_checked_profile(request.profile, graph);
  SimulatedRun run = simulated_run(config, graph, device,
                                   request.profile.empty() ? nullptr : &profile, request.ranks);
  const Program& program = run.program;
  const CostModel& costs = run.costs;
  const int stages = run.stages;
  SimOptions options = run.options;
  options.record_spans = !request.trace_path.empty();
  const SimResult r = simulate(program, costs, options);

  out << "simulated: " << graph.name << ", schedule " << program.schedule;
  if (program.schedule == "pipeline")
    out << " (microbatches " << config.schedule.microbatches << ")";
  out << ", " << request.ranks << " rank(s) of " << device.name << " (" << device.ranks_per_node
      << " per node), " << stages << " stage(s)\n";
  out << "  layer times: "
      << (costs.profiled() ? "measured profile " + request.profile
                           : "roofline (" + format_number("%.1f", device.peak_flops * 1e-12) +
                                 " TFLOP/s x " + format_number("%.2f", device.efficiency) + ", " +
                                 format_number("%.0f", device.memory_bandwidth * 1e-9) + " GB/s)")
      << "\n";
  out << "  step: " << human_seconds(r.step_s) << " for " << r.samples_per_step << " samples ("
      << program.global_batches << " global batch(es) of " << config.train.global_batch << ")\n";
  out << "  throughput: " << format_number("%.1f", r.samples_per_s()) << " samples/s\n";
  out << "  rank      compute      link   peak memory\n";
  const int world = program.world_size;
  if (world <= 16) {
    for (int i = 0; i < world; ++i)
      print_rank_row(out, std::to_string(i), r.compute_s[i], r.comm_s[i], r.step_s,
                     double(r.peak_bytes[i]), device.memory_bytes);
  } else {  // a row per rank would drown the summary: min, mean and max over ranks
    auto stat = [&](auto pick) {
      std::vector<double> v;
      for (int i = 0; i < world; ++i) v.push_back(pick(i));
      double sum = 0;
      for (double x : v) sum += x;
      return std::vector<double>{*std::min_element(v.begin(), v.end()), sum / v.size(),
                                 *std::max_element(v.begin(), v.end())};
    };
    const auto c = stat([&](int i) { return r.compute_s[i]; });
    const auto l = stat([&](int i) { return r.comm_s[i]; });
    const auto m = stat([&](int i) { return double(r.peak_bytes[i]); });
    const char* names[] = {"min", "mean", "max"};
    for (int k = 0; k < 3; ++k)
      print_rank_row(out, names[k], c[k], l[k], r.step_s, m[k], device.memory_bytes);
  }
  if (!request.trace_path.empty()) {
    write_simulated_trace(request.trace_path, config, program, r);
    out << "  trace: " << request.trace_path << "\n";
  }
  if (!config.background.deck.empty())
    print_simulated_background(
        config, device, run, r,
        [&](int ranks) {
          return simulated_run(config, graph, device, request.profile.empty() ? nullptr : &profile,
                               ranks);
        },
        out);
}

}  // namespace wt
