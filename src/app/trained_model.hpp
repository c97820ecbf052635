#pragma once
// What --evaluate and --predict share: a checkpoint's model with its trained weights, the deck it
// was trained with (stored in the checkpoint) or one given, and the model's answers on a dataset
// split. Runs on this process alone, on the CPU, outside any schedule.
#include <cstdint>
#include <string>
#include <vector>

#include "io/checkpoint_file.hpp"

namespace wt {

struct TrainedModelRequest {
  std::string checkpoint;              // the checkpoint file
  std::string deck;                    // a deck; "" = the one stored in the checkpoint
  std::vector<std::string> overrides;  // --set section.key=value
  std::string data;                    // --data: a dataset instead of the deck's data.path
};

// A classifier's answers on every sample of one split, in file order.
struct ModelAnswers {
  CheckpointInfo checkpoint;
  std::string data_path, split;
  int64_t classes = 0;
  std::vector<std::string> class_names;  // the file's, else "0", "1", ...
  std::vector<int32_t> labels;           // per sample
  std::vector<float> probabilities;      // [samples, classes]: softmax of the logits
  double loss_sum = 0;                   // summed cross-entropy (natural log), as training's

  int64_t samples() const { return int64_t(labels.size()); }
  // The class of highest probability (the first of equals), as the loss layer counts it.
  int32_t predicted(int64_t sample) const;
};

// Opens the checkpoint, its deck, model and the deck's test split (data.test_split) and runs the
// model over it. A missing or damaged checkpoint, a model that does not match it, a dataset that
// does not fit the model (shape, classes) or a model that is not a classifier throws InputError
// naming the file and key; nothing is written.
ModelAnswers answer_test_split(const TrainedModelRequest& request);

}  // namespace wt
