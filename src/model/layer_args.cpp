#include "model/layer_args.hpp"

#include "util/input_error.hpp"

namespace wt {

LayerArgs::LayerArgs(const toml::table& table, std::string file, std::string layer_name)
    : table_(table), file_(std::move(file)), layer_name_(std::move(layer_name)) {
  used_ = {"name", "type", "inputs"};
}

int LayerArgs::line_of(const std::string& key) const {
  if (const toml::node* n = table_.get(key)) return static_cast<int>(n->source().begin.line);
  return static_cast<int>(table_.source().begin.line);
}

void LayerArgs::fail(const std::string& key, const std::string& message) const {
  throw InputError(file_, line_of(key), "layer '" + layer_name_ + "' " + key, message);
}

int64_t LayerArgs::get_int(const std::string& key, int64_t min, int64_t max) const {
  used_.insert(key);
  const toml::node* n = table_.get(key);
  if (!n)
    fail(key, "missing required key (an integer in [" + std::to_string(min) + ", " +
                  std::to_string(max) + "])");
  auto v = n->value_exact<int64_t>();
  if (!v) fail(key, "must be an integer");
  if (*v < min || *v > max)
    fail(key, "value " + std::to_string(*v) + " out of range [" + std::to_string(min) + ", " +
                  std::to_string(max) + "]");
  return *v;
}

int64_t LayerArgs::get_int(const std::string& key, int64_t fallback, int64_t min,
                           int64_t max) const {
  if (!table_.contains(key)) {
    used_.insert(key);
    return fallback;
  }
  return get_int(key, min, max);
}

double LayerArgs::get_float(const std::string& key, double fallback, double min, double max) const {
  used_.insert(key);
  const toml::node* n = table_.get(key);
  if (!n) return fallback;
  std::optional<double> v = n->value<double>();  // integers are accepted as floats
  if (!v || !(n->is_floating_point() || n->is_integer())) fail(key, "must be a number");
  if (*v < min || *v > max)
    fail(key, "value " + std::to_string(*v) + " out of range [" + std::to_string(min) + ", " +
                  std::to_string(max) + "]");
  return *v;
}

bool LayerArgs::get_bool(const std::string& key, bool fallback) const {
  used_.insert(key);
  const toml::node* n = table_.get(key);
  if (!n) return fallback;
  auto v = n->value_exact<bool>();
  if (!v) fail(key, "must be true or false");
  return *v;
}

std::string LayerArgs::get_string(const std::string& key, const std::string& fallback,
                                  const std::vector<std::string>& allowed) const {
  used_.insert(key);
  const toml::node* n = table_.get(key);
  if (!n) return fallback;
  auto v = n->value_exact<std::string>();
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  if (!v) fail(key, "must be a string (one of: " + list + ")");
  if (!allowed.empty()) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == *v;
    if (!ok) fail(key, "unknown value '" + *v + "' (allowed: " + list + ")");
  }
  return *v;
}

void LayerArgs::check_no_unknown_keys() const {
  for (const auto& [k, node] : table_) {
    std::string key(k.str());
    if (!used_.count(key)) {
      std::string list;
      for (const auto& u : used_) list += (list.empty() ? "" : ", ") + u;
      throw InputError(file_, static_cast<int>(node.source().begin.line),
                       "layer '" + layer_name_ + "' " + key,
                       "unknown key for this layer type (known: " + list + ")");
    }
  }
}

}  // namespace wt
