// wavetrain: one MPI rank per device. Exit status: 0 success, 2 bad input (deck, model file,
// dataset, checkpoint or command line: one message naming file, line and key), 1 internal error,
// 3 out of device memory, 4 diverged (non-finite loss/gradient, failure.on_nonfinite = "stop"),
// 5 stalled or lost a peer (the stall watchdog, src/comm/stall_watchdog.hpp, exits the process),
// 75 stopped early with a checkpoint (signal or --walltime).
#include <malloc.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>

#include "app/auto/auto_schedule.hpp"
#include "app/check_data.hpp"
#include "app/colocated_inspect.hpp"
#include "app/colocation_decks.hpp"
#include "app/command_line.hpp"
#include "app/evaluate_command.hpp"
#include "app/exit_status_file.hpp"
#include "app/gpu_link.hpp"
#include "app/inspect.hpp"
#include "app/job_failure.hpp"
#include "app/run_control.hpp"
#include "app/show_plan.hpp"
#include "app/simulate_command.hpp"
#include "app/stall_watch.hpp"
#include "app/trainer.hpp"
#include "comm/failure_agreement.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/open_mpi_defaults.hpp"
#include "deck/deck_parser.hpp"
#include "exec/nonfinite_guard.hpp"
#include "job/run_preflight.hpp"
#include "util/agreed_error.hpp"
#include "util/input_error.hpp"

// OpenBLAS's own thread pool would fight the other ranks for cores: one rank owns one core.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
// Likewise oneDNN's OpenMP pool (set on the thread that calls GEMM).
extern "C" void omp_set_num_threads(int) __attribute__((weak));

