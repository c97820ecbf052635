#include "deck/deck_parser.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "deck/schema.hpp"
#include "util/input_error.hpp"

namespace fs = std::filesystem;

namespace wt {
namespace {

// Where a key's value came from, so that later checks (paths, cross-key rules) can point at it.
struct Origin {
  std::string file;  // "" = the command line
  int line = 0;
  fs::path base;  // what relative paths resolve against
};

struct ParseState {
  std::string deck_file;
  fs::path deck_dir;
  std::map<std::string, Origin> origins;  // dotted key -> where it was set
  RunConfig config;

  [[noreturn]] void fail(const std::string& dotted, const std::string& message) const {
    auto it = origins.find(dotted);
    if (it == origins.end()) throw InputError(deck_file, 0, dotted, message);
    throw InputError(it->second.file, it->second.line, dotted, message);
  }
};

const char* toml_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

int line_of(const toml::node& node) { return static_cast<int>(node.source().begin.line); }

std::string section_list() {
  std::string list;
  for (const std::string& s : deck_sections()) list += (list.empty() ? "" : ", ") + s;
  return list;
}

std::string allowed_list(const KeyDef& def) {
  std::string list;
  for (const std::string& a : def.allowed) list += (list.empty() ? "" : ", ") + a;
  return list;
}

// The run directory's last component: one file name, as long as a file system allows (NAME_MAX).
template <typename Fail>
void check_run_name(const std::string& name, const Fail& fail) {
  if (name.find('/') != std::string::npos)
    fail("must be a plain name without '/', got '" + name + "'");
  if (name == "." || name == "..") fail("must be a name, not '" + name + "'");
  if (name.size() > 255)
    fail("is " + std::to_string(name.size()) +
         " bytes long; a file name may have at most 255 (NAME_MAX)");
}

// Reads `node` into the field of `def`, checking type, range and allowed values. Errors go to
// (file, line, section.key).
void assign(const KeyDef& def, const toml::node& node, RunConfig& config, const std::string& file,
            int line) {
  const std::string dotted = def.dotted();
  auto fail = [&](const std::string& message) { throw InputError(file, line, dotted, message); };
  auto wrong_type = [&](const char* expected) {
    fail(std::string("must be ") + expected + ", got " + toml_type_name(node));
  };
  auto check_range = [&](double v, const std::string& shown) {
    if (!def.range.contains(v)) fail("must be " + def.range.describe() + ", got " + shown);
  };

  FieldRef ref = def.field(config);
  if (auto* p = std::get_if<int64_t*>(&ref)) {
    if (!node.is_integer()) wrong_type("an integer");
    const int64_t v = node.as_integer()->get();
    check_range(static_cast<double>(v), std::to_string(v));
    **p = v;
  } else if (auto* p = std::get_if<uint64_t*>(&ref)) {
    if (!node.is_integer()) wrong_type("an integer");
    const int64_t v = node.as_integer()->get();
    if (v < 0) fail("must be >= 0, got " + std::to_string(v));
    check_range(static_cast<double>(v), std::to_string(v));
    **p = static_cast<uint64_t>(v);
  } else if (auto* p = std::get_if<double*>(&ref)) {
    double v = 0;
    if (node.is_floating_point())
      v = node.as_floating_point()->get();
    else if (node.is_integer())
      v = static_cast<double>(node.as_integer()->get());
    else
      wrong_type("a number");
    std::ostringstream shown;
    shown << v;
    if (!std::isfinite(v)) fail("must be a finite number, got " + shown.str());
    check_range(v, shown.str());
    **p = v;
  } else if (auto* p = std::get_if<bool*>(&ref)) {
    if (!node.is_boolean()) wrong_type("true or false");
    **p = node.as_boolean()->get();
  } else if (auto* p = std::get_if<std::string*>(&ref)) {
    if (!node.is_string()) wrong_type("a string");
    const std::string v = node.as_string()->get();
    if (!def.allowed.empty() &&
        std::find(def.allowed.begin(), def.allowed.end(), v) == def.allowed.end()) {
      const std::string what = std::string(def.key) == "kind" ? std::string(def.section) + " kind"
                                                              : std::string(def.key);
      fail("unknown " + what + " '" + v + "' (known: " + allowed_list(def) + ")");
    }
    if (v.empty()) fail("must not be empty");
    // Every string ends up in a C call (a path, a name) that would stop at the NUL.
    if (v.find('\0') != std::string::npos) fail("must not contain a NUL character");
    if (dotted == "run.name") check_run_name(v, fail);
    **p = v;
  } else if (auto* p = std::get_if<std::vector<int64_t>*>(&ref)) {
    if (!node.is_array()) wrong_type("an array of integers, e.g. [3, 7]");
    std::vector<int64_t> values;
    for (const toml::node& element : *node.as_array()) {
      if (!element.is_integer())
        fail(std::string("must be an array of integers, found ") + toml_type_name(element));
      const int64_t v = element.as_integer()->get();
      if (!def.range.contains(static_cast<double>(v)))
        fail("every element must be " + def.range.describe() + ", got " + std::to_string(v));
      values.push_back(v);
    }
    **p = values;
  } else if (auto* p = std::get_if<std::vector<std::string>*>(&ref)) {
    if (!node.is_array()) wrong_type("an array of strings, e.g. [\"a.toml\", \"b.toml\"]");
    std::vector<std::string> values;
    for (const toml::node& element : *node.as_array()) {
      if (!element.is_string())
        fail(std::string("must be an array of strings, found ") + toml_type_name(element));
      const std::string v = element.as_string()->get();
      if (v.empty() || v.find('\0') != std::string::npos)
        fail("every element must be a non-empty string without NUL characters");
      values.push_back(v);
    }
    **p = values;
  }
}

// Walks the parsed document in line order, so the first error reported is the first in the file.
void read_document(const toml::table& root, ParseState& state) {
  struct Entry {
    int line;
    std::string section;
    std::string key;
    const toml::node* node;
  };
  std::vector<Entry> entries;
  for (const auto& [section_key, section_node] : root) {
    const std::string section(section_key.str());
    const int line = line_of(section_node);
    if (std::find(deck_sections().begin(), deck_sections().end(), section) ==
        deck_sections().end()) {
      if (section_node.is_table())
        throw InputError(state.deck_file, line, section,
                         "unknown section [" + section + "] (known: " + section_list() + ")");
      throw InputError(state.deck_file, line, section,
                       "keys must be inside a section (known sections: " + section_list() + ")");
    }
    if (!section_node.is_table())
      throw InputError(state.deck_file, line, section,
                       "must be a table: write [" + section + "] on its own line, then its keys");
    for (const auto& [key, node] : *section_node.as_table())
      entries.push_back({line_of(node), section, std::string(key.str()), &node});
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.line < b.line; });
  for (const Entry& e : entries) {
    const KeyDef* def = find_key(e.section, e.key);
    if (!def)
      throw InputError(state.deck_file, e.line, e.section + "." + e.key,
                       "unknown key '" + e.key + "' in [" + e.section +
                           "] (known: " + known_keys(e.section) + ")");
    assign(*def, *e.node, state.config, state.deck_file, e.line);
    state.origins[def->dotted()] = {state.deck_file, e.line, state.deck_dir};
  }
}

std::string trimmed(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// `origin`: where the override was set (file "" = the command line's --set).
void apply_override(const std::string& text, const Origin& origin, ParseState& state) {
  const size_t eq = text.find('=');
  const std::string name = trimmed(text.substr(0, eq));
  const size_t dot = name.find('.');
  if (eq == std::string::npos || dot == std::string::npos)
    throw InputError(
        "", 0, "--set",
        "expected section.key=value, got '" + text + "' (e.g. --set optimizer.lr=0.1)");
  const std::string section = name.substr(0, dot), key = name.substr(dot + 1);
  if (std::find(deck_sections().begin(), deck_sections().end(), section) == deck_sections().end())
    throw InputError("", 0, name,
                     "--set: unknown section '" + section + "' (known: " + section_list() + ")");
  const KeyDef* def = find_key(section, key);
  if (!def)
    throw InputError("", 0, name,
                     "--set: unknown key '" + key + "' in [" + section +
                         "] (known: " + known_keys(section) + ")");
  const std::string value = text.substr(eq + 1);
  toml::table parsed;
  bool ok = true;
  std::string why;
  try {
    parsed = toml::parse("v = " + value);
    ok = parsed.size() == 1 && parsed.contains("v");
    if (!ok) why = "it must be a single TOML value";
  } catch (const toml::parse_error& e) {
    ok = false;
    why = std::string(e.description());
  }
  if (def->type() == ValueType::String && (!ok || !parsed["v"].is_string())) {
    // A bare word is the natural way to write a string on a command line: --set run.name=trial3
    parsed = toml::table{{"v", value}};
    ok = true;
  }
  if (!ok)
    throw InputError("", 0, name,
                     "--set: cannot read '" + value + "' as a " + value_type_name(def->type()) +
                         " (" + why + ")");
  assign(*def, *parsed.get("v"), state.config, origin.file, origin.line);
  state.origins[def->dotted()] = origin;
}

// [background] (its deck file is checked with the paths): a sub-budget inside the device's, not
// with [colocate].
void check_background_rules(const ParseState& state) {
  const RunConfig::Background& b = state.config.background;
  if (!b.deck.empty() && !state.config.colocate.decks.empty())
    state.fail("background.deck",
               "a co-location deck ([colocate]) cannot host a background job: give the "
               "[background] section to a deck that trains a job of its own");
  const int64_t device_limit = state.config.device.memory_limit;
  if (b.memory_limit > 0 && device_limit > 0 && b.memory_limit > device_limit)
    state.fail("background.memory_limit", std::to_string(b.memory_limit) +
                                              " bytes is more than the device's budget, "
                                              "device.memory_limit = " +
                                              std::to_string(device_limit));
}

// schedule.kind = "auto" chooses these itself, so a deck that fixes one has chosen a schedule.
void check_auto_rules(const ParseState& state) {
  if (state.config.schedule.kind != "auto") return;
  const struct {
    const char* key;
    const char* owner;
  } chosen_by_auto[] = {
      {"schedule.microbatches", "pipeline (auto tries 1, 2, 4 and 8)"},
      {"schedule.bucket_bytes", "gang and burst (auto tries 1, 4 and 16 MiB)"},
      {"schedule.cuts", "one stage count (auto lets each schedule cut the model)"},
      {"schedule.wave_offset", "ticktock"},
      {"schedule.gang_sync", "gang"},
      {"burst.ranks", "burst"},
      {"burst.amp_limit", "burst (auto tries 1.5, 2 and 4)"},
      {"compress.weights", "waves (auto ranks the codec; auto.lossy = true lets it choose it)"},
  };
  for (const auto& k : chosen_by_auto)
    if (state.origins.count(k.key))
      state.fail(k.key, std::string("an option of ") + k.owner +
                            " only, but schedule.kind = \"auto\" chooses the schedule: remove "
                            "the key, or set schedule.kind to the schedule it belongs to");
  if (state.config.data.distribution == "scatter")
    state.fail("data.distribution",
               "scatter works with schedule.kind = \"gang\" only, but schedule.kind = \"auto\" "
               "chooses the schedule: set schedule.kind = \"gang\", or data.distribution = "
               "\"shard\"");
}

void check_cross_key_rules(const ParseState& state) {
  const RunConfig& c = state.config;
  check_auto_rules(state);
  // A co-location deck trains other decks' jobs: its own data and model are not read.
  const bool colocates = !c.colocate.decks.empty();
  if (!colocates && state.origins.count("colocate.decks"))
    state.fail("colocate.decks", "lists no decks: name the decks whose jobs train together");
  for (const std::string& deck : c.colocate.decks) {
    std::error_code ec;
    const fs::path p = state.origins.at("colocate.decks").base / deck;
    if (!fs::is_regular_file(p, ec))
      state.fail("colocate.decks", "'" + deck + "' (" + p.lexically_normal().string() +
                                       ") is not a deck file that exists");
  }
  check_background_rules(state);
  for (const KeyDef& def : deck_schema())
    if (def.required && !colocates && !state.origins.count(def.dotted()))
      state.fail(def.dotted(), std::string("required key missing: add `") + def.key +
                                   " = \"...\"` under [" + def.section + "] (" + def.doc + ")");
  if (c.optimizer.kind == "sgd" && c.optimizer.nesterov && c.optimizer.momentum <= 0)
    state.fail("optimizer.nesterov", "nesterov = true needs optimizer.momentum > 0");
  if (c.lr_schedule.kind == "cosine" && c.lr_schedule.min_lr > c.optimizer.lr)
    state.fail("lr_schedule.min_lr", "must be <= optimizer.lr (" + std::to_string(c.optimizer.lr) +
                                         ") for a cosine decay");
  for (size_t i = 1; i < c.schedule.cuts.size(); ++i)
    if (c.schedule.cuts[i] <= c.schedule.cuts[i - 1])
      state.fail("schedule.cuts", "node indices must be strictly increasing, got " +
                                      std::to_string(c.schedule.cuts[i - 1]) + " then " +
                                      std::to_string(c.schedule.cuts[i]));
  if (!c.schedule.wave_offset && c.schedule.kind != "ticktock")
    state.fail("schedule.wave_offset",
               "wave_offset = false needs schedule.kind = \"ticktock\" (the only schedule with two "
               "waves per rank), got \"" +
                   c.schedule.kind + "\"");
  const bool master = c.schedule.gang_sync == "master";
  if (c.data.distribution == "scatter" && c.schedule.kind != "gang")
    state.fail("data.distribution",
               "scatter splits a global batch into one part per rank: data-parallel "
               "schedule.kind = \"gang\" only, got \"" +
                   c.schedule.kind + "\"");
  if (master && c.schedule.kind != "gang")
    state.fail("schedule.gang_sync",
               "gang_sync = \"master\" needs schedule.kind = \"gang\" (the "
               "only schedule with one master for every stage), got \"" +
                   c.schedule.kind + "\"");
  if (c.compress.active() && c.schedule.kind != "waves" && !(master && c.schedule.kind == "gang"))
    state.fail("compress.weights",
               "\"" + c.compress.kind +
                   "\" compresses the weights a master broadcasts: schedule.kind = \"waves\", or "
                   "\"gang\" with schedule.gang_sync = \"master\" (got \"" +
                   c.schedule.kind + "\")");
  if (c.trace.end_step <= c.trace.start_step)
    state.fail("trace.end_step",
               "must be > trace.start_step (" + std::to_string(c.trace.start_step) + ")");
}

// Makes data.path and model.file absolute and checks that they name existing files.
void resolve_paths(ParseState& state) {
  for (const KeyDef& def : deck_schema()) {
    if (def.path != PathBase::Deck || !state.origins.count(def.dotted())) continue;
    std::string& value = *std::get<std::string*>(def.field(state.config));
    const Origin& origin = state.origins.at(def.dotted());  // required keys are all set by now
    fs::path p(value);
    if (p.is_relative()) p = origin.base / p;
    p = p.lexically_normal();
    std::error_code ec;
    if (fs::is_directory(p, ec))
      state.fail(def.dotted(), "'" + p.string() + "' is a directory, expected a file");
    if (!fs::exists(p, ec)) {
      std::string hint = fs::path(value).is_relative()
                             ? " (relative paths resolve against " + origin.base.string() + ")"
                             : "";
      state.fail(def.dotted(), "file not found: " + p.string() + hint);
    }
    value = p.string();
  }
}

// run.name not given: the deck's file name without its extension (runs/fashion_lenet for
// inputs/fashion_lenet.toml), so that two decks never share a run directory by default. A deck
// without a file, or one whose stem is no valid name, keeps the schema's default.
void name_run_after_deck(ParseState& state) {
  if (state.origins.count("run.name") || state.deck_file.empty()) return;
  const std::string stem = fs::path(state.deck_file).stem().string();
  bool valid = !stem.empty();
  check_run_name(stem, [&](const std::string&) { valid = false; });
  if (valid) state.config.run.name = stem;
}

}  // namespace

RunConfig parse_deck_text(const std::string& text, const std::string& deck_path,
                          const std::vector<std::string>& overrides,
                          const std::vector<PlacedOverride>& placed) {
  ParseState state;
  state.deck_file = deck_path;
  state.deck_dir = fs::absolute(fs::path(deck_path)).parent_path();
  state.config.deck_path = fs::absolute(fs::path(deck_path)).lexically_normal().string();

  toml::table root;
  try {
    root = toml::parse(text, deck_path);
  } catch (const toml::parse_error& e) {
    throw InputError(deck_path, static_cast<int>(e.source().begin.line), "",
                     "TOML syntax error: " + std::string(e.description()));
  }
  read_document(root, state);
  for (const PlacedOverride& o : placed)
    apply_override(o.text, {o.file, o.line, fs::path(o.file).parent_path()}, state);
  for (const std::string& o : overrides) apply_override(o, {"", 0, fs::current_path()}, state);
  name_run_after_deck(state);
  check_cross_key_rules(state);
  resolve_paths(state);
  for (const auto& [key, origin] : state.origins)
    state.config.key_origins[key] = {origin.file, origin.line};
  return state.config;
}

RunConfig parse_deck(const std::string& path, const std::vector<std::string>& overrides,
                     const std::vector<PlacedOverride>& placed) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, 0, "", "deck file not found");
  if (fs::is_directory(path, ec))
    throw InputError(path, 0, "", "is a directory, expected a TOML deck file");
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) throw InputError(path, 0, "", "cannot open the deck file for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, 0, "", "cannot read the deck file");
  return parse_deck_text(text.str(), path, overrides, placed);
}

std::string to_toml(const RunConfig& config) {
  std::ostringstream out;
  out << "# wavetrain resolved deck: every key, defaults filled in, absolute paths.\n";
  if (!config.deck_path.empty()) out << "# from " << config.deck_path << "\n";
  std::string section;
  for (const KeyDef& def : deck_schema()) {
    // A job's deck co-locates nothing: its [colocate] section would only read back as an
    // explicit empty list, which the parser refuses; so would an empty background deck.
    if (std::string(def.section) == "colocate" && config.colocate.decks.empty()) continue;
    if (std::string(def.section) == "background" && config.background.deck.empty()) continue;
    if (section != def.section) {
      section = def.section;
      out << "\n[" << section << "]\n";
    }
    out << def.key << " = " << format_value(def, config) << "  # " << def.doc << "\n";
  }
  return out.str();
}

}  // namespace wt
