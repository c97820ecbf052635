// Input deck parsing: defaults, every kind of error (file, line, key, what is allowed),
// command-line overrides and the resolved-deck round trip.
#include <gtest/gtest.h>
#ifdef WAVETRAIN_HAVE_CUDA
#include "device/cuda/gpu_probe.hpp"
#endif
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include "deck/component_options.hpp"
#include "deck/deck_parser.hpp"
#include "deck/schema.hpp"
#include "job/run_preflight.hpp"
#include "util/input_error.hpp"

namespace fs = std::filesystem;

namespace wt {
namespace {

class DeckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "wt_deck_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir = pattern;
    write("data.h5", "not really HDF5; only its existence is checked");
    write("model.toml", "# a model file\n");
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

  // A deck with the two required keys on lines 1-4, followed by `extra`.
  std::string deck(const std::string& extra) {
    return write("deck.toml",
                 "[data]\npath = \"data.h5\"\n[model]\nfile = \"model.toml\"\n" + extra);
  }

  // Parses `path` and checks the InputError: line, key and that the message contains `parts`.
  void expect_error(const std::string& path, int line, const std::string& key,
                    std::initializer_list<const char*> parts,
                    const std::vector<std::string>& overrides = {}) {
    try {
      parse_deck(path, overrides);
      ADD_FAILURE() << "no InputError for " << key;
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_EQ(e.key(), key) << e.what();
      for (const char* part : parts)
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
            << "'" << part << "' not in: " << e.what();
    }
  }

