#pragma once
// Where each layer's parameters lie in a stage's flat buffers, as JSON text: what a checkpoint
// stores beside each stage's values (/stages/<s>/param_layout) so that tools outside wavetrain
// (tools/export_weights.py) cut the flat vector by this, the model's own layout, instead of
// re-deriving it. docs/checkpoint-format.md describes the text.
#include <string>

#include "model/model.hpp"

namespace wt {

// {"params": [{"name": "fc2.weight", "offset": 0, "shape": [3, 32]}, ...],
//  "buffers": [{"name": "bn1.running_mean", "offset": 0, "shape": [16]}, ...]}
// Offsets are elements into the stage's values (params) or one rank's buffer row (buffers); a
// shape is row-major (C order). Entries are in storage order (the stage's nodes in reverse).
std::string stage_layout_json(const Stage& stage);

}  // namespace wt
