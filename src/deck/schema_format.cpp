// The schema's values in words: type names, ranges, TOML quoting, a field's value as a deck line
// would write it, and the --help-deck text (the keys themselves: schema.cpp).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "deck/schema.hpp"

namespace wt {

const char* value_type_name(ValueType type) {
  switch (type) {
    case ValueType::Int:
      return "integer";
    case ValueType::Float:
      return "float";
    case ValueType::Bool:
      return "boolean";
    case ValueType::String:
      return "string";
    case ValueType::IntArray:
      return "array of integers";
    case ValueType::StringArray:
      return "array of strings";
  }
  return "?";
}

ValueType KeyDef::type() const {
  RunConfig scratch;
  FieldRef ref = field(scratch);
  switch (ref.index()) {
    case 0:
    case 1:
      return ValueType::Int;
    case 2:
      return ValueType::Float;
    case 3:
      return ValueType::Bool;
    case 4:
      return ValueType::String;
    case 6:
      return ValueType::StringArray;
    default:
      return ValueType::IntArray;
  }
}

bool Range::contains(double v) const {
  if (lo_open ? !(v > lo) : !(v >= lo)) return false;
  if (hi_open ? !(v < hi) : !(v <= hi)) return false;
  return true;
}

static std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string Range::describe() const {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi)
    return std::string("in ") + (lo_open ? "(" : "[") + short_number(lo) + ", " + short_number(hi) +
           (hi_open ? ")" : "]");
  if (has_lo) return std::string(lo_open ? "> " : ">= ") + short_number(lo);
  if (has_hi) return std::string(hi_open ? "< " : "<= ") + short_number(hi);
  return "any value";
}

const std::vector<std::string>& deck_sections() {
  static const std::vector<std::string> sections = [] {
    std::vector<std::string> names;
    for (const KeyDef& def : deck_schema())
      if (names.empty() || names.back() != def.section) names.push_back(def.section);
    return names;
  }();
  return sections;
}

const KeyDef* find_key(const std::string& section, const std::string& key) {
  for (const KeyDef& def : deck_schema())
    if (section == def.section && key == def.key) return &def;
  return nullptr;
}

std::string known_keys(const std::string& section) {
  std::string list;
  for (const KeyDef& def : deck_schema())
    if (section == def.section) list += (list.empty() ? "" : ", ") + std::string(def.key);
  return list;
}

std::string toml_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

// The shortest decimal form that reads back to exactly `v`, always with a '.' or exponent so
// TOML reads it as a float.
static std::string exact_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  // TOML needs a digit after the point and no bare "1e5."; %g never emits those.
  return s;
}

std::string format_value(const KeyDef& def, const RunConfig& config) {
  FieldRef ref = def.field(const_cast<RunConfig&>(config));  // read only
  struct Printer {
    std::string operator()(int64_t* v) const { return std::to_string(*v); }
    std::string operator()(uint64_t* v) const { return std::to_string(*v); }
    std::string operator()(double* v) const { return exact_float(*v); }
    std::string operator()(bool* v) const { return *v ? "true" : "false"; }
    std::string operator()(std::string* v) const { return toml_quote(*v); }
    std::string operator()(std::vector<int64_t>* v) const {
      std::string s = "[";
      for (size_t i = 0; i < v->size(); ++i) s += (i ? ", " : "") + std::to_string((*v)[i]);
      return s + "]";
    }
    std::string operator()(std::vector<std::string>* v) const {
      std::string s = "[";
      for (size_t i = 0; i < v->size(); ++i) s += (i ? ", " : "") + toml_quote((*v)[i]);
      return s + "]";
    }
  };
  return std::visit(Printer{}, ref);
}

std::string schema_help() {
  const RunConfig defaults;
  std::ostringstream out;
  out << "Input deck keys (TOML: one [section] per group, `key = value` lines).\n"
      << "Any key can also be set on the command line: --set section.key=value\n";
  std::string section;
  for (const KeyDef& def : deck_schema()) {
    if (section != def.section) {
      section = def.section;
      out << "\n[" << section << "]\n";
    }
    std::string allowed;
    if (!def.allowed.empty()) {
      for (const std::string& a : def.allowed) allowed += (allowed.empty() ? "" : " | ") + a;
    } else if (def.type() != ValueType::Bool && def.type() != ValueType::String) {
      allowed = def.range.describe();
    }
    out << "  " << def.key << " (" << value_type_name(def.type());
    if (!allowed.empty() && allowed != "any value") out << ", " << allowed;
    out << ")  ";
    if (def.required)
      out << "REQUIRED";
    else
      out << "default " << format_value(def, defaults);
    out << "\n      " << def.doc << "\n";
  }
  return out.str();
}

}  // namespace wt
