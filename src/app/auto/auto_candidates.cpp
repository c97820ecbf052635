#include "app/auto/auto_candidates.hpp"

#include <toml++/toml.h>

#include <cstdint>
#include <cstdio>
#include <iterator>

#include "app/text_format.hpp"
#include "util/input_error.hpp"

namespace wt {

std::vector<AutoCandidate> auto_candidates(const RunConfig& deck, int ranks) {
  std::vector<RunConfig> configs;
  auto add = [&](const std::string& kind) -> RunConfig& {
    configs.push_back(deck);
    configs.back().schedule.kind = kind;
    return configs.back();
  };
  if (ranks == 1) {
    add("gang");  // nothing to split, no allreduce to bucket
  } else {
    for (int64_t mib : {1, 4, 16}) add("gang").schedule.bucket_bytes = mib << 20;
    for (int64_t m : {1, 2, 4, 8})
      if (deck.train.global_batch % m == 0) add("pipeline").schedule.microbatches = m;
    add("waves");
    add("ticktock");
    for (double amp : {1.5, 2.0, 4.0}) add("burst").burst.amp_limit = amp;
    add("waves").compress.kind = "scalednn";
  }
  std::vector<AutoCandidate> list;
  for (const RunConfig& c : configs)
    list.push_back({describe(schedule_choice(c)), c, c.compress.active()});
  return list;
}

ScheduleChoice schedule_choice(const RunConfig& config) {
  ScheduleChoice c;
  std::snprintf(c.kind, sizeof c.kind, "%s", config.schedule.kind.c_str());
  std::snprintf(c.codec, sizeof c.codec, "%s", config.compress.kind.c_str());
  c.microbatches = config.schedule.microbatches;
  c.bucket_bytes = config.schedule.bucket_bytes;
  c.amp_limit = config.burst.amp_limit;
  return c;
}

RunConfig with_schedule_choice(RunConfig deck, const ScheduleChoice& choice) {
  deck.schedule.kind = choice.kind;
  deck.compress.kind = choice.codec;
  deck.schedule.microbatches = choice.microbatches;
  deck.schedule.bucket_bytes = choice.bucket_bytes;
  deck.burst.amp_limit = choice.amp_limit;
  // [burst] keys the deck set for auto's burst candidates (the planner's cost model, its
  // exemption) are not the deck's choice of schedule when auto chose another.
  if (deck.schedule.kind != "burst")
    for (auto it = deck.key_origins.begin(); it != deck.key_origins.end();)
      it = it->first.rfind("burst.", 0) == 0 ? deck.key_origins.erase(it) : std::next(it);
  return deck;
}

ScheduleChoice schedule_choice_in(const std::string& deck_toml, const std::string& path) {
  toml::table t;
  try {
    t = toml::parse(deck_toml);
  } catch (const toml::parse_error& e) {
    throw InputError(
        path, 0, "deck",
        std::string("the resolved deck it holds is not TOML: ") + std::string(e.description()));
  }
  const RunConfig defaults;
  const auto kind = t["schedule"]["kind"].value<std::string>();
  if (!kind)
    throw InputError(path, 0, "schedule.kind",
                     "the resolved deck it holds names no schedule: it cannot tell which schedule "
                     "auto chose for the run being resumed");
  RunConfig c = defaults;
  c.schedule.kind = *kind;
  c.compress.kind = t["compress"]["weights"].value_or(defaults.compress.kind);
  c.schedule.microbatches = t["schedule"]["microbatches"].value_or(defaults.schedule.microbatches);
  c.schedule.bucket_bytes = t["schedule"]["bucket_bytes"].value_or(defaults.schedule.bucket_bytes);
  c.burst.amp_limit = t["burst"]["amp_limit"].value_or(defaults.burst.amp_limit);
  return schedule_choice(c);
}

std::string overrides(const ScheduleChoice& c) {
  const std::string kind = c.kind;
  std::string keys = "schedule.kind=" + kind;
  if (kind == "gang" || kind == "burst")
    keys += " schedule.bucket_bytes=" + std::to_string(c.bucket_bytes);
  if (kind == "pipeline") keys += " schedule.microbatches=" + std::to_string(c.microbatches);
  if (kind == "burst") keys += " burst.amp_limit=" + format_number("%g", c.amp_limit);
  if (std::string(c.codec) != "none") keys += " compress.weights=" + std::string(c.codec);
  return keys;
}

std::string describe(const ScheduleChoice& c) {
  const std::string kind = c.kind;
  std::string name = kind;
  if (kind == "gang") name += ", buckets " + human_bytes(double(c.bucket_bytes));
  if (kind == "pipeline") name += ", microbatches " + std::to_string(c.microbatches);
  if (kind == "burst") name += ", amplification " + format_number("%g", c.amp_limit);
  if (std::string(c.codec) != "none") name += ", " + std::string(c.codec) + " codec";
  return name;
}

}  // namespace wt
