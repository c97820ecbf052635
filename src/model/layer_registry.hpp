#pragma once
// Layer type name -> factory. Each layer file registers itself with one line:
//   WT_REGISTER_LAYER("conv2d", Conv2d);
// where Conv2d has a constructor Conv2d(const LayerArgs&).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/layer.hpp"
#include "model/layer_args.hpp"

namespace wt {

class LayerRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Layer>(const LayerArgs&)>;
  static bool add(const std::string& type, Factory factory);
  static bool contains(const std::string& type);
  static std::unique_ptr<Layer> create(const std::string& type, const LayerArgs& args);
  static std::vector<std::string> known_types();

 private:
  static std::map<std::string, Factory>& table();
};

}  // namespace wt

#define WT_REGISTER_LAYER(type_name, Class)                                        \
  static const bool wt_layer_registered_##Class = ::wt::LayerRegistry::add(        \
      type_name, [](const ::wt::LayerArgs& args) -> std::unique_ptr<::wt::Layer> { \
        return std::make_unique<Class>(args);                                      \
      })
