// The wavetrain command line: options into CommandLine, help/version without exiting, and bad
// usage as InputError naming the option.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "app/command_line.hpp"
#include "util/input_error.hpp"

namespace wt {
namespace {

CommandLine parse(std::vector<const char*> args, std::string* printed = nullptr) {
  args.insert(args.begin(), "wavetrain");
  std::ostringstream out;
  CommandLine cl = parse_command_line(static_cast<int>(args.size()), args.data(), out);
  if (printed) *printed = out.str();
  return cl;
}

// The InputError's key, or "<none>" when parsing succeeded.
std::string error_key(std::vector<const char*> args, std::string* message = nullptr) {
  try {
    parse(args);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "");
    EXPECT_EQ(e.line(), 0);
    if (message) *message = e.what();
    return e.key();
  }
  return "<none>";
}

TEST(CommandLine, EverythingParses) {
  const CommandLine cl = parse({"inputs/a.toml", "--set", "optimizer.lr=0.1", "--set",
                                "train.epochs=2", "--run-dir", "runs/x", "--restart", "--steps",
                                "40", "--quiet", "--show-stages", "--show-schedule"});
  EXPECT_EQ(cl.deck, "inputs/a.toml");
  EXPECT_EQ(cl.overrides, (std::vector<std::string>{"optimizer.lr=0.1", "train.epochs=2"}));
  EXPECT_EQ(cl.run_dir, "runs/x");
  EXPECT_TRUE(cl.restart);
  EXPECT_EQ(cl.steps, 40);
  EXPECT_TRUE(cl.quiet);
  EXPECT_TRUE(cl.show_stages);
  EXPECT_TRUE(cl.show_schedule);
  EXPECT_FALSE(cl.exit_now);
}

TEST(CommandLine, DefaultsAndOptionsBeforeTheDeck) {
  const CommandLine cl = parse({"--set=run.name=a", "deck.toml"});
  EXPECT_EQ(cl.deck, "deck.toml");
  EXPECT_EQ(cl.overrides, (std::vector<std::string>{"run.name=a"}));
  EXPECT_EQ(cl.run_dir, "");
  EXPECT_FALSE(cl.restart);
  EXPECT_EQ(cl.steps, 0);
  EXPECT_FALSE(cl.quiet);
}

TEST(CommandLine, HelpExplainsItself) {
  std::string printed;
  const CommandLine cl = parse({"--help"}, &printed);
  EXPECT_TRUE(cl.exit_now);
  for (const char* part : {"MPI", "mpirun -n", "--set", "--run-dir", "--restart", "--steps",
                           "--help-deck", "--show-schedule", "--version"})
    EXPECT_NE(printed.find(part), std::string::npos) << part << " not in:\n" << printed;
}

TEST(CommandLine, VersionAndHelpDeckNeedNoDeck) {
  std::string printed;
  EXPECT_TRUE(parse({"--version"}, &printed).exit_now);
  EXPECT_EQ(printed.rfind(std::string("wavetrain ") + wavetrain_version() + "\n", 0), 0u)
      << printed;
  EXPECT_NE(printed.find("host convolutions"), std::string::npos) << printed;
  EXPECT_TRUE(parse({"--help-deck"}, &printed).exit_now);
  EXPECT_NE(printed.find("[optimizer]"), std::string::npos);
  EXPECT_NE(printed.find("global_batch"), std::string::npos);
}

TEST(CommandLine, BadUsageNamesTheOption) {
  std::string message;
  EXPECT_EQ(error_key({}, &message), "DECK");
  EXPECT_NE(message.find("missing the input deck"), std::string::npos) << message;
  EXPECT_EQ(error_key({"d.toml", "--frobnicate"}, &message), "--frobnicate");
  EXPECT_NE(message.find("--help"), std::string::npos) << message;
  EXPECT_EQ(error_key({"d.toml", "--steps", "many"}), "--steps");
  EXPECT_EQ(error_key({"d.toml", "--steps", "0"}), "--steps");
  EXPECT_EQ(error_key({"d.toml", "--steps"}), "--steps");
  EXPECT_EQ(error_key({"d.toml", "--run-dir"}), "--run-dir");
  EXPECT_EQ(error_key({"d.toml", "--set", "epochs=3"}, &message), "--set");
  EXPECT_NE(message.find("section.key=value"), std::string::npos) << message;
  EXPECT_EQ(error_key({"d.toml", "--set", "train.epochs"}), "--set");
  EXPECT_EQ(error_key({"d.toml", "second.toml"}), "");
}

// Range messages state the real range, not a 309-digit double limit.
TEST(CommandLine, RangeMessagesSayTheRealRange) {
  std::string message;
  EXPECT_EQ(error_key({"d.toml", "--steps", "0"}, &message), "--steps");
  EXPECT_NE(message.find("1 to 1000000000000"), std::string::npos) << message;
  EXPECT_LT(message.size(), 200u) << message;
  EXPECT_EQ(error_key({"d.toml", "--steps", "99999999999999999999"}, &message), "--steps");
  EXPECT_EQ(error_key({"d.toml", "--show-stages", "--ranks", "-1"}, &message), "--ranks");
  EXPECT_NE(message.find("1 to 1048576"), std::string::npos) << message;
}

TEST(CommandLine, RanksOnlyForInspection) {
  std::string message;
  EXPECT_EQ(error_key({"d.toml", "--ranks", "4"}, &message), "--ranks");
  EXPECT_NE(message.find("mpirun -n"), std::string::npos) << message;
  EXPECT_EQ(parse({"d.toml", "--ranks", "4", "--show-schedule"}).ranks, 4);
}

TEST(CommandLine, WalltimeClockFieldsAreAtMost59) {
  EXPECT_DOUBLE_EQ(parse({"d.toml", "--walltime", "90:00"}).walltime_s, 5400);  // Slurm's MM:SS
  EXPECT_DOUBLE_EQ(parse({"d.toml", "--walltime", "1:30:05"}).walltime_s, 5405);
  EXPECT_DOUBLE_EQ(parse({"d.toml", "--walltime", "7200"}).walltime_s, 7200);
  std::string message;
  for (const char* bad : {"1:75", "2:00:60", "1:60:00"}) {
    EXPECT_EQ(error_key({"d.toml", "--walltime", bad}, &message), "--walltime") << bad;
    EXPECT_NE(message.find("0 to 59"), std::string::npos) << message;
  }
}

TEST(CommandLine, Overwrite) {
  EXPECT_TRUE(parse({"d.toml", "--overwrite"}).overwrite);
  EXPECT_FALSE(parse({"d.toml"}).overwrite);
  EXPECT_TRUE(parse({"d.toml", "--overwrite", "--restart-from", "x.h5"}).overwrite);
  std::string message;
  EXPECT_EQ(error_key({"d.toml", "--overwrite", "--restart"}, &message), "--overwrite");
  EXPECT_NE(message.find("give one of them"), std::string::npos) << message;
  std::string help;
  parse({"--help"}, &help);
  for (const char* said : {"--overwrite", "never written over", "runs/<deck file name"})
    EXPECT_NE(help.find(said), std::string::npos) << said;
}

TEST(CommandLine, RestartFromAndSkipLocked) {
  const CommandLine from = parse({"d.toml", "--restart-from", "other/checkpoints/step_10.h5"});
  EXPECT_EQ(from.restart_from, "other/checkpoints/step_10.h5");
  EXPECT_FALSE(from.restart);
  EXPECT_TRUE(parse({"d.toml", "--restart", "--skip-locked"}).skip_locked);
  EXPECT_FALSE(parse({"d.toml", "--restart"}).skip_locked);
  std::string message;
  EXPECT_EQ(error_key({"d.toml", "--restart", "--restart-from", "x.h5"}, &message),
            "--restart-from");
  EXPECT_NE(message.find("leave out --restart"), std::string::npos) << message;
  EXPECT_EQ(error_key({"d.toml", "--restart-from", "x.h5", "--skip-locked"}, &message),
            "--skip-locked");
  std::string help;
  parse({"--help"}, &help);
  for (const char* said : {"--restart-from", "--skip-locked", "SIGINT", "run_id"})
    EXPECT_NE(help.find(said), std::string::npos) << said;
}

// --check-data needs no deck; --deck names one for it (or DECK does), and only for it.
TEST(CommandLine, CheckDataTakesAnOptionalDeck) {
  CommandLine cl = parse({"--check-data", "d.h5"});
  EXPECT_EQ(cl.check_data, "d.h5");
  EXPECT_EQ(cl.deck, "");
  cl = parse({"--check-data", "d.h5", "--deck", "inputs/a.toml"});
  EXPECT_EQ(cl.deck, "inputs/a.toml");
  cl = parse({"inputs/a.toml", "--check-data", "d.h5"});
  EXPECT_EQ(cl.deck, "inputs/a.toml");
  EXPECT_EQ(error_key({"inputs/a.toml", "--deck", "inputs/a.toml"}), "--deck");
  EXPECT_EQ(error_key({"inputs/a.toml", "--check-data", "d.h5", "--deck", "inputs/b.toml"}),
            "--deck");
  EXPECT_EQ(error_key({"--deck", "inputs/a.toml"}), "--deck");
}

// --evaluate and --predict need no deck (the checkpoint has one); each takes what it needs only.
TEST(CommandLine, EvaluateAndPredict) {
  CommandLine cl = parse({"--evaluate", "c.h5"});
  EXPECT_EQ(cl.evaluate, "c.h5");
  EXPECT_EQ(cl.deck, "");
  cl = parse({"--evaluate", "c.h5", "--data", "d.h5", "--run-dir", "r", "--deck", "a.toml"});
  EXPECT_EQ(cl.data, "d.h5");
  EXPECT_EQ(cl.deck, "a.toml");
  cl = parse({"a.toml", "--predict", "c.h5", "--data", "d.h5", "--output", "p.csv"});
  EXPECT_EQ(cl.predict, "c.h5");
  EXPECT_EQ(cl.output, "p.csv");
  EXPECT_EQ(cl.deck, "a.toml");
  std::string message;
  EXPECT_EQ(error_key({"--predict", "c.h5", "--output", "p.csv"}, &message), "--data");
  EXPECT_NE(message.find("--predict needs the dataset"), std::string::npos) << message;
  EXPECT_EQ(error_key({"--predict", "c.h5", "--data", "d.h5"}), "--output");
  EXPECT_EQ(error_key({"--predict", "c.h5", "--data", "d.h5", "--output", "p", "--run-dir", "r"}),
            "--run-dir");
  EXPECT_EQ(error_key({"--evaluate", "c.h5", "--output", "p.csv"}), "--output");
  EXPECT_EQ(error_key({"--evaluate", "c.h5", "--predict", "c.h5"}), "--predict");
  EXPECT_EQ(error_key({"a.toml", "--data", "d.h5"}), "--data");
  EXPECT_EQ(error_key({"--evaluate", "c.h5", "--check-data", "d.h5"}), "--check-data");
}

}  // namespace
}  // namespace wt
