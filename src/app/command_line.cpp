#include "app/command_line.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <regex>

#include "deck/schema.hpp"
#include "ops/conv_algorithm.hpp"
#include "util/input_error.hpp"

#ifndef WT_VERSION
#define WT_VERSION "0.1.0"
#endif

namespace wt {

const char* wavetrain_version() { return WT_VERSION; }

namespace {

const char* kDescription =
    "wavetrain trains a deep neural network on many MPI ranks, one rank per device (a GPU, or a\n"
    "CPU core where there is none). The input deck (TOML) names the dataset (HDF5), the model\n"
    "description, the optimizer and the parallel schedule that decides which rank runs which\n"
    "part of the model on which batch; `wavetrain --help-deck` lists every deck key. Each run\n"
    "writes a run directory (default runs/<deck file name without .toml>) with the resolved deck,\n"
    "the metrics (metrics.csv), the log and a summary (summary.json). A run directory that\n"
    "holds an earlier run is never written over: resume it (--restart), replace it\n"
    "(--overwrite) or choose another (--run-dir); otherwise the run is refused (exit 2).\n";

const char* kFooter =
    "Example:\n"
    "  mpirun -n 4 wavetrain inputs/fashion_lenet.toml --set optimizer.lr=0.03 --run-dir "
    "runs/lenet_lr03\n"
    "  wavetrain inputs/text_transformer.toml --simulate --ranks 8 --device v100 --set "
    "schedule.kind=waves\n"
    "  wavetrain inputs/fashion_lenet.toml --show-auto --ranks 64 --device a100\n"
    "  wavetrain --evaluate runs/fashion_lenet/checkpoints/step_00000010.h5\n"
    "  wavetrain --predict runs/fashion_lenet/checkpoints/step_00000010.h5 --data new.h5 "
    "--output p.csv\n"
    "\n"
    "Batch jobs: checkpoints go to <run dir>/checkpoints. SIGTERM or SIGUSR1 (what schedulers\n"
    "send before the wall time), SIGINT, or --walltime running out saves a checkpoint and exits\n"
    "75; resubmit with --restart (or checkpoint.restart = \"auto\" in the deck) to carry on where\n"
    "it stopped. A run resumes only its own checkpoints (its identity is <run dir>/run_id);\n"
    "--restart-from FILE starts from any checkpoint on purpose. A checkpoint that another process\n"
    "holds open stops the resume (exit 2) rather than being skipped, unless --skip-locked.\n"
    "\n"
    "Exit status: 0 finished; 2 bad input (deck, model, dataset, checkpoint, command line);\n"
    "3 out of device memory; 4 diverged (NaN/Inf); 5 a stalled or lost rank; 75 stopped early\n"
    "with a checkpoint, resubmit to resume; 1 any other error.";

// Command-line bounds, stated in the range messages: far beyond any real run, and small enough
// that step and rank counts never overflow what they are multiplied by.
constexpr int64_t kMaxSteps = 1'000'000'000'000;
constexpr int kMaxRanks = 1 << 20;

// "3600", "90:00" or "1:30:00" (Slurm's and PBS's formats, without days) to seconds.
double parse_walltime(const std::string& text) {
  static const std::regex pattern(R"(^(?:(\d+):)?(?:(\d+):)?(\d+)$)");
  std::smatch m;
  if (!std::regex_match(text, m, pattern))
    throw InputError("", 0, "--walltime",
                     "expected seconds, MM:SS or HH:MM:SS, got '" + text + "'");
  double parts[3] = {0, 0, std::stod(m[3])};
  if (m[1].matched && m[2].matched) {
    parts[0] = std::stod(m[1]);
    parts[1] = std::stod(m[2]);
  } else if (m[1].matched) {
    parts[1] = std::stod(m[1]);
  }
  // Plain seconds may be any count, as may the leading field (MM of MM:SS, HH of HH:MM:SS, as in
  // Slurm's "90:00"); the fields after it are clock digits.
  const bool seconds_field_bounded = m[1].matched, minutes_field_bounded = m[2].matched;
  if ((seconds_field_bounded && parts[2] > 59) || (minutes_field_bounded && parts[1] > 59))
    throw InputError("", 0, "--walltime",
                     "seconds (and the minutes of HH:MM:SS) must be 0 to 59, got '" + text + "'");
  const double seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  if (seconds <= 0) throw InputError("", 0, "--walltime", "must be positive, got '" + text + "'");
  return seconds;
}

// The option a CLI11 message is about ("--steps: ..." or "... not expected: --foo"), or "".
std::string option_in(const std::string& message) {
  std::smatch match;
  static const std::regex option_pattern("(--?[A-Za-z][A-Za-z0-9-]*)");
  if (std::regex_search(message, match, option_pattern)) return match[1];
  if (message.find("DECK") != std::string::npos) return "DECK";
  return "";
}

void check_override_shape(const std::string& text) {
  const size_t eq = text.find('=');
  const size_t dot = text.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 || eq == dot + 1)
    throw InputError("", 0, "--set",
                     "expected section.key=value, got '" + text +
                         "' (e.g. --set optimizer.lr=0.1; see --help-deck for the keys)");
}

}  // namespace

