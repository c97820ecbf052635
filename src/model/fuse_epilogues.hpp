#pragma once
// The graph pass that fuses epilogues (issue 37): a ReLU whose input is the output of a layer that
// can take it (conv2d, linear), read by nothing else, is applied in that layer's output pass. Its
// backward mask goes to the ReLU's reader when that is one layer which can apply it in its own
// input-gradient pass (maxpool2d), else to the producer (linear: in the pass that sums the bias
// gradient). The ReLU's node stays, passing its tensors through, so node indices (initialisation
// streams, dropout keys, stage cuts) and model files are unchanged, and the arithmetic is the
// unfused graph's: losses are bitwise the same. The deck's model.fuse_epilogues turns it off.
#include "model/graph.hpp"

namespace wt {

// Returns how many ReLUs were folded into their neighbours.
int fuse_epilogues(Graph& graph);

}  // namespace wt
