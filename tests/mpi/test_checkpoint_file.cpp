// Checkpoint files: a collective write on 2 ranks loads back exactly, per-rank buffers go to the
// right rank, and every kind of damage is an InputError naming the file and the dataset instead
// of a crash or a silently wrong model.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "deck/run_config.hpp"
#include "io/checkpoint_file.hpp"
#include "io/checkpoint_format.hpp"
#include "io/checkpoint_store.hpp"
#include "model/model.hpp"
#include "test_memory.hpp"
#include "util/hdf5_util.hpp"
#include "util/input_error.hpp"

namespace {

namespace fs = std::filesystem;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// A shared scratch directory (rank 0 picks the name).
std::string shared_dir() {
  char name[256] = {0};
  if (world_rank() == 0) {
    std::string d = (fs::temp_directory_path() / "wt-ckpt-XXXXXX").string();
    std::snprintf(name, sizeof name, "%s", d.c_str());
    if (!mkdtemp(name)) name[0] = 0;
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
  return name;
}

wt::Model make_model(uint64_t seed) {
  // Two stages, batchnorm buffers in both: the layout checkpoints must get right.
  wt::Model m(wt::Graph::load(std::string(WT_SOURCE_DIR) + "/models/resnet.toml"),
              wt::testing::memory(), {10});
  m.init(seed);
  return m;
}

std::unique_ptr<wt::Optimizer> make_adamw() {
  wt::RunConfig::Optimizer c;
  c.kind = "adamw";
  return wt::make_optimizer(c, wt::testing::device());
}

struct Written {
  std::string dir, path;
  wt::CheckpointInfo info;
};

// Writes a checkpoint of a model whose values, buffers and optimizer state differ per rank, so
// that reading back shows whose copy went where: stage s is owned by rank s % world.
Written write_sample(wt::Model& model, wt::Optimizer& opt) {
  const int rank = world_rank();
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  std::vector<int> owners;
  for (size_t s = 0; s < model.stages.size(); ++s) {
    wt::Stage& st = model.stages[s];
    owners.push_back(int(s) % world);
    for (int64_t i = 0; i < st.param_count(); ++i) st.values.data()[i] += 100.0f * rank;
    for (int64_t i = 0; i < st.buffer_values.numel(); ++i)
      st.buffer_values.data()[i] = float(rank * 1000 + i);
    opt.prepare(int(s), st.param_count());
    for (auto& [name, t] : opt.state(int(s)))
      for (int64_t i = 0; i < t->numel(); ++i) t->data()[i] = float(i % 7) + rank;
    opt.set_step_count(int(s), 17 + rank);
  }
  Written w;
  w.dir = shared_dir();
  w.path = w.dir + "/step_00000017.h5";
  w.info.step = 17;
  w.info.global_batch = 64;
  w.info.batches_per_epoch = 100;
  w.info.seed = 5;
  w.info.schedule = "gang";
  w.info.model = model.graph.name;
  w.info.optimizer = "adamw";
  w.info.cuts = {10};
  w.info.deck_toml = "[run]\nname = \"x\"\n";
  w.info.run_id = "20260101T000000Z-0123456789abcdef";
  w.info.run_dir = "/runs/x";
  wt::write_checkpoint(w.path, w.info, model, opt, owners, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  return w;
}

TEST(CheckpointFile, RoundTripsOwnersAndPerRankBuffers) {
  const int rank = world_rank();
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  wt::Model model = make_model(3);
  auto opt = make_adamw();
  Written w = write_sample(model, *opt);

  wt::CheckpointInfo info = wt::read_checkpoint_info(w.path);
  EXPECT_EQ(info.step, 17);
  EXPECT_EQ(info.world_size, world);
  EXPECT_EQ(info.model, model.graph.name);
  EXPECT_EQ(info.deck_toml, w.info.deck_toml);
  EXPECT_EQ(info.cuts, w.info.cuts);      // a resumed run keeps its stage cut
  EXPECT_EQ(info.run_id, w.info.run_id);  // whose checkpoint it is (job/run_identity.hpp)
  EXPECT_EQ(info.run_dir, w.info.run_dir);
  ASSERT_EQ(info.stage_params.size(), 2u);

  // Load into a fresh model on every rank: values and optimizer state are the owner's copy,
  // buffers are this rank's own row.
  wt::Model fresh = make_model(99);
  auto opt2 = make_adamw();
  wt::load_checkpoint(w.path, fresh, *opt2, rank);
  wt::Model reference = make_model(3);
  for (size_t s = 0; s < fresh.stages.size(); ++s) {
    const int owner = int(s) % world;
    const wt::Stage& st = fresh.stages[s];
    for (int64_t i = 0; i < st.param_count(); i += 97)
      ASSERT_EQ(st.values.data()[i], reference.stages[s].values.data()[i] + 100.0f * owner);
    for (int64_t i = 0; i < st.buffer_values.numel(); ++i)
      ASSERT_EQ(st.buffer_values.data()[i], float(rank * 1000 + i));
    EXPECT_EQ(opt2->step_count(int(s)), 17 + owner);
    for (auto& [name, t] : opt2->state(int(s)))
      for (int64_t i = 0; i < t->numel(); i += 101) ASSERT_EQ(t->data()[i], float(i % 7) + owner);
  }
  // A rank of a bigger world takes the row of rank (r mod old world).
  wt::Model wider = make_model(99);
  auto opt3 = make_adamw();
  wt::load_checkpoint(w.path, wider, *opt3, rank + world);
  EXPECT_EQ(wider.stages[0].buffer_values.data()[0], float(rank * 1000));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) fs::remove_all(w.dir);
}

// Damage done by rank 0 alone; each case must raise InputError with the file and the key.
void expect_input_error(const std::string& path, const std::string& key_part) {
  wt::Model model = make_model(3);
  auto opt = make_adamw();
  try {
    wt::load_checkpoint(path, model, *opt, 0);
    ADD_FAILURE() << "loaded a damaged checkpoint: " << path;
  } catch (const wt::InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(std::string(e.what()).find(key_part), std::string::npos) << e.what();
  }
}

TEST(CheckpointFile, DamageIsAClearInputError) {
  wt::Model model = make_model(3);
  auto opt = make_adamw();
  Written w = write_sample(model, *opt);
  if (world_rank() == 0) {
    const auto size = fs::file_size(w.path);
    auto variant = [&](const char* suffix) {
      std::string p = w.dir + "/" + suffix;
      fs::copy_file(w.path, p);
      return p;
    };
    // Truncated: a write that died half way.
    std::string truncated = variant("truncated.h5");
    fs::resize_file(truncated, size / 2);
    expect_input_error(truncated, "truncated");
    // Flipped bytes inside the parameter data: only the checksum can tell.
    std::string corrupted = variant("corrupted.h5");
    {
      std::fstream f(corrupted, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(std::streamoff(size - size / 3));
      const char junk[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
      f.write(junk, sizeof junk);
    }
    expect_input_error(corrupted, "/stages/");
    // A dataset deleted.
    std::string missing = variant("missing.h5");
    {
      std::lock_guard<std::recursive_mutex> lock(wt::hdf5_mutex());
      hid_t f = H5Fopen(missing.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      ASSERT_GE(f, 0);
      ASSERT_GE(H5Ldelete(f, "/stages/1/optimizer/exp_avg_sq", H5P_DEFAULT), 0);
      H5Fclose(f);
    }
    expect_input_error(missing, "/stages/1/optimizer/exp_avg_sq");
    // Not a checkpoint at all.
    std::string text = w.dir + "/text.h5";
    std::ofstream(text) << "hello\n";
    expect_input_error(text, "not an HDF5 file");
    // A different model: the mlp's parameter count does not match.
    wt::Model mlp(wt::Graph::load(std::string(WT_SOURCE_DIR) + "/models/mlp.toml"),
                  wt::testing::memory());
    try {
      wt::load_checkpoint(w.path, mlp, *opt, 0);
      ADD_FAILURE() << "loaded a resnet checkpoint into the mlp";
    } catch (const wt::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("stages"), std::string::npos) << e.what();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) fs::remove_all(w.dir);
}

// Overwrites integer attribute `name` of `object` in a copy of the file, as a user's h5py might.
void edit_int_attr(const std::string& path, const char* object, const char* name, int64_t v) {
  std::lock_guard<std::recursive_mutex> lock(wt::hdf5_mutex());
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t obj = H5Oopen(f, object, H5P_DEFAULT);
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  ASSERT_GE(a, 0);
  ASSERT_GE(H5Awrite(a, H5T_NATIVE_INT64, &v), 0);
  H5Aclose(a);
  H5Oclose(obj);
  H5Fclose(f);
}

void replace_string_attr(const std::string& path, const char* name, const std::string& value) {
  std::lock_guard<std::recursive_mutex> lock(wt::hdf5_mutex());
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  ASSERT_GE(H5Adelete(f, name), 0);
  wt::h5_write_attr_string(f, name, value);
  H5Fclose(f);
}

// Everything a resume reads from the header steers it: an edited step, seed or world size (the
// datasets' own checksums cannot tell) and an edited optimizer step count are damage.
TEST(CheckpointFile, EditedHeaderIsDamage) {
  wt::Model model = make_model(3);
  auto opt = make_adamw();
  Written w = write_sample(model, *opt);
  if (world_rank() == 0) {
    for (const char* name : {"step", "seed", "world_size", "batches_per_epoch"}) {
      const std::string p = w.dir + "/edited_" + name + ".h5";
      fs::copy_file(w.path, p);
      edit_int_attr(p, "/", name, 999999);
      expect_input_error(p, "header_checksum: checksum mismatch");
    }
    const std::string p = w.dir + "/edited_step_count.h5";
    fs::copy_file(w.path, p);
    edit_int_attr(p, "/stages/0/optimizer", "step_count", 1);
    expect_input_error(p, "/stages/0/optimizer/step_count: checksum mismatch");
    // A version-1 file (before header checksums) is read, flagged unverified for the warning.
    const std::string v1 = w.dir + "/version1.h5";
    fs::copy_file(w.path, v1);
    edit_int_attr(v1, "/", "version", 1);
    {
      std::lock_guard<std::recursive_mutex> lock(wt::hdf5_mutex());
      hid_t f = H5Fopen(v1.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      ASSERT_GE(H5Adelete(f, "header_checksum"), 0);
      H5Fclose(f);
    }
    EXPECT_FALSE(wt::read_checkpoint_info(v1).header_verified);
    wt::Model old_model = make_model(99);
    auto opt3 = make_adamw();
    EXPECT_NO_THROW(wt::load_checkpoint(v1, old_model, *opt3, 0));
    // The writing run's identity is covered too: another run's checkpoint cannot be made to
    // look like this run's by editing it.
    const std::string renamed = w.dir + "/edited_run_id.h5";
    fs::copy_file(w.path, renamed);
    replace_string_attr(renamed, "run_id", "20260101T000000Z-ffffffffffffffff");
    expect_input_error(renamed, "header_checksum: checksum mismatch");
    // A version-2 file (before identities) reads with none, its header still verified.
    const std::string v2 = w.dir + "/version2.h5";
    fs::copy_file(w.path, v2);
    {
      std::lock_guard<std::recursive_mutex> lock(wt::hdf5_mutex());
      hid_t f = H5Fopen(v2.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      ASSERT_GE(H5Adelete(f, "run_id"), 0);
      ASSERT_GE(H5Adelete(f, "run_dir"), 0);
      H5Fclose(f);
    }
    wt::CheckpointInfo as_v2 = wt::read_checkpoint_info(w.path);
    as_v2.run_id.clear();
    as_v2.run_dir.clear();
    edit_int_attr(v2, "/", "version", 2);
    edit_int_attr(v2, "/", "header_checksum",
                  int64_t(wt::checkpoint_format::header_checksum(as_v2, 2, 2)));
    const wt::CheckpointInfo old = wt::read_checkpoint_info(v2);
    EXPECT_TRUE(old.header_verified);
    EXPECT_EQ(old.run_id, "");
    EXPECT_EQ(old.step, 17);
    // A version-2 file without its checksum is damaged, not old.
    const std::string stripped = w.dir + "/stripped.h5";
    fs::copy_file(w.path, stripped);
    {
      std::lock_guard<std::recursive_mutex> lock(wt::hdf5_mutex());
      hid_t f = H5Fopen(stripped.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      ASSERT_GE(H5Adelete(f, "header_checksum"), 0);
      H5Fclose(f);
    }
    expect_input_error(stripped, "header_checksum: attribute missing");
    // The untouched file still loads.
    wt::Model fresh = make_model(99);
    auto opt2 = make_adamw();
    EXPECT_TRUE(wt::read_checkpoint_info(w.path).header_verified);
    EXPECT_NO_THROW(wt::load_checkpoint(w.path, fresh, *opt2, 0));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) fs::remove_all(w.dir);
}

// A write that fails is raised on every rank with the same message, and nobody hangs.
TEST(CheckpointFile, FailedWriteIsTheSameErrorOnEveryRank) {
  wt::Model model = make_model(3);
  auto opt = make_adamw();
  const std::string path = "/nonexistent-wt-dir/step_00000001.h5.tmp";
  wt::CheckpointInfo info;
  info.model = model.graph.name;
  info.optimizer = "adamw";
  info.cuts = {10};
  std::string message;
  try {
    wt::write_checkpoint(path, info, model, *opt, {0, 0}, MPI_COMM_WORLD);
    ADD_FAILURE() << "wrote into a directory that does not exist";
  } catch (const wt::CheckpointWriteError& e) {
    message = e.what();
    EXPECT_EQ(e.path(), path);
    EXPECT_NE(message.find("cannot write checkpoint " + path + ": "), std::string::npos) << message;
  }
  // Every rank holds the same text.
  int n = int(message.size()), n0 = n;
  MPI_Bcast(&n0, 1, MPI_INT, 0, MPI_COMM_WORLD);
  ASSERT_EQ(n, n0);
  std::string first = message;
  MPI_Bcast(first.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_EQ(first, message);
  if (world_rank() == 0) std::printf("failed write reported as: %s\n", message.c_str());
}

TEST(CheckpointStore, CommitPrunesAndCandidatesSkipTempFiles) {
  if (world_rank() != 0) return;
  std::string dir = (fs::temp_directory_path() / ("wt-store-" + std::to_string(getpid()))).string();
  fs::create_directories(dir);
  wt::CheckpointStore store(dir, 2);
  for (int64_t step : {10, 20, 30}) {
    std::ofstream(store.temp_path(step)) << "data " << step;
    store.commit(step);
  }
  // A write that crashed: its temp file must never be offered.
  std::ofstream(store.temp_path(40)) << "half";
  std::vector<std::string> c = store.candidates();
  ASSERT_EQ(c.size(), 2u);  // keep = 2
  EXPECT_EQ(c[0], store.final_path(30));
  EXPECT_EQ(c[1], store.final_path(20));
  std::ifstream latest(dir + "/latest");
  std::string name;
  latest >> name;
  EXPECT_EQ(name, "step_00000030.h5");
  fs::remove_all(dir);
}

}  // namespace
