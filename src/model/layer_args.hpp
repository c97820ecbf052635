#pragma once
// Typed, validated access to one [[layer]] table of a model file. Every getter checks type and
// range and throws InputError naming file:line:key; check_no_unknown_keys() rejects typos.
#include <toml++/toml.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace wt {

class LayerArgs {
 public:
  LayerArgs(const toml::table& table, std::string file, std::string layer_name);

  int64_t get_int(const std::string& key, int64_t min, int64_t max) const;  // required
  int64_t get_int(const std::string& key, int64_t fallback, int64_t min, int64_t max) const;
  double get_float(const std::string& key, double fallback, double min, double max) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& allowed) const;

  // Keys handled by the graph itself (name, type, inputs) are always allowed.
  void check_no_unknown_keys() const;
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  const std::string& file() const { return file_; }
  const std::string& layer_name() const { return layer_name_; }
  int line_of(const std::string& key) const;

 private:
  const toml::table& table_;
  std::string file_;
  std::string layer_name_;
  mutable std::set<std::string> used_;
};

}  // namespace wt