// The options that inspect, plan or simulate instead of training.
void add_inspection_options(CLI::App& app, CommandLine& cl) {
  app.add_flag(
      "--show-stages", cl.show_stages,
      "Print the model's layers and stage split with time, parameters and activation bytes per "
      "stage (profiling now unless the run directory caches profile.h5), then exit");
  app.add_flag("--show-schedule", cl.show_schedule,
               "Print the schedule's per-rank instruction table, then exit");
  app.add_flag("--show-plan", cl.show_plan,
               "Print DeepPool's burst plan of the deck's model on --ranks ranks of --device "
               "(per unit: ranks, compute, transfer, sync, cumulative time, amplification), then "
               "exit");
  app.add_flag("--show-auto", cl.show_auto,
               "Print how schedule.kind = \"auto\" ranks every schedule of the deck's model on "
               "--ranks ranks of --device (predicted step, samples/s, peak memory per rank, "
               "whether it fits) and which it would choose, then exit");
  app.add_option("--ranks", cl.ranks,
                 "Rank count for --show-stages, --show-schedule, --show-plan, --show-auto and "
                 "--simulate "
                 "(default: the MPI world size)")
      ->type_name("N")
      ->check(CLI::Range(1, kMaxRanks));
  app.add_flag("--simulate", cl.simulate,
               "Predict step time, throughput, busy fraction and memory per rank of the deck's "
               "schedule on --ranks ranks of --device, without running the model, then exit");
  app.add_option("--device", cl.device,
                 "Device model for --simulate, --show-plan and --show-auto: v100, a100, h100 or a "
                 "device file "
                 "(TOML; see "
                 "bench/devices/)")
      ->type_name("NAME|FILE");
  app.add_option(
         "--profile", cl.profile,
         "Layer times measured by the profiling step (profile.h5 in a run directory) for "
         "--simulate, --show-plan or --show-auto, instead of the device's roofline estimate")
      ->type_name("FILE");
  app.add_option("--simulate-trace", cl.simulate_trace,
                 "With --simulate: write the simulated step as a trace file (trace.h5 format) for "
                 "analysis/timeline.py and analysis/memory.py")
      ->type_name("FILE");
}

// Options that only make sense together (a device model for pricing, --ranks for inspection).
void check_option_combinations(const CommandLine& cl) {
  const bool priced = cl.simulate || cl.show_plan || cl.show_auto;  // needs a device model
  if (priced && cl.device.empty())
    throw InputError("", 0, "--device",
                     std::string(cl.simulate    ? "--simulate"
                                 : cl.show_plan ? "--show-plan"
                                                : "--show-auto") +
                         " needs a device model: --device v100|a100|h100|FILE");
  if (!priced && (!cl.device.empty() || !cl.profile.empty()))
    throw InputError("", 0, !cl.device.empty() ? "--device" : "--profile",
                     "only applies with --simulate, --show-plan or --show-auto");
  if (!cl.simulate && !cl.simulate_trace.empty())
    throw InputError("", 0, "--simulate-trace", "only applies with --simulate");
  if (cl.restart && !cl.restart_from.empty())
    throw InputError("", 0, "--restart-from",
                     "names the checkpoint to resume from: leave out --restart");
  if (cl.overwrite && cl.restart)
    throw InputError("", 0, "--overwrite",
                     "removes the earlier run that --restart would resume: give one of them");
  if (cl.skip_locked && !cl.restart_from.empty())
    throw InputError("", 0, "--skip-locked",
                     "only applies when resuming from the run's checkpoint directory, not with "
                     "--restart-from");
  if (cl.ranks > 0 && !priced && !cl.show_stages && !cl.show_schedule)
    throw InputError("", 0, "--ranks",
                     "only applies with --simulate, --show-plan, --show-auto, --show-stages or "
                     "--show-schedule: a training run uses the MPI world size (mpirun -n N)");
}

