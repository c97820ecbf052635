#include "app/check_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include "data/dataset_reader.hpp"
#include "job/run_preflight.hpp"
#include "model/graph.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

// What one pass over a split's rows found.
struct SplitStats {
  std::vector<int64_t> class_counts;
  float low = std::numeric_limits<float>::infinity();  // normalised
  float high = -std::numeric_limits<float>::infinity();
  double stored_low = std::numeric_limits<double>::infinity();  // in the file's units
  double stored_high = -std::numeric_limits<double>::infinity();
};

// A normalised value of element `e` back in the file's units: uint8 x = 255 (v std + mean),
// float x = v std + mean.
double stored_value(const DatasetReader& r, int64_t e, float normalised) {
  if (r.token_ids()) return normalised;
  const double x = double(normalised) * r.std_of(e) + r.mean_of(e);
  return r.inputs_are_float() ? x : std::round(x * 255.0) + 0.0;  // + 0.0: no "-0"
}

// What a non-finite input does to a run, by the split it is in.
std::string nonfinite_consequence(bool test_split) {
  return test_split ? "evaluating on it makes the test loss NaN, which stops the run (exit 4) "
                      "unless failure.on_nonfinite = \"skip\" leaves such samples out"
                    : "training on it makes the loss NaN";
}

// Reads every row through the run's own read path, in blocks (bounded memory): a non-finite
// input, which would turn the first loss (or the test loss) into NaN, is named by row and element.
SplitStats scan(DatasetReader& reader, int64_t classes, bool test_split) {
  SplitStats stats;
  stats.class_counts.assign(size_t(std::max<int64_t>(classes, 0)), 0);
  const int64_t per = reader.sample_numel(), block = std::max<int64_t>(1, (16 << 20) / (4 * per));
  std::vector<float> inputs;
  std::vector<int32_t> labels;
  std::vector<int64_t> rows;
  for (int64_t first = 0; first < reader.size(); first += block) {
    const int64_t n = std::min(block, reader.size() - first);
    rows.resize(size_t(n));
    std::iota(rows.begin(), rows.end(), first);
    inputs.resize(size_t(n * per));
    labels.resize(size_t(n * reader.labels_per_sample()));
    reader.read(rows, inputs.data(), labels.data());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float v = inputs[i];
      if (!std::isfinite(v))
        throw InputError(reader.path(), 0, "/" + reader.split() + "/inputs",
                         std::string("non-finite value (") + (std::isnan(v) ? "NaN" : "Inf") +
                             ") at row " + std::to_string(first + int64_t(i) / per) + ", element " +
                             std::to_string(int64_t(i) % per) +
                             " (after normalisation): " + nonfinite_consequence(test_split));
      stats.low = std::min(stats.low, v);
      stats.high = std::max(stats.high, v);
      const double x = stored_value(reader, int64_t(i) % per, v);
      stats.stored_low = std::min(stats.stored_low, x);
      stats.stored_high = std::max(stats.stored_high, x);
    }
    for (int32_t y : labels) {
      if (size_t(y) >= stats.class_counts.size()) stats.class_counts.resize(size_t(y) + 1, 0);
      ++stats.class_counts[size_t(y)];
    }
  }
  return stats;
}

// The range of a list of values, "low..high", or its one value.
std::string value_range(const std::vector<double>& values) {
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  char text[96];
  if (*low == *high)
    std::snprintf(text, sizeof text, "%g", *low);
  else
    std::snprintf(text, sizeof text, "%g..%g", *low, *high);
  return text;
}

// How the reader scales the inputs: "normalisation mean M std S" (global), or per channel / per
// feature with the count and the range of the values.
std::string describe_scaling(const DatasetReader& r) {
  if (r.token_ids()) return "token ids (not scaled)";
  if (!r.per_feature_scaling())
    return "normalisation mean " + value_range(r.means()) + " std " + value_range(r.stds());
  const size_t n = std::max(r.means().size(), r.stds().size());
  const bool per_element = int64_t(n) == r.sample_numel();
  return std::string("normalisation per ") + (per_element ? "feature" : "channel") + " (" +
         std::to_string(n) + (per_element ? " features" : " channels") + "): mean " +
         value_range(r.means()) + ", std " + value_range(r.stds());
}

