// ScaleDNN's compressed weight broadcast on 2 real ranks: after a stage owner's Broadcast, the
// other rank's weights are decode(encode(owner's weights)) bit for bit, in every codec and mode
// (mlp's zero biases exercise raw mode's side list), the owner's weights are untouched, and with
// no codec the broadcast is exact.
#include <gtest/gtest.h>
#include <mpi.h>

#include "comm/mpi_communicator.hpp"
#include "compress/scalednn_format.hpp"
#include "compress/weight_codec.hpp"
#include "deck/run_config.hpp"
#include "exec/executor.hpp"
#include "model/model.hpp"
#include "synthetic_source.hpp"
#include "test_memory.hpp"

namespace {

// Rank 0 owns (steps) the one stage and broadcasts it; rank 1 borrows it.
wt::Program broadcast_program() {
  wt::Program p;
  p.schedule = "broadcast-test";
  p.world_size = 2;
  p.events = 1;
  p.groups = {{0, 1}};
  wt::Instruction bcast{wt::OpCode::Broadcast};
  bcast.stage = 0;
  bcast.root = 0;
  bcast.group = 0;
  bcast.event = 0;
  wt::Instruction wait{wt::OpCode::Wait};
  wait.event = 0;
  wt::Instruction step{wt::OpCode::Step};  // zero gradients, plain SGD: the values stay
  step.stage = 0;
  p.ranks.push_back(wt::RankProgram{{{bcast, wait, step}}});
  p.ranks.push_back(wt::RankProgram{{{bcast, wait}}});
  return p;
}

// What a member must hold: each parameter tensor encoded and decoded on its own.
std::vector<float> expected_after(const wt::WeightCodec& codec, const wt::Stage& st,
                                  const std::vector<float>& values) {
  if (!codec.active()) return values;
  std::vector<float> out(values.size());
  for (size_t i = 0; i < st.param_shapes.size(); ++i) {
    const int64_t n = wt::shape_numel(st.param_shapes[i]);
    const float* x = values.data() + st.param_offsets[i];
    std::vector<uint32_t> words(size_t(wt::encoded_words(codec, n)));
    std::vector<float> side(size_t(n + 2));
    wt::encode_weights(codec, x, n, words.data(), side.data());
    wt::decode_weights(codec, words.data(), n, side.data(), out.data() + st.param_offsets[i]);
  }
  return out;
}

void check(const wt::WeightCodec& codec) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  if (comm.size() != 2) GTEST_SKIP() << "needs 2 ranks";
  wt::Model model(wt::Graph::load(std::string(WT_SOURCE_DIR) + "/models/mlp.toml"),
                  wt::testing::memory());
  model.init(42);
  const std::vector<float> initial = model.stages[0].values.to_host();
  wt::RunConfig::Optimizer opt_cfg;
  opt_cfg.kind = "sgd";
  opt_cfg.lr = 0.1;
  auto opt = wt::make_optimizer(opt_cfg, wt::testing::device());
  wt::testing::SyntheticSource source(model.graph.input_shape, model.graph.classes, 8, 1);
  wt::Executor exec(wt::testing::device(), model, comm, *opt, source, broadcast_program(), 1);
  exec.set_weight_codec(codec);
  exec.run_step(0, opt_cfg.lr);
  const std::vector<float> got = model.stages[0].values.to_host();
  const std::vector<float> want =
      comm.rank() == 0 ? initial : expected_after(codec, model.stages[0], initial);
  ASSERT_EQ(got.size(), want.size());
  size_t differ = 0, changed = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    differ += wt::scalednn::bits_of(got[i]) != wt::scalednn::bits_of(want[i]);
    changed += got[i] != initial[i];
  }
  EXPECT_EQ(differ, 0u) << "rank " << comm.rank() << " codec " << codec.kind;
  if (comm.rank() == 1 && codec.active()) {
    EXPECT_GT(changed, got.size() / 2);  // not vacuous
  }
}

wt::WeightCodec codec(const std::string& kind, const std::string& out_of_range = "raw") {
  wt::WeightCodec c;
  c.kind = kind;
  c.out_of_range = out_of_range;
  return c;
}

TEST(WeightBroadcast, NoCodecIsExact) { check(codec("none")); }
TEST(WeightBroadcast, ScaleDnnRawDecodesTheOwnersWords) { check(codec("scalednn", "raw")); }
TEST(WeightBroadcast, ScaleDnnPaperDecodesTheOwnersWords) { check(codec("scalednn", "paper")); }
TEST(WeightBroadcast, Bf16DecodesTheOwnersWords) { check(codec("bf16")); }

}  // namespace
