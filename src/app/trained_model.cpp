#include "app/trained_model.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "app/check_data.hpp"
#include "data/dataset_reader.hpp"
#include "deck/deck_parser.hpp"
#include "device/device_context.hpp"
#include "model/graph_pass.hpp"
#include "model/model.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

RunConfig deck_of(const TrainedModelRequest& request, const CheckpointInfo& info) {
  if (!request.data.empty() && !std::filesystem::is_regular_file(request.data))
    throw InputError(request.data, 0, "--data", "no such file");
  const std::vector<std::string> overrides =
      check_data_overrides(request.data, request.overrides);  // data.path = --data, if given
  if (!request.deck.empty()) return parse_deck(request.deck, overrides);
  return parse_deck_text(info.deck_toml, request.checkpoint + ":/deck", overrides);
}

// The model as the checkpoint cut it into stages, with the checkpoint's weights.
Model trained_model(const TrainedModelRequest& request, const CheckpointInfo& info,
                    const RunConfig& config, DeviceContext& device) {
  Graph graph = Graph::load(config.model.file);
  const std::string loss = graph.nodes.back().type;
  if (loss != "softmax_xent")
    throw InputError(config.model.file, graph.nodes.back().line, "type",
                     "--evaluate and --predict take a classifier (last layer softmax_xent), this "
                     "model ends in '" +
                         loss + "'");
  const std::vector<int> cuts(info.cuts.begin(), info.cuts.end());
  for (int c : cuts)
    if (c <= 0 || c >= int(graph.nodes.size()))
      throw InputError(request.checkpoint, 0, "cuts",
                       "stage cut at node " + std::to_string(c) + ", but model '" + graph.name +
                           "' (" + config.model.file + ") has " +
                           std::to_string(graph.nodes.size()) +
                           " layers: the checkpoint is of a different model");
  Model model(std::move(graph), device.allocator(), cuts);
  load_checkpoint_weights(request.checkpoint, model);
  return model;
}

// Softmax of one row of logits into `p`; returns the row's cross-entropy against `label`.
double softmax_row(const float* logits, int64_t classes, int32_t label, float* p) {
  const float top = *std::max_element(logits, logits + classes);
  double sum = 0;
  for (int64_t c = 0; c < classes; ++c) sum += std::exp(double(logits[c]) - top);
  for (int64_t c = 0; c < classes; ++c) p[c] = float(std::exp(double(logits[c]) - top) / sum);
  return std::log(sum) - (double(logits[label]) - top);
}

}  // namespace

int32_t ModelAnswers::predicted(int64_t sample) const {
  const float* p = probabilities.data() + sample * classes;
  return int32_t(std::max_element(p, p + classes) - p);
}

ModelAnswers answer_test_split(const TrainedModelRequest& request) {
  ModelAnswers a;
  if (!std::filesystem::exists(request.checkpoint))
    throw InputError(request.checkpoint, 0, "", "no such checkpoint file");
  a.checkpoint = read_checkpoint_info(request.checkpoint);
  const RunConfig config = deck_of(request, a.checkpoint);
  DeviceContext device(size_t(config.device.memory_limit));
  Model model = trained_model(request, a.checkpoint, config, device);
  const Graph& graph = model.graph;
  DatasetReader reader(config.data.path, config.data.test_split, graph.input_shape, graph.classes);
  if (reader.size() == 0)
    throw InputError(config.data.path, 0, "/" + reader.split() + "/inputs",
                     "the test split has no samples");
  a.data_path = config.data.path;
  a.split = reader.split();
  a.classes = graph.classes;
  a.class_names = reader.class_names();
  for (int64_t c = int64_t(a.class_names.size()); c < a.classes; ++c)
    a.class_names.push_back(std::to_string(c));
  a.labels.resize(size_t(reader.size()));
  a.probabilities.resize(size_t(reader.size() * a.classes));
  const int64_t batch = std::max<int64_t>(1, config.train.eval_batch);
  std::vector<float> inputs;
  for (int64_t start = 0; start < reader.size(); start += batch) {
    const int64_t n = std::min(batch, reader.size() - start);
    std::vector<int64_t> rows(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) rows[size_t(i)] = start + i;
    inputs.resize(size_t(n * reader.sample_numel()));
    reader.read(rows, inputs.data(), a.labels.data() + start);
    Shape shape{n};
    shape.insert(shape.end(), graph.input_shape.begin(), graph.input_shape.end());
    Tensor x = Tensor::empty(shape, device.allocator());
    x.copy_from_host(inputs.data());
    const std::vector<float> logits = forward_to_loss_input(model, device.ops(), x).to_host();
    for (int64_t i = 0; i < n; ++i)
      a.loss_sum += softmax_row(logits.data() + i * a.classes, a.classes, a.labels[start + i],
                                a.probabilities.data() + (start + i) * a.classes);
  }
  return a;
}

}  // namespace wt
