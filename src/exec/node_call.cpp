#include "exec/node_call.hpp"

namespace wt {

std::string node_call_description(const Node& node, const char* pass,
                                  const std::vector<const Tensor*>& inputs) {
  std::string s = "node '" + node.name + "' (" + node.type;
  if (node.line > 0) s += ", model line " + std::to_string(node.line);
  s += std::string(") ") + pass + " of ";
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (k) s += " and ";
    s += inputs[k] && inputs[k]->defined() ? shape_str(inputs[k]->shape()) : "(none)";
  }
  return s;
}

}  // namespace wt