// The options of a training run (the deck's overrides, the run directory, resuming, stopping).
void add_run_options(CLI::App& app, CommandLine& cl, std::string& walltime) {
  app.add_option("--set", cl.overrides,
                 "Override one deck key, e.g. --set train.epochs=2 (repeatable; value is TOML, a "
                 "bare word for strings)")
      ->type_name("SECTION.KEY=VALUE")
      ->allow_extra_args(false);
  app.add_option("--run-dir", cl.run_dir,
                 "Run directory (default: <run.output_dir>/<run.name> from the deck; run.name "
                 "defaults to the deck's file name without .toml)")
      ->type_name("DIR");
  app.add_flag("--restart", cl.restart,
               "Resume from the newest usable checkpoint in the run directory (one must exist; "
               "only this run's: one written by another run sharing checkpoint.dir is refused)");
  app.add_option("--restart-from", cl.restart_from,
                 "Resume from this checkpoint file, whichever run wrote it (e.g. start from "
                 "another run's weights on purpose); its step, weights and optimizer state carry "
                 "on in this run directory")
      ->type_name("FILE");
  app.add_flag("--overwrite", cl.overwrite,
               "Replace an earlier run in the run directory: remove its metrics, summary, log and "
               "checkpoints first (without it, a run directory holding a started or finished run "
               "is refused, exit 2, unless resumed)");
  app.add_flag("--skip-locked", cl.skip_locked,
               "When resuming, skip a checkpoint that another process holds locked (open for "
               "writing) and fall back to the newest one before it, instead of stopping (exit 2)");
  app.add_option("--walltime", walltime,
                 "The job's wall time: checkpoint and exit 75 before it runs out "
                 "(checkpoint.walltime_margin seconds early)")
      ->type_name("SECONDS|[HH:]MM:SS");
  app.add_option("--steps", cl.steps, "Stop after N optimizer steps (overrides train.max_steps)")
      ->type_name("N")
      ->check(CLI::Range(int64_t(1), kMaxSteps));
  app.add_flag("--quiet", cl.quiet, "No progress lines (errors and the final summary only)");
}

// The options that use a trained model: --evaluate, --predict and what they read and write.
void add_after_training_options(CLI::App& app, CommandLine& cl) {
  app.add_option("--evaluate", cl.evaluate,
                 "Run a checkpoint's model on the test split of its deck's dataset (or --data's; "
                 "the deck stored in the checkpoint unless DECK is given): print test loss, "
                 "accuracy, per-class precision and recall and the confusion matrix, and write "
                 "them as evaluation_<checkpoint>.csv, with the confusion matrix drawn as "
                 "evaluation_<checkpoint>.png, into the run directory (--run-dir, else the "
                 "checkpoint's); analysis/confusion.py redraws it with class names")
      ->type_name("CHECKPOINT");
  app.add_option("--predict", cl.predict,
                 "Write the class probabilities of every sample of --data's test split, as the "
                 "checkpoint's model gives them, to --output (CSV: row, label, predicted, "
                 "p_<class>...)")
      ->type_name("CHECKPOINT");
  app.add_option("--data", cl.data, "The dataset (HDF5) for --evaluate or --predict")
      ->type_name("FILE");
  app.add_option("--output", cl.output, "The CSV file --predict writes")->type_name("FILE");
}

