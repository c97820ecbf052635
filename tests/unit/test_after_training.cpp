// Using a model after training: the classification report --evaluate prints and writes (counts,
// precision, recall, an undefined precision), the parameter layout a checkpoint records beside
// each stage's flat values, and the forward pass that stops at the loss layer's input.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "app/classification_report.hpp"
#include "model/graph_pass.hpp"
#include "model/model.hpp"
#include "model/param_layout.hpp"
#include "test_memory.hpp"

namespace wt {
namespace {

// Answers of a 3-class model on 6 samples: one-hot probabilities at `predicted`.
ModelAnswers answers(const std::vector<int32_t>& labels, const std::vector<int32_t>& predicted) {
  ModelAnswers a;
  a.classes = 3;
  a.class_names = {"cat", "dog", "eel"};
  a.labels = labels;
  for (int32_t p : predicted)
    for (int32_t c = 0; c < 3; ++c) a.probabilities.push_back(c == p ? 0.8f : 0.1f);
  a.loss_sum = 1.5;
  return a;
}

TEST(ClassificationReport, CountsPrecisionAndRecall) {
  // true:      cat cat cat dog dog eel
  // predicted: cat cat dog dog cat cat   (eel never predicted)
  const ClassificationReport r =
      classification_report(answers({0, 0, 0, 1, 1, 2}, {0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(r.samples, 6);
  EXPECT_EQ(r.correct, 3);
  EXPECT_DOUBLE_EQ(r.accuracy(), 0.5);
  EXPECT_DOUBLE_EQ(r.loss, 0.25);
  EXPECT_EQ(r.confusion, (std::vector<std::vector<int64_t>>{{2, 1, 0}, {1, 1, 0}, {1, 0, 0}}));
  EXPECT_DOUBLE_EQ(r.precision(0), 0.5);  // 2 of the 4 predicted cats
  EXPECT_DOUBLE_EQ(r.recall(0), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.precision(1), 0.5);
  EXPECT_DOUBLE_EQ(r.recall(1), 0.5);
  EXPECT_TRUE(std::isnan(r.precision(2)));  // nothing predicted eel
  EXPECT_DOUBLE_EQ(r.recall(2), 0.0);

  std::ostringstream text;
  print_report(r, text);
  EXPECT_NE(text.str().find("accuracy 0.500000 (3 of 6)"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\neel    -          0.0000    1\n"), std::string::npos) << text.str();
  const std::string csv = report_csv(r);
  EXPECT_EQ(csv.rfind("quantity,true_class,predicted_class,value\n", 0), 0u);
  EXPECT_NE(csv.find("\naccuracy,,,0.5\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nprecision,eel,,\n"), std::string::npos) << csv;  // undefined: empty
  EXPECT_NE(csv.find("\ncount,cat,dog,1\n"), std::string::npos) << csv;
}

TEST(ClassificationReport, PredictedIsTheFirstOfEqualProbabilities) {
  ModelAnswers a;
  a.classes = 3;
  a.labels = {2};
  a.probabilities = {0.2f, 0.4f, 0.4f};
  EXPECT_EQ(a.predicted(0), 1);
}

Model two_stage_mlp() {
  return Model(Graph::load(std::string(WT_SOURCE_DIR) + "/models/mlp.toml"), wt::testing::memory(),
               {3});  // stage 0: flatten, fc1, relu1; stage 1: the rest
}

// Each entry's offset and shape as the model laid it out, and the entries tile the stage.
TEST(ParamLayout, NamesEveryParameterAtItsOffset) {
  Model m = two_stage_mlp();
  ASSERT_EQ(m.stages.size(), 2u);
  for (const Stage& st : m.stages) {
    const std::string json = stage_layout_json(st);
    int64_t total = 0;
    for (size_t i = 0; i < st.params.size(); ++i) {
      std::string dims;
      for (int64_t d : st.param_shapes[i]) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      const std::string entry = "{\"name\": \"" + st.params[i].name +
                                "\", \"offset\": " + std::to_string(st.param_offsets[i]) +
                                ", \"shape\": [" + dims + "]}";
      EXPECT_NE(json.find(entry), std::string::npos) << entry << " not in " << json;
      total += shape_numel(st.param_shapes[i]);
    }
    EXPECT_EQ(total, st.param_count());
  }
  const std::string second = stage_layout_json(m.stages[1]);
  // Reverse node order: fc3 first, then fc2.
  EXPECT_NE(second.find("\"fc3.weight\", \"offset\": 0, \"shape\": [10, 256]"), std::string::npos)
      << second;
  EXPECT_NE(second.find("\"fc2.weight\", \"offset\": 2570, \"shape\": [256, 256]"),
            std::string::npos)
      << second;
}

// The logits forward_to_loss_input returns give the loss the full pass computes.
TEST(GraphPass, ForwardToLossInputIsWhatTheLossReads) {
  Model m = two_stage_mlp();
  m.init(7);
  const int64_t n = 4;
  Tensor x = Tensor::empty({n, 1, 28, 28}, m.allocator());
  std::vector<float> values(size_t(x.numel()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i % 13) / 13.0f - 0.5f;
  x.copy_from_host(values.data());
  const std::vector<int32_t> labels{0, 3, 9, 3};
  const std::vector<float> logits =
      forward_to_loss_input(m, wt::testing::device().ops(), x).to_host();
  ASSERT_EQ(logits.size(), size_t(n * 10));
  double loss = 0;
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int c = 0; c < 10; ++c) sum += std::exp(double(logits[size_t(i * 10 + c)]));
    loss += std::log(sum) - logits[size_t(i * 10 + labels[size_t(i)])];
  }
  const double pass = run_graph_pass(m, wt::testing::device().ops(), x, labels, false, Mode::Eval);
  EXPECT_NEAR(loss / n, pass, 1e-5);
}

}  // namespace
}  // namespace wt
