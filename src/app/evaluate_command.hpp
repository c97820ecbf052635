#pragma once
// `wavetrain --evaluate CHECKPOINT [DECK] [--data FILE] [--run-dir DIR]`: the checkpoint's model
// on the test split of the deck's dataset (or --data's): prints the test loss, accuracy,
// per-class precision and recall and the confusion matrix, and writes them as CSV into the run
// directory, with the confusion matrix drawn beside it as a PNG of the same name
// (app/confusion_png.hpp; analysis/confusion.py redraws it from the CSV with class names).
//
// `wavetrain --predict CHECKPOINT --data FILE --output FILE`: writes the class probabilities of
// every sample of FILE's test split as CSV (row, label, predicted, one column per class).
//
// Both run on rank 0 alone, on the CPU. Bad input (a missing or damaged checkpoint, a model or a
// dataset that does not fit it) throws InputError naming the file and key, before any output
// file exists; an output file appears whole or not at all (written through a rename).
#include <ostream>
#include <string>

#include "app/trained_model.hpp"

namespace wt {

// `run_dir`: where the CSV and PNG go; "" = the run directory the checkpoint records (when it
// still exists), else the checkpoint's own directory. Returns the CSV's path.
std::string evaluate_command(const TrainedModelRequest& request, const std::string& run_dir,
                             std::ostream& out);

void predict_command(const TrainedModelRequest& request, const std::string& output,
                     std::ostream& out);

}  // namespace wt
