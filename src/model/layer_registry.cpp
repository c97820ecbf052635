#include "model/layer_registry.hpp"

#include <stdexcept>

namespace wt {

std::map<std::string, LayerRegistry::Factory>& LayerRegistry::table() {
  static std::map<std::string, Factory> t;
  return t;
}

bool LayerRegistry::add(const std::string& type, Factory factory) {
  if (!table().emplace(type, std::move(factory)).second)
    throw std::logic_error("layer type '" + type + "' registered twice");
  return true;
}

bool LayerRegistry::contains(const std::string& type) { return table().count(type) > 0; }

std::unique_ptr<Layer> LayerRegistry::create(const std::string& type, const LayerArgs& args) {
  std::unique_ptr<Layer> layer = table().at(type)(args);
  args.check_no_unknown_keys();
  return layer;
}

std::vector<std::string> LayerRegistry::known_types() {
  std::vector<std::string> types;
  for (const auto& [name, factory] : table()) types.push_back(name);
  return types;
}

}  // namespace wt
