#pragma once
// The deck schema: one table with an entry per `section.key` of RunConfig. Parsing, validation,
// the printed resolved deck (to_toml) and `--help-deck` all read this table, so a new setting is
// one field in run_config.hpp plus one entry in schema.cpp.
#include <cstdint>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "deck/run_config.hpp"

namespace wt {

// A pointer to the RunConfig field a key writes. The alternative held is the key's type.
using FieldRef = std::variant<int64_t*, uint64_t*, double*, bool*, std::string*,
                              std::vector<int64_t>*, std::vector<std::string>*>;

enum class ValueType { Int, Float, Bool, String, IntArray, StringArray };
const char* value_type_name(ValueType type);

// Inclusive/exclusive numeric bounds; for int arrays they bound every element.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;  // true: value must be > lo (not >=)
  bool hi_open = false;
  bool contains(double v) const;
  std::string describe() const;  // e.g. "> 0", ">= 1", "in [0, 1)"
  static Range at_least(double lo) {
    return {lo, std::numeric_limits<double>::infinity(), false, false};
  }
  static Range above(double lo) {
    return {lo, std::numeric_limits<double>::infinity(), true, false};
  }
};

enum class PathBase {
  None,  // not a path
  Deck,  // relative paths resolve against the deck's directory; the file must exist
};

struct KeyDef {
  const char* section = "";
  const char* key = "";
  FieldRef (*field)(RunConfig&) = nullptr;
  const char* doc = "";
  Range range;                       // numeric keys
  std::vector<std::string> allowed;  // string keys: the permitted values (empty = any non-empty)
  bool required = false;
  PathBase path = PathBase::None;

  // Builders for the schema table: key(...).in(Range::above(0)), .one_of({...}), .required_file().
  KeyDef in(Range r) const;
  KeyDef one_of(std::vector<std::string> values) const;
  KeyDef required_file() const;
  KeyDef file() const;  // an optional file, relative to the deck, made absolute

  ValueType type() const;
  std::string dotted() const { return std::string(section) + "." + key; }
};

// Every key, grouped by section in RunConfig order.
const std::vector<KeyDef>& deck_schema();
// The section names in order.
const std::vector<std::string>& deck_sections();
// nullptr when unknown.
const KeyDef* find_key(const std::string& section, const std::string& key);
// "a, b, c": the keys of one section (for "unknown key" messages).
std::string known_keys(const std::string& section);

// The key's value in `config`, printed as TOML (strings quoted and escaped).
std::string format_value(const KeyDef& def, const RunConfig& config);
std::string toml_quote(const std::string& s);

// A printable listing of every section.key with type, default and doc (`--help-deck`).
std::string schema_help();

}  // namespace wt