  fs::path dir;
};

// Without run.name the run directory names the deck: two decks never share runs/run by default.
TEST_F(DeckTest, RunNameDefaultsToTheDeckFileStem) {
  const std::string body = "[data]\npath = \"data.h5\"\n[model]\nfile = \"model.toml\"\n";
  EXPECT_EQ(parse_deck(write("lenet_sweep.toml", body)).run.name, "lenet_sweep");
  EXPECT_EQ(parse_deck(write("v2.lenet.toml", body)).run.name, "v2.lenet");
  EXPECT_EQ(parse_deck(write("lenet_sweep.toml", body + "[run]\nname = \"mine\"\n")).run.name,
            "mine");
  EXPECT_EQ(parse_deck(write("lenet_sweep.toml", body), {"run.name=lr03"}).run.name, "lr03");
}

TEST_F(DeckTest, MinimalDeckGetsDefaultsAndAbsolutePaths) {
  const RunConfig c = parse_deck(deck(""));
  const RunConfig defaults;
  EXPECT_EQ(c.data.path, (dir / "data.h5").string());
  EXPECT_EQ(c.model.file, (dir / "model.toml").string());
  EXPECT_EQ(c.deck_path, (dir / "deck.toml").string());
  EXPECT_EQ(c.optimizer.kind, defaults.optimizer.kind);
  EXPECT_EQ(c.optimizer.lr, defaults.optimizer.lr);
  EXPECT_EQ(c.train.global_batch, defaults.train.global_batch);
  EXPECT_EQ(c.schedule.kind, "gang");
  EXPECT_EQ(c.checkpoint.keep, defaults.checkpoint.keep);
  EXPECT_EQ(c.run.seed, defaults.run.seed);
  EXPECT_TRUE(c.schedule.cuts.empty());
  EXPECT_EQ(c.device.release_threshold, 0);
  EXPECT_EQ(c.device.max_split_bytes, 0);
}

TEST_F(DeckTest, ValuesAreReadAndIntegersPassAsFloats) {
  const RunConfig c =
      parse_deck(deck("[optimizer]\nkind = \"adamw\"\nlr = 1\nweight_decay = 5e-4\n"
                      "[train]\nepochs = 10\nglobal_batch = 128\n[schedule]\ncuts = [3, 9]\n"
                      "[run]\nseed = 42\ndeterministic = false\nname = \"trial\"\n"));
  EXPECT_EQ(c.optimizer.kind, "adamw");
  EXPECT_EQ(c.optimizer.lr, 1.0);
  EXPECT_EQ(c.optimizer.weight_decay, 5e-4);
  EXPECT_EQ(c.train.epochs, 10);
  EXPECT_EQ(c.train.global_batch, 128);
  EXPECT_EQ(c.schedule.cuts, (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(c.run.seed, 42u);
  EXPECT_FALSE(c.run.deterministic);
  EXPECT_EQ(c.run.name, "trial");
}

TEST_F(DeckTest, PathsResolveAgainstTheDeckDirectory) {
  write("sub/inputs/placeholder", "");
  write("models/net.toml", "");
  const std::string path =
      write("sub/inputs/d.toml", "[data]\npath = \"../../data.h5\"\n[model]\nfile = \"" +
                                     (dir / "models/net.toml").string() + "\"\n");
  const RunConfig c = parse_deck(path);
  EXPECT_EQ(c.data.path, (dir / "data.h5").string());
  EXPECT_EQ(c.model.file, (dir / "models/net.toml").string());
}

TEST_F(DeckTest, UnknownSectionListsTheKnownOnes) {
  expect_error(deck("[optimiser]\nlr = 0.1\n"), 5, "optimiser",
               {"unknown section [optimiser]", "known: run, data, model, optimizer"});
}

TEST_F(DeckTest, UnknownKeyListsTheSectionsKeys) {
  expect_error(deck("[train]\nepochs = 2\nbatch = 64\n"), 7, "train.batch",
               {"unknown key 'batch'", "global_batch", "eval_batch", "epochs"});
}

TEST_F(DeckTest, TopLevelKeyIsRejected) {
  expect_error(write("deck.toml", "seed = 3\n[data]\npath = \"data.h5\"\n"), 1, "seed",
               {"inside a section"});
}

TEST_F(DeckTest, WrongTypes) {
  expect_error(deck("[train]\nepochs = \"ten\"\n"), 6, "train.epochs",
               {"must be an integer, got a string"});
  expect_error(deck("[train]\nglobal_batch = 64.5\n"), 6, "train.global_batch",
               {"must be an integer, got a float"});
  expect_error(deck("[optimizer]\nlr = \"fast\"\n"), 6, "optimizer.lr", {"must be a number"});
  expect_error(deck("[run]\ndeterministic = 1\n"), 6, "run.deterministic", {"true or false"});
  expect_error(deck("[schedule]\ncuts = 3\n"), 6, "schedule.cuts", {"array of integers"});
  expect_error(deck("[schedule]\ncuts = [3, \"x\"]\n"), 6, "schedule.cuts",
               {"array of integers, found a string"});
  expect_error(deck("[run]\nname = 5\n"), 6, "run.name", {"must be a string"});
  expect_error(deck("[schedule]\nwave_offset = \"no\"\n"), 6, "schedule.wave_offset",
               {"true or false"});
  expect_error(deck("[device]\nrelease_threshold = \"1 GB\"\n"), 6, "device.release_threshold",
               {"must be an integer, got a string"});
  expect_error(deck("[device]\nmax_split_bytes = 1.5e6\n"), 6, "device.max_split_bytes",
               {"must be an integer, got a float"});
}

TEST_F(DeckTest, OutOfRangeValuesSayWhatIsAllowed) {
  expect_error(deck("[optimizer]\nlr = 0\n"), 6, "optimizer.lr", {"must be > 0", "got 0"});
  expect_error(deck("[optimizer]\nlr = -0.5\n"), 6, "optimizer.lr", {"must be > 0"});
  expect_error(deck("[train]\nglobal_batch = 0\n"), 6, "train.global_batch", {"must be >= 1"});
  expect_error(deck("[checkpoint]\nkeep = 0\n"), 6, "checkpoint.keep", {"must be >= 1"});
  expect_error(deck("[run]\nprogress_seconds = -1\n"), 6, "run.progress_seconds", {"must be > 0"});
  expect_error(deck("[optimizer]\nmomentum = 1.0\n"), 6, "optimizer.momentum",
               {"must be in [0, 1)"});
  expect_error(deck("[run]\nseed = -4\n"), 6, "run.seed", {">= 0"});
  expect_error(deck("[optimizer]\nlr = inf\n"), 6, "optimizer.lr", {"finite"});
  expect_error(deck("[schedule]\ncuts = [4, 0]\n"), 6, "schedule.cuts", {"every element", ">= 1"});
  expect_error(deck("[device]\nrelease_threshold = -1\n"), 6, "device.release_threshold",
               {"must be >= 0", "got -1"});
  expect_error(deck("[device]\nmax_split_bytes = -1048576\n"), 6, "device.max_split_bytes",
               {"must be >= 0", "got -1048576"});
}

TEST_F(DeckTest, UnknownStringValuesListTheKnownOnes) {
  expect_error(
      deck("[schedule]\nkind = \"foo\"\n"), 6, "schedule.kind",
      {"unknown schedule kind 'foo' (known: burst, gang, pipeline, ticktock, waves, auto)"});
  expect_error(deck("[optimizer]\nkind = \"adam\"\n"), 6, "optimizer.kind",
               {"unknown optimizer kind 'adam' (known: sgd, adamw)"});
  expect_error(deck("[schedule]\nbalance = \"time\"\n"), 6, "schedule.balance",
               {"'time'", "known: profile, flops"});
  expect_error(deck("[checkpoint]\nrestart = \"yes\"\n"), 6, "checkpoint.restart",
               {"unknown restart 'yes' (known: never, auto)"});
  expect_error(deck("[run]\nname = \"a/b\"\n"), 6, "run.name", {"without '/'"});
  expect_error(deck("[run]\nname = \"..\"\n"), 6, "run.name", {"must be a name"});
  expect_error(deck("[run]\nname = \"" + std::string(256, 'x') + "\"\n"), 6, "run.name",
               {"256 bytes long", "at most 255"});
  expect_error(deck("[run]\nname = \"a\\u0000b\"\n"), 6, "run.name", {"NUL character"});
  expect_error(deck("[optimizer]\nkind = \"sgd\\u0000\"\n"), 6, "optimizer.kind",
               {"unknown optimizer kind"});
  expect_error(deck("[run]\noutput_dir = \"r\\u0000s\"\n"), 6, "run.output_dir", {"NUL character"});
  expect_error(deck("[failure]\non_explosion = \"ignore\"\n"), 6, "failure.on_explosion",
               {"unknown on_explosion 'ignore' (known: warn, stop, off)"});
  expect_error(deck("[failure]\non_explosion = true\n"), 6, "failure.on_explosion",
               {"must be a string, got a boolean"});
}

// A misspelt device.kind names every kind, the GPU's included; "cuda" itself passes the parser
// and is refused before the run (job/run_preflight.hpp), naming its line and what it needs.
TEST_F(DeckTest, DeviceKindNamesTheKindsAndWhatCudaNeeds) {
  expect_error(deck("[device]\nkind = \"gpu\"\n"), 6, "device.kind",
               {"unknown device kind 'gpu' (known: ", "host", "strict", "cuda"});
  const RunConfig cuda = parse_deck(deck("[device]\nkind = \"cuda\"\n"));
#ifdef WAVETRAIN_HAVE_CUDA
  if (wt::cuda::probe_gpus().count > 0) GTEST_SKIP() << "a GPU is visible: cuda is not refused";
#endif
  try {
    check_device_kind(cuda);
    ADD_FAILURE() << "device.kind = \"cuda\" should be refused without a GPU";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 6) << e.what();
    EXPECT_EQ(e.key(), "device.kind") << e.what();
#ifdef WAVETRAIN_HAVE_CUDA
    const char* why = "this build has CUDA, but this rank sees no GPU (";
#else
    const char* why = "'cuda' needs wavetrain built with CUDA (cmake -DWAVETRAIN_CUDA=ON";
#endif
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
  for (const char* kind : {"auto", "cpu", "host", "strict"})
    EXPECT_NO_THROW(check_device_kind(parse_deck(deck(""), {std::string("device.kind=") + kind})));
}

TEST_F(DeckTest, AutoDeviceIsTheHostWithoutAGpuAndOtherKindsStayAsWritten) {
  std::string why;
  const RunConfig automatic = parse_deck(deck(""), {"device.kind=auto"});
#ifdef WAVETRAIN_HAVE_CUDA
  if (wt::cuda::probe_gpus().count > 0) {  // a GPU machine: one rank here has one of its own
    EXPECT_EQ(resolve_device_kind(automatic, &why), "cuda") << why;
    return;
  }
  EXPECT_EQ(resolve_device_kind(automatic, &why), "host");
  EXPECT_NE(why.find("no GPU visible: "), std::string::npos) << why;
#else
  EXPECT_EQ(resolve_device_kind(automatic, &why), "host");
  EXPECT_EQ(why, "a build without CUDA");
#endif
  for (const char* kind : {"cpu", "host", "strict", "cuda"})
    EXPECT_EQ(resolve_device_kind(parse_deck(deck(""), {std::string("device.kind=") + kind}), &why),
              kind);
}

TEST_F(DeckTest, FirstErrorInTheFileIsReported) {
  // toml++ stores keys sorted; the parser must still report line 6 (zzz) before line 7 (aaa).
  expect_error(deck("[train]\nzzz = 1\naaa = 2\n"), 6, "train.zzz", {"unknown key 'zzz'"});
}

TEST_F(DeckTest, CrossKeyRules) {
  expect_error(deck("[optimizer]\nmomentum = 0\nnesterov = true\n"), 7, "optimizer.nesterov",
               {"momentum > 0"});
  expect_error(deck("[schedule]\ncuts = [5, 5]\n"), 6, "schedule.cuts", {"strictly increasing"});
  expect_error(deck("[trace]\nstart_step = 30\nend_step = 20\n"), 7, "trace.end_step",
               {"> trace.start_step"});
  expect_error(deck("[optimizer]\nlr = 0.01\n[lr_schedule]\nkind = \"cosine\"\nmin_lr = 0.1\n"), 9,
               "lr_schedule.min_lr", {"<= optimizer.lr"});
  // Only ticktock has two waves whose offset could be switched off.
  expect_error(deck("[schedule]\nkind = \"gang\"\nwave_offset = false\n"), 7,
               "schedule.wave_offset", {"needs schedule.kind = \"ticktock\"", "got \"gang\""});
  EXPECT_FALSE(parse_deck(deck("[schedule]\nkind = \"ticktock\"\nwave_offset = false\n"), {})
                   .schedule.wave_offset);
}

TEST_F(DeckTest, SyntaxErrorGivesTheLine) {
  expect_error(deck("[train]\nepochs = = 3\n"), 6, "", {"TOML syntax error"});
  expect_error(deck("[train\n"), 5, "", {"TOML syntax error"});
}

TEST_F(DeckTest, RequiredKeysMustBePresent) {
  expect_error(write("deck.toml", "[model]\nfile = \"model.toml\"\n"), 0, "data.path",
               {"required key missing", "[data]"});
  expect_error(write("deck.toml", "[data]\npath = \"data.h5\"\n"), 0, "model.file",
               {"required key missing"});
}

TEST_F(DeckTest, MissingFilesNameTheirDeckLine) {
  expect_error(write("deck.toml", "[data]\npath = \"data.h5\"\n\n[model]\nfile = \"nope.toml\"\n"),
               5, "model.file", {"file not found", "nope.toml", "resolve against"});
  expect_error(write("deck.toml", "[model]\nfile = \"model.toml\"\n[data]\npath = \"gone.h5\"\n"),
               4, "data.path", {"file not found", "gone.h5"});
  expect_error(write("deck.toml", "[model]\nfile = \".\"\n[data]\npath = \"data.h5\"\n"), 2,
               "model.file", {"is a directory"});
}

TEST_F(DeckTest, UnreadableDeck) {
  const std::string missing = (dir / "absent.toml").string();
  try {
    parse_deck(missing);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), missing);
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("not found"), std::string::npos);
  }
  expect_error(dir.string(), 0, "", {"directory"});
}

