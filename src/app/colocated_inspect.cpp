#include "app/colocated_inspect.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "app/paired_rounds.hpp"
#include "app/text_format.hpp"
#include "app/training_loop.hpp"
#include "comm/mpi_communicator.hpp"
#include "deck/component_options.hpp"
#include "deck/deck_parser.hpp"
#include "device/device_context.hpp"
#include "exec/schedule_input.hpp"
#include "job/job.hpp"
#include "model/stage_cuts.hpp"
#include "plan/byte_pairing.hpp"
#include "plan/colocated_program.hpp"
#include "plan/split_choice.hpp"
#include "pricing/cost_model.hpp"
#include "pricing/device_model.hpp"
#include "sched/job_placement.hpp"
#include "sched/schedule_registry.hpp"
#include "sim/simulator.hpp"
#include "util/input_error.hpp"

namespace fs = std::filesystem;

namespace wt {

namespace {

// The round a co-location deck would run on `ranks` ranks, planned from measured profiles.
struct InspectedRound {
  std::vector<RunConfig> decks;
  std::vector<Graph> graphs;
  std::vector<Program> programs;  // each job's, placed on its stream node by node
  std::vector<int> streams;
  std::vector<ProfiledJob> profiles;
  RoundOptions options;
  int64_t deck_limit = 0;  // device.memory_limit
  RoundPlan plan;
  std::string how;  // how the split was chosen
  Program combined;
};

int64_t per_rank(int64_t global_batch, int ranks) { return (global_batch + ranks - 1) / ranks; }

// Each job's two solo steps (warm-up, profile) on the host at its batch per rank, as a run's paired
// rounds profile them, in a scratch directory removed afterwards; no budget (the profile is the
// step's own bytes).
std::vector<ProfiledJob> profile_jobs(const std::vector<RunConfig>& decks, int ranks) {
  const fs::path scratch =
      fs::temp_directory_path() / ("wavetrain-colocate-profile-" + std::to_string(getpid()));
  std::vector<ProfiledJob> profiles;
  try {
    MpiCommunicator self(MPI_COMM_SELF);
    DeviceContext device;
    device.allocator().set_cross_stream_reuse(CrossStreamReuse::AfterSync);
    PairedRounds pairs({}, 1);
    TrainingLoop loop;
    loop.set_paired_rounds(&pairs);
    std::vector<std::unique_ptr<Job>> jobs;
    for (size_t k = 0; k < decks.size(); ++k) {
      RunConfig deck = decks[k];
      deck.train.global_batch = per_rank(deck.train.global_batch, ranks);
      JobOptions o;
      o.run_dir = (scratch / deck.run.name).string();
      o.max_steps = 2;
      o.quiet = true;
      o.id = static_cast<int>(k);
      o.colocated_stream = static_cast<int>(k % 2);
      jobs.push_back(std::make_unique<Job>(deck, o, device, 0, 1));
      jobs.back()->start(self);
      loop.add_job(*jobs.back(), {});
    }
    loop.run();
    for (auto& job : jobs) profiles.push_back(pairs.profiled_job(job->id()));
  } catch (...) {
    fs::remove_all(scratch);
    throw;
  }
  fs::remove_all(scratch);
  return profiles;
}

// device_memory: the budget when the deck sets none (the device model's memory), or 0.
InspectedRound inspect_round(const RunConfig& cfg, int ranks, int64_t device_memory) {
  InspectedRound round;
  const fs::path base = fs::path(cfg.deck_path).parent_path();
  for (const std::string& path : cfg.colocate.decks) {
    round.decks.push_back(parse_deck((base / path).string()));
    const RunConfig& deck = round.decks.back();
    round.graphs.push_back(Graph::load(deck.model.file));
    const Graph& graph = round.graphs.back();
    const int stages = ScheduleRegistry::stage_count(deck.schedule.kind, ranks);
    const std::vector<int> cuts = resolve_cuts(stage_cut_options(deck), graph, stages);
    const ScheduleInput input =
        make_schedule_input(graph, cuts, deck.schedule, deck.train.global_batch, ranks);
    round.streams.push_back(static_cast<int>(round.programs.size() % 2));
    try {
      round.programs.push_back(
          on_stream(per_node(ScheduleRegistry::generate(deck.schedule.kind, input), input.stages),
                    round.streams.back()));
    } catch (const std::invalid_argument& e) {
      throw InputError(deck.deck_path, 0, "schedule.kind",
                       "'" + deck.schedule.kind + "': " + e.what());
    }
  }
  round.profiles = profile_jobs(round.decks, ranks);
  round.deck_limit = cfg.device.memory_limit;
  round.options.memory_limit =
      cfg.device.memory_limit > 0 ? cfg.device.memory_limit : device_memory;
  round.options.partition = partition_named(cfg.colocate.partition);
  round.options.pairing = pairing_named(cfg.colocate.pairing);
  round.plan =
      plan_colocated_round(round.profiles, round.options, cfg.colocate.split_bytes, &round.how);
  round.combined =
      colocated_program(round.programs, round.plan.groups, round.plan.pairing, round.streams);
  validate_program(round.combined, 1, CommRules::Mpi);
  validate_program(round.combined, 1, CommRules::Nccl);
  return round;
}

std::string megabytes(int64_t bytes) { return format_number("%.1f MB", double(bytes) / 1e6); }

// The jobs' groups one at a time, in deck order: temporal sharing's round.
ColocatePairing one_at_a_time(const std::vector<std::vector<NodeGroup>>& groups) {
  ColocatePairing p;
  for (size_t j = 0; j < groups.size(); ++j) {
    p.job_order.push_back(int(j));
    for (size_t g = 0; g < groups[j].size(); ++g) {
      p.av.push_back(PairSlot{int(j), int(g)});
      p.dv.push_back(PairSlot{});
    }
  }
  return p;
}

void print_jobs(const InspectedRound& r, int ranks, std::ostream& out) {
  out << "co-location of " << r.decks.size() << " jobs on " << ranks << " rank(s), budget "
      << (r.options.memory_limit <= 0 ? std::string("none")
          : r.decks.empty() || r.options.memory_limit == r.deck_limit
              ? megabytes(r.options.memory_limit) + " (device.memory_limit)"
              : megabytes(r.options.memory_limit) + " (the device model's memory)")
      << "; node memory from a profiling step of each job at its batch per rank (J<job>NG<group>; "
         "! a node over the split, a group of its own)\n";
  for (size_t j = 0; j < r.decks.size(); ++j) {
    const ProfiledJob& p = r.profiles[j];
    out << "  J" << j + 1 << " " << r.decks[j].run.name << " (" << r.graphs[j].name << ", batch "
        << per_rank(r.decks[j].train.global_batch, ranks) << " per rank, stream " << r.streams[j]
        << "): resident " << megabytes(p.resident_bytes) << ", solo peak "
        << megabytes(p.peak_bytes) << "\n      "
        << describe_groups(r.plan.groups[j], r.profiles[j].memory.nodes()) << "\n";
  }
  const RoundMemory alone =
      round_memory(job_bytes(r.profiles, r.plan.groups), one_at_a_time(r.plan.groups));
  out << r.how << "; paired by "
      << (r.options.pairing == Pairing::Bytes ? "bytes" : "index (Algorithm 1)") << ": "
      << r.plan.pairing.pairs() << " pairs, "
      << format_number("%.0f%%", 100 * paired_fraction(r.plan.pairing))
      << " of groups beside another's; round peak predicted " << megabytes(r.plan.memory.peak)
      << " (" << r.plan.memory.peak << " bytes) at pair " << r.plan.memory.peak_pair + 1
      << ", temporal sharing's " << megabytes(alone.peak) << "\n";
}

}  // namespace

void show_colocated_schedule(const RunConfig& config, int ranks, std::ostream& out) {
  const InspectedRound r = inspect_round(config, ranks, 0);
  print_jobs(r, ranks, out);
  // The pairs, each job's group on its device stream (J<job>NG<group>, 1-based; ! a node over the
  // split, a group of its own), with the bytes in use when the pair begins and its peak.
  const std::vector<JobBytes> bytes = job_bytes(r.profiles, r.plan.groups);
  int64_t in_use = 0;
  for (const JobBytes& job : bytes) in_use += job.resident;
  const int stream_count = 1 + *std::max_element(r.streams.begin(), r.streams.end());
  std::vector<std::string> header{"pair"};
  for (int s = 0; s < std::max(2, stream_count); ++s)
    header.push_back("stream " + std::to_string(s));
  header.push_back("in use at start");
  header.push_back("pair peak");
  std::vector<std::vector<std::string>> rows{header};
  for (int k = 0; k < r.plan.pairing.pairs(); ++k) {
    std::vector<std::string> row(header.size());
    row[0] = std::to_string(k + 1);
    int64_t net = 0;
    for (const PairSlot& slot : {r.plan.pairing.av[size_t(k)], r.plan.pairing.dv[size_t(k)]}) {
      if (slot.hole()) continue;
      const NodeGroup& g = r.plan.groups[size_t(slot.job)][size_t(slot.group)];
      std::string& cell = row[size_t(1 + r.streams[size_t(slot.job)])];
      cell += (cell.empty() ? "" : ", ") + std::string("J") + std::to_string(slot.job + 1) + "NG" +
              std::to_string(slot.group + 1) + " " +
              describe_group(g, r.profiles[size_t(slot.job)].memory.nodes());
      net += g.net;
    }
    for (size_t c = 1; c + 2 < row.size(); ++c)
      if (row[c].empty()) row[c] = "-";
    row[row.size() - 2] = megabytes(in_use);
    row[row.size() - 1] = megabytes(r.plan.memory.pair_peak[size_t(k)]);
    in_use += net;
    rows.push_back(row);
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += row[c] + std::string(c + 1 < row.size() ? width[c] - row[c].size() + 2 : 0, ' ');
    out << line << "\n";
  }
  size_t instructions = 0;
  for (const auto& stream : r.combined.ranks[0].streams) instructions += stream.size();
  out << "the round as one program: " << instructions << " instructions on rank 0's "
      << r.combined.ranks[0].streams.size()
      << " streams, pairs separated by events; validate_program passes (MPI and NCCL rules)\n";
}

void simulate_colocated(const RunConfig& config, const SimulateRequest& request,
                        std::ostream& out) {
  const DeviceModel device = load_device_model(request.device);
  const InspectedRound r = inspect_round(config, request.ranks, device.memory_bytes);
  std::vector<CostModel> costs;
  std::vector<const CostModel*> job_costs;
  SimOptions options;
  options.overlap_launch = true;
  for (size_t j = 0; j < r.decks.size(); ++j) {
    const RunConfig& deck = r.decks[j];
    costs.emplace_back(r.graphs[j], std::vector<int>{}, device, nullptr,
                       optimizer_state_floats(deck.optimizer.kind, deck.optimizer.momentum));
    options.job_batches.push_back(deck.train.global_batch);
  }
  for (const CostModel& c : costs) job_costs.push_back(&c);
  options.job_costs = job_costs;
  options.global_batch = options.job_batches.front();
  const SimResult together = simulate(r.combined, costs.front(), options);
  const Program temporal_program =
      colocated_program(r.programs, r.plan.groups, one_at_a_time(r.plan.groups), r.streams);
  const SimResult temporal = simulate(temporal_program, costs.front(), options);
  const RoundMemory alone =
      round_memory(job_bytes(r.profiles, r.plan.groups), one_at_a_time(r.plan.groups));
  out << "simulated: " << r.decks.size() << " co-located jobs on " << request.ranks
      << " rank(s) of " << device.name << "\n";
  print_jobs(r, request.ranks, out);
  out << "  layer times: roofline (" << format_number("%.1f", device.peak_flops * 1e-12)
      << " TFLOP/s x " << format_number("%.2f", device.efficiency) << ", "
      << format_number("%.0f", device.memory_bandwidth * 1e-9) << " GB/s); assumption: a pass's "
      << "fixed " << human_seconds(device.launch_s)
      << " per node (launch_s) leaves the device to the other stream's work, and the two "
         "streams' work shares it (one engine)\n";
  out << "  round: " << human_seconds(together.step_s) << " for " << together.samples_per_step
      << " samples, " << format_number("%.1f", together.samples_per_s()) << " samples/s\n";
  out << "  temporal sharing: " << human_seconds(temporal.step_s) << ", "
      << format_number("%.1f", temporal.samples_per_s())
      << " samples/s; co-location: " << format_number("%.2f", temporal.step_s / together.step_s)
      << "x\n";
  out << "  peak memory per rank (the round's rules): " << r.plan.memory.peak << " bytes ("
      << megabytes(r.plan.memory.peak) << "), temporal sharing " << megabytes(alone.peak);
  if (device.memory_bytes > 0)
    out << format_number("; %.1f%% of the device",
                         100.0 * double(r.plan.memory.peak) / double(device.memory_bytes));
  out << "\n";
}

}  // namespace wt