// --evaluate and --predict: one at a time, with what each needs.
void check_after_training_options(const CommandLine& cl) {
  const bool evaluate = !cl.evaluate.empty(), predict = !cl.predict.empty();
  if (evaluate && predict)
    throw InputError("", 0, "--predict", "give --evaluate or --predict, not both");
  if (!evaluate && !predict && !cl.data.empty())
    throw InputError("", 0, "--data",
                     "only applies with --evaluate or --predict (a training run reads the deck's "
                     "data.path)");
  if (!predict && !cl.output.empty())
    throw InputError("", 0, "--output", "only applies with --predict");
  if (predict && cl.data.empty())
    throw InputError("", 0, "--data",
                     "--predict needs the dataset to predict: --data FILE (an HDF5 dataset)");
  if (predict && cl.output.empty())
    throw InputError("", 0, "--output", "--predict needs the file to write: --output FILE");
  if (predict && !cl.run_dir.empty())
    throw InputError("", 0, "--run-dir", "does not apply with --predict: it writes --output");
  if ((evaluate || predict) && !cl.check_data.empty())
    throw InputError("", 0, "--check-data",
                     "give one command: --check-data, --evaluate or --predict");
}

// DECK, or --deck with --check-data: one deck at most, and one of a deck or --check-data.
void resolve_deck_argument(CommandLine& cl, const std::string& deck_option) {
  const bool after_training = !cl.evaluate.empty() || !cl.predict.empty();
  if (!deck_option.empty()) {
    if (cl.check_data.empty() && !after_training)
      throw InputError("", 0, "--deck",
                       "only applies with --check-data, --evaluate or --predict (else give DECK "
                       "alone)");
    if (!cl.deck.empty() && cl.deck != deck_option)
      throw InputError("", 0, "--deck", "two decks given: " + cl.deck + " and " + deck_option);
    cl.deck = deck_option;
  }
  if (cl.deck.empty() && cl.check_data.empty() && !after_training)
    throw InputError("", 0, "DECK",
                     "missing the input deck: wavetrain DECK [options] (wavetrain --help)");
}

CommandLine parse_command_line(int argc, const char* const* argv, std::ostream& out) {
  CommandLine cl;
  bool help_deck = false, version = false;

  CLI::App app(kDescription, "wavetrain");
  app.footer(kFooter);
  app.set_help_flag("-h,--help", "Print this help and exit");
  app.add_option("DECK", cl.deck, "Input deck (TOML), e.g. inputs/fashion_lenet.toml");
  std::string walltime;
  add_run_options(app, cl, walltime);
  add_inspection_options(app, cl);
  std::string deck_option;
  app.add_option("--check-data", cl.check_data,
                 "Open a dataset as a run would and print its splits, counts, shapes, dtypes, "
                 "class balance and value ranges; with --deck, check it against the deck's model "
                 "too; exit 0 if a run would accept it, 2 with the run's message if not")
      ->type_name("FILE");
  add_after_training_options(app, cl);
  app.add_option("--deck", deck_option,
                 "The deck for --check-data, --evaluate or --predict (or give it as DECK)")
      ->type_name("DECK");
  app.add_flag("--help-deck", help_deck, "List every deck key with type, default and meaning");
  app.add_flag("--version", version, "Print the version and exit");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    cl.exit_now = true;
    return cl;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    const std::string option = option_in(message);
    // CLI11 starts some messages with the option itself; the error names it already.
    if (!option.empty() && message.rfind(option + ": ", 0) == 0)
      message = message.substr(option.size() + 2);
    throw InputError("", 0, option, message + " (wavetrain --help lists the options)");
  }

  if (version) {
    out << "wavetrain " << wavetrain_version() << "\n" << host_conv_description() << "\n";
    cl.exit_now = true;
    return cl;
  }
  if (help_deck) {
    out << schema_help();
    cl.exit_now = true;
    return cl;
  }
  check_after_training_options(cl);
  resolve_deck_argument(cl, deck_option);
  for (const std::string& o : cl.overrides) check_override_shape(o);
  check_option_combinations(cl);
  if (!walltime.empty()) cl.walltime_s = parse_walltime(walltime);
  return cl;
}

CommandLine parse_command_line(int argc, char** argv) {
  return parse_command_line(argc, argv, std::cout);
}

}  // namespace wt
