#include "model/graph.hpp"

#include <toml++/toml.h>

#include <map>
#include <stdexcept>

#include "model/layer_args.hpp"
#include "model/layer_registry.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

// The model file as TOML; syntax errors name the line.
toml::table parse_model_file(const std::string& path) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    if (e.source().begin.line == 0)
      throw InputError(path, 0, "", "cannot read model file: " + std::string(e.description()));
    throw InputError(path, static_cast<int>(e.source().begin.line), "",
                     "TOML syntax error: " + std::string(e.description()));
  }
  return root;
}

// [model]: the name, the per-sample input shape and the classes.
void read_model_table(const toml::table& root, const std::string& path, Graph& g) {
  for (const auto& [k, node] : root) {
    std::string key(k.str());
    if (key != "model" && key != "layer")
      throw InputError(path, line_of(node), key, "unknown top-level key (known: model, layer)");
  }
  const toml::table* model = root["model"].as_table();
  if (!model) throw InputError(path, 1, "model", "missing [model] table (name, input, classes)");
  for (const auto& [k, node] : *model) {
    std::string key(k.str());
    if (key != "name" && key != "input" && key != "classes")
      throw InputError(path, line_of(node), "model." + key,
                       "unknown key (known: name, input, classes)");
  }
  auto name = (*model)["name"].value<std::string>();
  if (!name) throw InputError(path, line_of(*model), "model.name", "missing or not a string");
  g.name = *name;
  const toml::array* input = (*model)["input"].as_array();
  if (!input || input->empty())
    throw InputError(path, line_of(*model), "model.input",
                     "missing or empty: the per-sample input shape, e.g. [1, 28, 28]");
  for (const auto& d : *input) {
    auto v = d.value_exact<int64_t>();
    if (!v || *v <= 0)
      throw InputError(path, line_of(d), "model.input", "dimensions must be positive integers");
    g.input_shape.push_back(*v);
  }
  auto classes = (*model)["classes"].value_exact<int64_t>();
  if (!classes || *classes < 2)
    throw InputError(path, line_of(*model), "model.classes", "missing or not an integer >= 2");
  g.classes = static_cast<int>(*classes);
}

// One [[layer]] table: its name, type, inputs (earlier layers by name), the layer and its output
// shape. index: the earlier layers' nodes by name; shapes: their output shapes.
Node read_layer(const toml::node& entry, const std::string& path, const Graph& g,
                std::map<std::string, int>& index, const std::vector<Shape>& shapes) {
  const toml::table* t = entry.as_table();
  if (!t) throw InputError(path, line_of(entry), "layer", "each layer must be a [[layer]] table");
  Node n;
  n.line = line_of(*t);
  auto lname = (*t)["name"].value_exact<std::string>();
  if (!lname || lname->empty())
    throw InputError(path, n.line, "layer.name", "every layer needs a non-empty string name");
  n.name = *lname;
  if (n.name == "input" || index.count(n.name))
    throw InputError(path, n.line, "layer.name",
                     "duplicate or reserved layer name '" + n.name + "'");
  auto type = (*t)["type"].value_exact<std::string>();
  if (!type)
    throw InputError(path, n.line, "layer '" + n.name + "' type", "missing or not a string");
  n.type = *type;
  if (!LayerRegistry::contains(n.type))
    throw InputError(
        path, line_of(*t->get("type")), "layer '" + n.name + "' type",
        "unknown layer type '" + n.type + "' (known: " + join(LayerRegistry::known_types()) + ")");
  if (const toml::node* in = t->get("inputs")) {
    const toml::array* arr = in->as_array();
    if (!arr || arr->empty())
      throw InputError(path, line_of(*in), "layer '" + n.name + "' inputs",
                       "must be a non-empty array of earlier layer names or \"input\"");
    for (const auto& e : *arr) {
      auto s = e.value_exact<std::string>();
      if (!s)
        throw InputError(path, line_of(e), "layer '" + n.name + "' inputs",
                         "names must be strings");
      if (*s == "input") {
        n.inputs.push_back(kGraphInput);
      } else if (index.count(*s)) {
        n.inputs.push_back(index[*s]);
      } else {
        throw InputError(path, line_of(e), "layer '" + n.name + "' inputs",
                         "'" + *s + "' is not an earlier layer (layers must be listed in order)");
      }
    }
  } else {
    n.inputs.push_back(g.nodes.empty() ? kGraphInput : static_cast<int>(g.nodes.size()) - 1);
  }
  LayerArgs args(*t, path, n.name);
  n.layer = LayerRegistry::create(n.type, args);
  n.layer->set_name(n.name);
  std::vector<Shape> in_shapes;
  for (int i : n.inputs) in_shapes.push_back(i == kGraphInput ? g.input_shape : shapes[i]);
  try {
    n.out_shape = n.layer->infer(in_shapes);
  } catch (const std::invalid_argument& e) {
    throw InputError(path, n.line, "layer '" + n.name + "'", e.what());
  }
  return n;
}

// The loss comes last, once, and its input has the model's classes.
void check_loss(const Graph& g, const std::vector<Shape>& shapes, const std::string& path) {
  if (!g.nodes.back().layer->is_loss())
    throw InputError(path, g.nodes.back().line, "layer '" + g.nodes.back().name + "'",
                     "the last layer must be a loss layer (softmax_xent, token_softmax_xent)");
  for (size_t i = 0; i + 1 < g.nodes.size(); ++i)
    if (g.nodes[i].layer->is_loss())
      throw InputError(path, g.nodes[i].line, "layer '" + g.nodes[i].name + "'",
                       "a loss layer must be the last layer");
  const Shape& logits =
      shapes[g.nodes.back().inputs.at(0) == kGraphInput ? 0 : g.nodes.back().inputs[0]];
  if (logits.empty() || logits.back() != g.classes)
    throw InputError(path, g.nodes.back().line, "layer '" + g.nodes.back().name + "'",
                     "loss input has shape " + shape_str(logits) + " but the model has " +
                         std::to_string(g.classes) + " classes");
}

}  // namespace

Graph Graph::load(const std::string& path) {
  const toml::table root = parse_model_file(path);
  Graph g;
  g.file = path;
  read_model_table(root, path, g);
  const toml::array* layers = root["layer"].as_array();
  if (!layers || layers->empty())
    throw InputError(path, 1, "layer", "no [[layer]] tables: a model needs at least a loss layer");
  std::map<std::string, int> index;
  std::vector<Shape> shapes;
  for (const auto& entry : *layers) {
    Node n = read_layer(entry, path, g, index, shapes);
    index[n.name] = static_cast<int>(g.nodes.size());
    shapes.push_back(n.out_shape);
    g.nodes.push_back(std::move(n));
  }
  check_loss(g, shapes, path);
  return g;
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> c(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int in : nodes[i].inputs)
      if (in != kGraphInput) c[in].push_back(static_cast<int>(i));
  return c;
}

std::vector<char> Graph::output_gradient_needed() const {
  std::vector<char> needed(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    bool need = !nodes[i].layer->param_specs().empty();
    for (int in : nodes[i].inputs) need = need || (in != kGraphInput && needed[size_t(in)]);
    needed[i] = need;
  }
  return needed;
}

double Graph::flops_per_sample() const {
  double f = 0;
  for (const auto& n : nodes) f += n.layer->flops_per_sample();
  return f;
}

}  // namespace wt
