#include "ops/input_check.hpp"

namespace wt::ops {

std::string token_id_error(float value, int64_t position, int64_t vocab) {
  return "embedding input " + std::to_string(value) + " at position " + std::to_string(position) +
         " is not a token id in [0, " + std::to_string(vocab) +
         ") (is the dataset a token dataset with this vocabulary?)";
}

}  // namespace wt::ops