TEST_F(DeckTest, OverridesApplyAfterTheDeck) {
  const RunConfig c =
      parse_deck(deck("[optimizer]\nlr = 0.05\n"),
                 {"optimizer.lr=0.2", "run.name=trial3", "schedule.cuts=[2, 4]", "train.epochs = 7",
                  "run.output_dir=\"out dir\"", "data.shuffle=false"});
  EXPECT_EQ(c.optimizer.lr, 0.2);
  EXPECT_EQ(c.run.name, "trial3");  // bare word accepted for strings
  EXPECT_EQ(c.schedule.cuts, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(c.train.epochs, 7);
  EXPECT_EQ(c.run.output_dir, "out dir");
  EXPECT_FALSE(c.data.shuffle);
}

TEST_F(DeckTest, OverridePathsResolveAgainstTheWorkingDirectory) {
  write("elsewhere/other.h5", "");
  const fs::path cwd = fs::current_path();
  fs::current_path(dir / "elsewhere");
  RunConfig c;
  EXPECT_NO_THROW(c = parse_deck(deck(""), {"data.path=other.h5"}));
  fs::current_path(cwd);
  EXPECT_EQ(c.data.path, (dir / "elsewhere/other.h5").string());
}

TEST_F(DeckTest, BadOverridesNameTheCommandLine) {
  const std::string d = deck("");
  expect_error(d, 0, "optimizer.lr", {"command line", "must be > 0"}, {"optimizer.lr=-1"});
  expect_error(d, 0, "optimizer.lr", {"cannot read 'fast' as a float"}, {"optimizer.lr=fast"});
  expect_error(d, 0, "train.epochs", {"must be an integer"}, {"train.epochs=2.5"});
  expect_error(d, 0, "train.batch", {"unknown key 'batch'", "global_batch"}, {"train.batch=3"});
  expect_error(d, 0, "trian.epochs", {"unknown section 'trian'"}, {"trian.epochs=3"});
  expect_error(d, 0, "--set", {"section.key=value"}, {"epochs=3"});
  expect_error(d, 0, "schedule.kind", {"known: burst, gang, pipeline"}, {"schedule.kind=foo"});
  expect_error(d, 0, "burst.cost_model", {"executor", "deeppool"}, {"burst.cost_model=paper"});
  expect_error(d, 0, "model.file", {"command line", "file not found"}, {"model.file=missing.toml"});
  // An override that breaks a cross-key rule is blamed on the command line.
  expect_error(d, 0, "optimizer.nesterov", {"command line", "momentum > 0"},
               {"optimizer.momentum=0", "optimizer.nesterov=true"});
}

// A key placed from another deck (a co-location deck's, over each job's) overrides the deck's own,
// and a rule it breaks names the line that set it there; the command line still comes last.
TEST_F(DeckTest, PlacedOverridesNameTheFileThatSetThem) {
  const std::string d = deck("[optimizer]\nkind = \"sgd\"\nnesterov = true\nmomentum = 0.9\n");
  const std::string other = (dir / "hpo.toml").string();
  const RunConfig c = parse_deck(d, {"optimizer.lr=0.3"},
                                 {{"optimizer.lr=0.2", other, 7}, {"train.epochs=3", other, 9}});
  EXPECT_EQ(c.optimizer.lr, 0.3);
  EXPECT_EQ(c.train.epochs, 3);
  EXPECT_EQ(c.key_origins.at("train.epochs").file, other);
  EXPECT_EQ(c.key_origins.at("train.epochs").line, 9);
  try {
    parse_deck(d, {}, {{"optimizer.momentum=0.0", other, 6}});
    ADD_FAILURE() << "nesterov without momentum accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), d) << e.what();  // the rule is checked at the key the deck set last
    EXPECT_EQ(e.key(), "optimizer.nesterov");
  }
  try {
    parse_deck(d, {}, {{"train.epochs=0", other, 9}});
    ADD_FAILURE() << "epochs = 0 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), other) << e.what();
    EXPECT_EQ(e.line(), 9);
    EXPECT_EQ(e.key(), "train.epochs");
  }
}

// Every field, compared one by one (deck_path aside: it names the file parsed).
void expect_same_settings(const RunConfig& a, const RunConfig& b) {
  EXPECT_EQ(a.run.name, b.run.name);
  EXPECT_EQ(a.burst.amp_limit, b.burst.amp_limit);
  EXPECT_EQ(a.burst.amp_exempt_s, b.burst.amp_exempt_s);
  EXPECT_EQ(a.burst.ranks, b.burst.ranks);
  EXPECT_EQ(a.burst.cost_model, b.burst.cost_model);
  EXPECT_EQ(a.run.output_dir, b.run.output_dir);
  EXPECT_EQ(a.run.seed, b.run.seed);
  EXPECT_EQ(a.run.deterministic, b.run.deterministic);
  EXPECT_EQ(a.run.progress_seconds, b.run.progress_seconds);
  EXPECT_EQ(a.data.path, b.data.path);
  EXPECT_EQ(a.data.train_split, b.data.train_split);
  EXPECT_EQ(a.data.test_split, b.data.test_split);
  EXPECT_EQ(a.data.shuffle, b.data.shuffle);
  EXPECT_EQ(a.data.preload, b.data.preload);
  EXPECT_EQ(a.model.file, b.model.file);
  EXPECT_EQ(a.optimizer.kind, b.optimizer.kind);
  EXPECT_EQ(a.optimizer.lr, b.optimizer.lr);
  EXPECT_EQ(a.optimizer.momentum, b.optimizer.momentum);
  EXPECT_EQ(a.optimizer.weight_decay, b.optimizer.weight_decay);
  EXPECT_EQ(a.optimizer.nesterov, b.optimizer.nesterov);
  EXPECT_EQ(a.optimizer.beta1, b.optimizer.beta1);
  EXPECT_EQ(a.optimizer.beta2, b.optimizer.beta2);
  EXPECT_EQ(a.optimizer.eps, b.optimizer.eps);
  EXPECT_EQ(a.lr_schedule.kind, b.lr_schedule.kind);
  EXPECT_EQ(a.lr_schedule.warmup_steps, b.lr_schedule.warmup_steps);
  EXPECT_EQ(a.lr_schedule.step_size, b.lr_schedule.step_size);
  EXPECT_EQ(a.lr_schedule.gamma, b.lr_schedule.gamma);
  EXPECT_EQ(a.lr_schedule.min_lr, b.lr_schedule.min_lr);
  EXPECT_EQ(a.schedule.kind, b.schedule.kind);
  EXPECT_EQ(a.schedule.bucket_bytes, b.schedule.bucket_bytes);
  EXPECT_EQ(a.schedule.microbatches, b.schedule.microbatches);
  EXPECT_EQ(a.schedule.cuts, b.schedule.cuts);
  EXPECT_EQ(a.train.epochs, b.train.epochs);
  EXPECT_EQ(a.train.max_steps, b.train.max_steps);
  EXPECT_EQ(a.train.global_batch, b.train.global_batch);
  EXPECT_EQ(a.train.eval_batch, b.train.eval_batch);
  EXPECT_EQ(a.train.eval_every_epoch, b.train.eval_every_epoch);
  EXPECT_EQ(a.train.log_every_steps, b.train.log_every_steps);
  EXPECT_EQ(a.checkpoint.dir, b.checkpoint.dir);
  EXPECT_EQ(a.checkpoint.every_steps, b.checkpoint.every_steps);
  EXPECT_EQ(a.checkpoint.every_seconds, b.checkpoint.every_seconds);
  EXPECT_EQ(a.checkpoint.keep, b.checkpoint.keep);
  EXPECT_EQ(a.checkpoint.restart, b.checkpoint.restart);
  EXPECT_EQ(a.trace.enabled, b.trace.enabled);
  EXPECT_EQ(a.trace.start_step, b.trace.start_step);
  EXPECT_EQ(a.trace.end_step, b.trace.end_step);
  const RunConfig::Background &x = a.background, &y = b.background;
  EXPECT_EQ(x.deck, y.deck);
  EXPECT_EQ(x.tasklet_ms, y.tasklet_ms);
  EXPECT_EQ(x.depth, y.depth);
  EXPECT_EQ(x.slowdown_target, y.slowdown_target);
  EXPECT_EQ(x.ewma_fast, y.ewma_fast);
  EXPECT_EQ(x.ewma_slow, y.ewma_slow);
  EXPECT_EQ(x.recv_min_ms, y.recv_min_ms);
  EXPECT_EQ(x.block_during_allreduce, y.block_during_allreduce);
  EXPECT_EQ(x.warmup_steps, y.warmup_steps);
  EXPECT_EQ(x.memory_limit, y.memory_limit);
  EXPECT_EQ(x.priority, y.priority);
  EXPECT_EQ(x.pacing, y.pacing);
  EXPECT_EQ(x.feedback, y.feedback);
  EXPECT_EQ(x.fit_to_wait, y.fit_to_wait);
  EXPECT_EQ(x.policy, y.policy);
  EXPECT_EQ(x.microbatches, y.microbatches);
  EXPECT_EQ(x.solo_every, y.solo_every);
  EXPECT_EQ(a.device.kind, b.device.kind);
  EXPECT_EQ(a.device.memory_limit, b.device.memory_limit);
  EXPECT_EQ(a.device.release_threshold, b.device.release_threshold);
  EXPECT_EQ(a.device.max_split_bytes, b.device.max_split_bytes);
}

TEST_F(DeckTest, ResolvedDeckRoundTrips) {
  // Every key away from its default, including values that print awkwardly.
  write("bg.toml", "# a background deck\n");
  const RunConfig x = parse_deck(write(
      "deck.toml",
      "[model]\nfile = \"model.toml\"\n"
      "[run]\nname = \"r\\\"q\\\\uote\"\noutput_dir = \"/tmp/x y\"\nseed = 9007199254740993\n"
      "deterministic = false\nprogress_seconds = 0.1\n"
      "[data]\npath = \"data.h5\"\ntrain_split = \"tr\"\ntest_split = \"te\"\nshuffle = "
      "false\npreload = false\n"
      "[optimizer]\nkind = \"adamw\"\nlr = 0.0003\nmomentum = 0.95\nweight_decay = 1e-4\n"
      "nesterov = true\nbeta1 = 0.8\nbeta2 = 0.99\neps = 1e-6\n"
      "[lr_schedule]\nkind = \"cosine\"\nwarmup_steps = 7\nstep_size = 33\ngamma = 0.3\n"
      "min_lr = 1e-7\n"
      "[schedule]\nbucket_bytes = 12345\nmicrobatches = 4\ncuts = [2, 5, 11]\n"
      "[auto]\nmeasure = true\nmeasure_steps = 7\nlossy = true\nmemory_margin = 1.25\n"
      "[burst]\namp_limit = 1.5\namp_exempt_s = 1e-4\nranks = [2, 2, 1]\n"
      "cost_model = \"deeppool\"\n"
      "[train]\nepochs = 3\nmax_steps = 99\nglobal_batch = 32\neval_batch = 500\n"
      "eval_every_epoch = false\nlog_every_steps = 7\n"
      "[checkpoint]\ndir = \"ck\"\nevery_steps = 10\nevery_seconds = 2.5\nkeep = 2\n"
      "restart = \"auto\"\n"
      "[trace]\nenabled = true\nstart_step = 3\nend_step = 4\n"
      "[background]\ndeck = \"bg.toml\"\ntasklet_ms = 0.25\ndepth = 2\nslowdown_target = 1.5\n"
      "ewma_fast = 0.9\newma_slow = 0.2\nrecv_min_ms = 2\nblock_during_allreduce = false\n"
      "warmup_steps = 5\nmemory_limit = 1000\npriority = false\npacing = false\n"
      "feedback = false\nfit_to_wait = true\npolicy = \"deeppool\"\nmicrobatches = 2\n"
      "solo_every = 7\n"
      "[device]\nkind = \"cpu\"\nmemory_limit = 1073741824\nrelease_threshold = 536870912\n"
      "max_split_bytes = 4194304\n"));
  EXPECT_EQ(x.run.seed, 9007199254740993u);
  EXPECT_EQ(x.burst.cost_model, "deeppool");
  EXPECT_EQ(x.run.name, "r\"q\\uote");
  EXPECT_EQ(x.background.deck, (dir / "bg.toml").string());  // absolute
  const std::string text = to_toml(x);
  // Written somewhere else: absolute paths make the resolved deck independent of its location.
  const std::string copy = write("run/resolved.toml", text);
  const RunConfig y = parse_deck(copy);
  expect_same_settings(x, y);
  EXPECT_EQ(y.deck_path, copy);

  // Defaults round-trip too, and every schema key appears in the text, but [colocate]'s: a job's
  // deck co-locates nothing, and its resolved deck leaves the section out ([background] too when
  // it has no deck; x's has one).
  const RunConfig d = parse_deck(deck(""));
  expect_same_settings(d, parse_deck(write("run/defaults.toml", to_toml(d))));
  for (const KeyDef& def : deck_schema()) {
    const bool written = text.find("\n" + std::string(def.key) + " = ") != std::string::npos;
    EXPECT_EQ(written, std::string(def.section) != "colocate") << def.dotted();
  }
}

// The allocator keys reach the allocator of the device context a run makes (app/trainer.cpp).
TEST_F(DeckTest, DeviceAllocatorKeysConfigureTheAllocator) {
  CachingAllocator allocator;
  configure_allocator(parse_deck(deck("[device]\nrelease_threshold = 268435456\n"
                                      "max_split_bytes = 8388608\n")),
                      allocator);
  EXPECT_EQ(allocator.release_threshold(), 268435456u);
  EXPECT_EQ(allocator.max_split_bytes(), 8388608u);
  configure_allocator(parse_deck(deck(""), {"device.max_split_bytes=0"}), allocator);
  EXPECT_EQ(allocator.release_threshold(), 0u) << "0 = off";
  EXPECT_EQ(allocator.max_split_bytes(), 0u) << "0 = off";
}

TEST_F(DeckTest, ShippedDecksAreValid) {
  // The decks in inputs/ refer to ../data and ../models; mirror that layout with stand-in files.
  write("data/fashion_mnist.h5", "");
  for (const char* name : {"fashion_lenet", "fashion_mlp", "fashion_resnet"}) {
    std::ifstream in(fs::path(WT_SOURCE_DIR) / "inputs" / (std::string(name) + ".toml"));
    ASSERT_TRUE(in.is_open()) << name;
    std::stringstream text;
    text << in.rdbuf();
    const std::string model = std::string(name).substr(std::string("fashion_").size());
    write("models/" + model + ".toml", "");
    RunConfig c;
    ASSERT_NO_THROW(c = parse_deck(write("inputs/" + std::string(name) + ".toml", text.str())))
        << name;
    EXPECT_EQ(c.run.name, name);
    EXPECT_EQ(c.data.path, (dir / "data/fashion_mnist.h5").string());
    EXPECT_EQ(c.model.file, (dir / "models" / (model + ".toml")).string());
  }
}

TEST(DeckSchema, HelpListsEveryKey) {
  const std::string help = schema_help();
  for (const std::string& section : deck_sections())
    EXPECT_NE(help.find("[" + section + "]"), std::string::npos) << section;
  for (const KeyDef& def : deck_schema())
    EXPECT_NE(help.find("  " + std::string(def.key) + " ("), std::string::npos) << def.dotted();
  EXPECT_NE(help.find("lr (float, > 0)  default 0.01"), std::string::npos) << help;
  EXPECT_NE(help.find("kind (string, burst | gang | pipeline | ticktock | waves | auto)"),
            std::string::npos);
  EXPECT_NE(help.find("path (string)  REQUIRED"), std::string::npos);
}

}  // namespace
}  // namespace wt