std::string dims(const Shape& shape) {
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

void print_split(DatasetReader& r, int64_t classes, bool test_split, std::ostream& out) {
  const SplitStats stats = scan(r, classes, test_split);
  char line[512];
  std::snprintf(line, sizeof line, "/%s: %lld samples, inputs %s %s, labels %s int32%s\n",
                r.split().c_str(), (long long)r.size(), dims(r.sample_shape()).c_str(),
                r.inputs_are_float() ? "float32" : "uint8",
                r.label_shape().empty() ? "[N]" : ("[N, " + dims(r.label_shape()) + "]").c_str(),
                r.label_shape().empty() ? " (one per sample)" : " (per token)");
  out << line;
  if (r.size() > 0) {
    std::snprintf(line, sizeof line, "  values %g..%g (normalised %.4g..%.4g)\n", stats.stored_low,
                  stats.stored_high, double(stats.low), double(stats.high));
    out << line;
  }
  out << "  classes:";
  const auto& names = r.class_names();
  for (size_t c = 0; c < stats.class_counts.size(); ++c) {
    if (c == 24 && stats.class_counts.size() > 30) {  // a text's vocabulary: the first few
      out << " ... (" << stats.class_counts.size() << " in all)";
      break;
    }
    out << " " << (c < names.size() ? names[c] : std::to_string(c)) << "=" << stats.class_counts[c];
  }
  out << "\n";
  // A text need not use every character of its vocabulary; a classifier's class should have
  // samples.
  if (!r.token_ids() && r.size() > 0)
    for (size_t c = 0; c < stats.class_counts.size(); ++c)
      if (stats.class_counts[c] == 0)
        out << "  warning: class " << (c < names.size() ? names[c] : std::to_string(c))
            << " has no samples in /" << r.split() << "\n";
  const bool direct = r.read_path() != DatasetReader::ReadPath::Hdf5;
  out << "  reads: "
      << (direct ? "direct (uncompressed rows: fast)"
                 : "through HDF5 (" + r.direct_reads_unavailable_because() +
                       ": slower for shuffled batches)")
      << "\n";
}

}  // namespace

std::vector<std::string> check_data_overrides(const std::string& file,
                                              std::vector<std::string> overrides) {
  if (file.empty()) return overrides;
  std::string quoted;  // a TOML basic string
  for (char c : std::filesystem::absolute(file).string()) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  overrides.push_back("data.path=\"" + quoted + "\"");
  return overrides;
}

void check_data(const std::string& file, const RunConfig* config, std::ostream& out) {
  std::unique_ptr<Graph> graph;
  Shape shape;
  int classes = 0;
  std::string train_split = "train", test_split = "test";
  if (config) {
    graph = std::make_unique<Graph>(Graph::load(config->model.file));
    shape = graph->input_shape;
    classes = graph->classes;
    train_split = config->data.train_split;
    test_split = config->data.test_split;
  }
  DatasetReader train(file, train_split, shape, classes);
  DatasetReader test(file, test_split, shape, classes);
  if (config) {
    RunConfig checked = *config;
    checked.data.path = file;
    for (const DatasetReader* r : {&train, &test}) check_labels_per_sample(checked, *graph, *r);
    check_data_against_deck(checked, *graph, train, test);
  } else if (train.size() == 0) {
    throw InputError(file, 0, "/" + train_split + "/inputs", "the training split has no samples");
  }
  out << file << ": " << describe_classes(train) << ", " << describe_scaling(train) << "\n";
  if (!train.source().empty()) out << "  source: " << train.source() << "\n";
  const int64_t known = std::max<int64_t>(classes, train.declared_classes());
  print_split(train, known, false, out);
  print_split(test, known, true, out);
  if (config) {
    out << "ok: matches " << config->deck_path << " (model '" << graph->name << "', input "
        << shape_str(graph->input_shape) << ", " << graph->classes << " classes, global batch "
        << config->train.global_batch << ")\n";
  } else {
    out << "ok: a model for this file declares input = " << shape_str(train.sample_shape())
        << " and classes = " << known << " (check against a deck: --deck DECK)\n";
  }
}

}  // namespace wt
