#pragma once
// `wavetrain --check-data FILE [--deck DECK]`: opens a dataset as a run would (the same reader,
// the same checks, the same messages) and prints per split the sample count, shapes, dtypes, class
// balance and value range, reading every row once. Non-finite float inputs are an error. With a
// deck, the file is checked against the deck's model and [data]/[train] keys exactly as a run
// checks it before training (input shape, classes, labels per sample, global batch). Job scripts
// can run it before mpirun: exit 0 when a run would accept the file, else 2 with one message.
#include <ostream>
#include <string>
#include <vector>

#include "deck/run_config.hpp"

namespace wt {

// The deck overrides for checking `file` against a deck: `overrides` plus data.path = the file
// (absolute, so that it does not resolve against the deck's directory). Unchanged when `file` is
// empty (not --check-data).
std::vector<std::string> check_data_overrides(const std::string& file,
                                              std::vector<std::string> overrides);

// `config`: the deck (its data.path is replaced by `file`), or null to check the file alone (the
// splits "train" and "test", the file's own shapes and num_classes). Throws InputError on the
// first problem.
void check_data(const std::string& file, const RunConfig* config, std::ostream& out);

}  // namespace wt
