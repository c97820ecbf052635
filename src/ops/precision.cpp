#include "ops/precision.hpp"

#include <stdexcept>

namespace wt {

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "bf16") return Precision::Bf16;
  throw std::invalid_argument("unknown precision '" + name + "' (fp32 or bf16)");
}

const char* precision_name(Precision precision) {
  return precision == Precision::Bf16 ? "bf16" : "fp32";
}

}  // namespace wt