namespace {

// EX_TEMPFAIL: stopped on purpose with a checkpoint saved; job scripts resubmit on it.
constexpr int kExitResumable = 75;

int simulate_or_inspect(const wt::CommandLine& cli, const wt::RunConfig& deck, int world_rank,
                        int world) {
  if (world_rank != 0) return 0;
  const int ranks = cli.ranks > 0 ? cli.ranks : world;
  const wt::AutoModelRequest on_model{ranks, cli.device, cli.profile};
  if (!deck.colocate.decks.empty()) {  // several jobs on one device (app/colocated_inspect)
    if (cli.simulate)
      wt::simulate_colocated(deck, {ranks, cli.device, cli.profile, cli.simulate_trace}, std::cout);
    else  // --show-stages, --show-plan and --show-auto were refused with the deck (job_deck_use)
      wt::show_colocated_schedule(deck, ranks, std::cout);
    return 0;
  }
  if (cli.show_auto) {
    wt::show_auto(deck, on_model, std::cout);
    return 0;
  }
  const bool automatic = deck.schedule.kind == "auto";
  if (automatic && !cli.simulate && !cli.show_plan)
    throw wt::InputError(deck.deck_path, 0, "schedule.kind",
                         std::string("\"auto\" chooses the schedule on a device: ") +
                             (cli.show_stages ? "--show-stages" : "--show-schedule") +
                             " needs a schedule (--set schedule.kind=...); --show-auto --device "
                             "D prints auto's choice");
  // --simulate and --show-plan of "auto": of the schedule it chooses on that device model.
  const wt::RunConfig config =
      automatic ? wt::auto_choice_on_model(deck, on_model, std::cout) : deck;
  if (cli.simulate) {
    wt::SimulateRequest request;
    request.ranks = ranks;
    request.device = cli.device;
    request.profile = cli.profile;
    request.trace_path = cli.simulate_trace;
    wt::run_simulate_command(config, request, std::cout);
    return 0;
  }
  if (cli.show_plan) {
    wt::show_burst_plan(config, {ranks, cli.device, cli.profile}, std::cout);
    return 0;
  }
  wt::TrainOptions where;
  where.run_dir = cli.run_dir;
  const std::string run_dir = wt::run_directory(config, where);
  if (cli.show_stages) wt::show_stages(config, ranks, run_dir, std::cout);
  if (cli.show_schedule) wt::show_schedule(config, ranks, run_dir, std::cout);
  return 0;
}

// The option that reads `deck` as one job's, or "" when the command line trains it or shows a
// co-location deck's round (a co-location deck's jobs are each a deck of their own).
std::string job_deck_use(const wt::CommandLine& cli) {
  if (!cli.check_data.empty()) return "--check-data --deck";
  // --simulate and --show-schedule of a co-location deck show its round (app/colocated_inspect).
  for (const auto& [set, name] : {std::pair{cli.show_plan, "--show-plan"},
                                  {cli.show_auto, "--show-auto"},
                                  {cli.show_stages, "--show-stages"}})
    if (set) return name;
  return "";
}

bool using_trained_model(const wt::CommandLine& cli) {
  return !cli.evaluate.empty() || !cli.predict.empty();
}

// --evaluate or --predict, with the deck given or (none) the one stored in the checkpoint.
void use_trained_model(const wt::CommandLine& cli) {
  wt::TrainedModelRequest request;
  request.checkpoint = cli.evaluate.empty() ? cli.predict : cli.evaluate;
  request.deck = cli.deck;
  request.overrides = cli.overrides;
  request.data = cli.data;
  if (!cli.evaluate.empty())
    wt::evaluate_command(request, cli.run_dir, std::cout);
  else
    wt::predict_command(request, cli.output, std::cout);
}

int train(const wt::CommandLine& cli, wt::RunConfig config, double stall_seconds,
          wt::MpiCommunicator& mpi) {
  std::string why;
  const std::string kind = wt::resolve_device_kind(config, &why);  // "auto": cuda or host
  // Said where a GPU was chosen, or seen and not taken; a machine without one stays quiet.
  if (kind != config.device.kind && mpi.rank() == 0 &&
      (kind == "cuda" || why.find("more ranks") != std::string::npos))
    std::cout << "wavetrain: device.kind = \"auto\": " << kind << ", " << why << std::endl;
  config.device.kind = kind;
  const wt::GpuLink gpu = wt::open_gpu_link(config, mpi);  // device.kind = "cuda" only
  wt::StallWatch watch(mpi, gpu.comm ? *gpu.comm : mpi, stall_seconds);
  wt::report_job_failures_on(watch.board());
  wt::TrainOptions options;
  options.run_dir = cli.run_dir;
  options.max_steps = cli.steps;
  options.quiet = cli.quiet;
  options.restart = cli.restart;
  options.restart_from = cli.restart_from;
  options.skip_locked = cli.skip_locked;
  options.overwrite = cli.overwrite;
  options.walltime_s = cli.walltime_s;
  options.gpu = gpu.placement.gpu;
  options.on_step = [&watch](int64_t step) { watch.set_step(step); };
  const wt::TrainResult result = wt::train(config, options, watch.comm());
  return result.stopped_early ? kExitResumable : 0;
}

// Only errors that every rank raises together are caught here; any other exception ends the job
// from the rank that raised it, without unwinding (app/job_failure.hpp).
int run(int argc, char** argv, int world_rank) {
  wt::MpiCommunicator mpi(MPI_COMM_WORLD);
  try {
    wt::CommandLine cli;
    wt::RunConfig config;
    double stall_seconds = 0;  // the rank's watchdog's (a co-location deck: its jobs')
    wt::agree_on_failure(mpi, [&] {
      cli = wt::parse_command_line(argc, argv);
      if (cli.exit_now || cli.deck.empty() || using_trained_model(cli)) return;
      config = wt::parse_deck(cli.deck, wt::check_data_overrides(cli.check_data, cli.overrides));
      const std::string use = job_deck_use(cli);
      if (!use.empty()) wt::require_job_deck(config, use);
      stall_seconds = wt::watchdog_stall_seconds(config, mpi.size());
    });
    if (cli.exit_now) return 0;
    if (!cli.check_data.empty()) {
      // Local work (no collective call): rank 0 checks, every rank agrees on the outcome.
      wt::agree_on_failure(mpi, [&] {
        if (world_rank == 0)
          wt::check_data(cli.check_data, cli.deck.empty() ? nullptr : &config, std::cout);
      });
      return 0;
    }
    if (using_trained_model(cli)) {  // rank 0's work alone, like --check-data
      wt::agree_on_failure(mpi, [&] {
        if (world_rank == 0) use_trained_model(cli);
      });
      return 0;
    }
    if (cli.simulate || cli.show_plan || cli.show_auto || cli.show_stages || cli.show_schedule)
      return simulate_or_inspect(cli, config, world_rank, mpi.size());
    return train(cli, config, stall_seconds, mpi);
  } catch (const wt::Diverged& e) {
    // Every rank sees the same summed gradient, so all stop at the same step: report once.
    if (world_rank == 0) wt::report_agreed_failure(std::string("wavetrain: diverged: ") + e.what());
    return 4;
  } catch (const wt::AgreedError& e) {
    if (world_rank == 0) wt::report_agreed_failure(e.what());
    return e.status();
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Large buffers stay mapped: under VMs each re-fault of a returned buffer is expensive.
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  // A write past `ulimit -f` fails with EFBIG and takes the failed-write path (message, partial
  // file removed, previous checkpoint kept) instead of SIGXFSZ killing the rank without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  // A send to a peer on another host whose process died (TCP) fails with EPIPE and leaves the
  // wait to the stall watchdog, which names the rank and its host, instead of SIGPIPE killing
  // this rank without a word.
  std::signal(SIGPIPE, SIG_IGN);
  // At once: a scheduler's SIGTERM/SIGUSR1 during start-up must not kill the rank outright.
  wt::install_stop_signal_handlers();
  wt::apply_open_mpi_defaults();  // read by MPI_Init
  int provided = 0;
  // The data preloader is a second thread, but only the main thread calls MPI.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  wt::install_stop_signal_handlers();  // again, in case MPI_Init installed its own
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  wt::install_job_failure_handler(world_rank, world_size);
  if (openblas_set_num_threads) openblas_set_num_threads(1);
  if (omp_set_num_threads) omp_set_num_threads(1);
  int rc;
  {
    Kokkos::initialize();  // no arguments: the same call works on Kokkos 3.x and 4.x
    rc = run(argc, argv, world_rank);
    // For job scripts, whose mpirun may exit 1 instead (exit_status_file.hpp). Before the
    // finalize calls: a signalled mpirun SIGKILLs the ranks while they wait in MPI_Finalize.
    if (world_rank == 0) wt::record_exit_status(rc);
    Kokkos::finalize();
  }
  MPI_Finalize();
  return rc;
}
