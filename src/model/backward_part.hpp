#pragma once
// A node's backward run whole, or as two instructions: the input's gradient, then the
// parameters'. A driver that fills short idle gaps (the DeepPool multiplexer's background) fits
// each half where the whole pass would not; each half is one of the whole pass's two products
// (dx, then dw), so the arithmetic and the model are the same.
#include <cstdint>

namespace wt {

enum class BackwardPart : uint8_t {
  Whole,
  InputGradient,  // the gradients of the node's inputs only; its saved state stays for the next
  ParamGradient,  // the node's parameter gradients only, after InputGradient; then it is done
};

// "" for Whole; "dx", "dw" for the halves (in instruction texts and the background's log).
inline const char* backward_part_name(BackwardPart part) {
  return part == BackwardPart::InputGradient   ? "dx"
         : part == BackwardPart::ParamGradient ? "dw"
                                               : "";
}

}  // namespace wt
