// write_checkpoint: the collective parallel-HDF5 write of one checkpoint (format in
// checkpoint_file.hpp).
//
// A full disk: before HDF5 opens the file, rank 0 reserves the blocks the whole file will take (a
// bound on its size, io/space_reservation.hpp) and the ranks agree on the outcome, so running out
// of space fails on every rank at that one point, before any collective, with the system's reason.
// Whatever schedule wrote the checkpoint, the write itself then finds its space.
//
// Why failures are still recorded, not thrown: the ranks write with a mix of collective calls
// (file create and close, datasets, attributes, checksum broadcasts) and independent ones (each
// owner's data). A rank that threw at its first failed write (an I/O error; or a full disk where
// the file system cannot reserve) would leave the others waiting in the next collective for ever.
// So every rank makes the same sequence of collective calls whatever happened to its own writes,
// closes the file collectively, and only then do the ranks agree whether the file is good, each
// failing with the same message if it is not.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "io/checkpoint_format.hpp"
#include "io/space_reservation.hpp"
#include "model/param_layout.hpp"
#include "util/hdf5_util.hpp"

namespace wt {

namespace {

using checkpoint_format::fnv1a;

// Whether the file system holding `path` is (nearly) full: less than 1 MiB left for users.
bool file_system_full(const std::string& path) {
  const std::string dir = path.substr(0, path.find_last_of('/') + 1);
  struct statvfs st {};
  if (::statvfs(dir.empty() ? "." : dir.c_str(), &st) != 0) return false;
  return uint64_t(st.f_bavail) * st.f_frsize < (1u << 20);
}

// The process's file size limit (ulimit -f) in bytes, or 0 when there is none.
uint64_t file_size_limit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return uint64_t(limit.rlim_cur);
}

// The quoted text after `marker` in `desc`, or "".
std::string quoted(const std::string& desc, const char* marker) {
  const size_t at = desc.find(marker);
  if (at == std::string::npos) return "";
  const size_t from = at + std::strlen(marker);
  return desc.substr(from, desc.find('\'', from) - from);
}

// The system's reason for the HDF5 call on `path` that just failed, as HDF5 1.10's error stack
// carries it: its sec2 driver quotes errno's message, its MPI-IO driver MPI's error string
// ("MPI_ERR_NO_SUCH_FILE: no such file or directory"). But Open MPI's MPI-IO reports a write(2)
// that ran out of space as a short write that succeeded (HDF5: "file write failed", no errno): a
// short write to a regular file means a full file system (POSIX), which statvfs confirms. errno
// comes last: by the time HDF5 returns it is often another call's (EBADF from its cleanup).
std::string h5_failure_reason(int saved_errno, const std::string& path, std::string* note) {
  struct Found {
    std::string mpi, sys, innermost;
    bool short_write = false;
  } found;
  auto visit = [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
    auto* f = static_cast<Found*>(data);
    const std::string desc = e->desc ? e->desc : "";
    if (f->innermost.empty()) f->innermost = desc;
    if (f->mpi.empty()) f->mpi = quoted(desc, "MPI error string is '");
    if (f->sys.empty()) f->sys = quoted(desc, "error message = '");
    if (e->func_name && std::strstr(e->func_name, "_write") && desc == "file write failed")
      f->short_write = true;
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, visit, &found);
  if (!found.sys.empty()) return found.sys;
  if (!found.mpi.empty()) {
    // "MPI_ERR_NO_SUCH_FILE: no such file or directory" -> "no such file or directory
    // (MPI_ERR_NO_SUCH_FILE)"
    const size_t colon = found.mpi.find(": ");
    if (colon == std::string::npos) return found.mpi;
    return found.mpi.substr(colon + 2) + " (" + found.mpi.substr(0, colon) + ")";
  }
  if (found.short_write && file_system_full(path)) {
    *note = ": a short write on a full file system";
    return std::strerror(ENOSPC);
  }
  // The other reason a write to a regular file comes up short: the file reached the process's
  // size limit (SIGXFSZ is ignored in main, so write(2) stops there, then fails with EFBIG).
  struct stat st {};
  if (found.short_write && file_size_limit() > 0 && ::stat(path.c_str(), &st) == 0 &&
      uint64_t(st.st_size) >= file_size_limit()) {
    *note = ": the file reached the file size limit (ulimit -f) of " +
            std::to_string(file_size_limit()) + " bytes";
    return std::strerror(EFBIG);
  }
  if (saved_errno) return std::strerror(saved_errno);
  return found.innermost.empty() ? "unknown HDF5 error" : found.innermost;
}

// This rank's outcome: the first failure, with its reason. Later failures are usually its
// consequences and are not recorded.
class WriteStatus {
 public:
  explicit WriteStatus(std::string path) : path_(std::move(path)) {}
  bool ok() const { return reason_.empty(); }
  const std::string& reason() const { return reason_; }
  // Runs an HDF5 call that returns true on success; on failure records `what` and the reason.
  template <typename Call>
  bool run(const std::string& what, Call&& call) {
    H5Eclear2(H5E_DEFAULT);
    errno = 0;
    const bool good = call();
    if (!good && ok()) {
      std::string note;
      const int saved = errno;
      reason_ = h5_failure_reason(saved, path_, &note);
      reason_ += " (" + what + note + ")";
    }
    return good;
  }
  void fail(const std::string& why) {
    if (ok()) reason_ = why;
  }

 private:
  std::string path_;
  std::string reason_;
};

struct Writer {
  explicit Writer(const std::string& path) : status(path) {}
  WriteStatus status;
  int rank = 0, world = 1;
  MPI_Comm comm;

  // Fixed-length string attributes: parallel HDF5 writes them collectively without the
  // variable-length machinery.
  void string_attr(hid_t obj, const char* name, const std::string& value) {
    if (obj < 0) return;
    H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), std::max<size_t>(value.size(), 1));
    H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    const std::string padded = value.empty() ? std::string(1, '\0') : value;
    status.run(std::string("writing attribute ") + name, [&] {
      H5Handle a(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                 H5Aclose);
      return a.valid() && H5Awrite(a.get(), type.get(), padded.data()) >= 0;
    });
  }

  void int_array_attr(hid_t obj, const char* name, const std::vector<int64_t>& values) {
    if (obj < 0) return;
    hsize_t n = values.size();
    H5Handle space(n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL), H5Sclose);
    status.run(std::string("writing attribute ") + name, [&] {
      H5Handle a(H5Acreate2(obj, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                 H5Aclose);
      return a.valid() && (!n || H5Awrite(a.get(), H5T_NATIVE_INT64, values.data()) >= 0);
    });
  }

  void int_attr(hid_t obj, const char* name, int64_t value) {
    if (obj < 0) return;
    H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    status.run(std::string("writing attribute ") + name, [&] {
      H5Handle a(H5Acreate2(obj, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                 H5Aclose);
      return a.valid() && H5Awrite(a.get(), H5T_NATIVE_INT64, &value) >= 0;
    });
  }

  H5Handle group(hid_t parent, const std::string& name) {
    H5Handle g;
    if (parent >= 0)
      status.run("creating group " + name, [&] {
        g = H5Handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     H5Gclose);
        return g.valid();
      });
    return g;
  }

  H5Handle dataset(hid_t parent, const char* name, hid_t file_type,
                   const std::vector<hsize_t>& dims) {
    H5Handle ds;
    if (parent < 0) return ds;
    H5Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
    status.run(std::string("creating dataset ") + name, [&] {
      ds = H5Handle(
          H5Dcreate2(parent, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
          H5Dclose);
      return ds.valid();
    });
    return ds;
  }

  // Independent write of `data` into `ds` (the whole dataset, or the file/memory selections).
  // Skipped once this rank has failed: nobody waits for it, and the file is lost anyway.
  void write(hid_t ds, hid_t mem_type, hid_t mem_space, hid_t file_space, const void* data,
             const char* name) {
    if (ds < 0 || !status.ok()) return;
    status.run(std::string("writing dataset ") + name, [&] {
      return H5Dwrite(ds, mem_type, mem_space, file_space, H5P_DEFAULT, data) >= 0;
    });
  }

  // A whole 1-D float dataset written by `writer` only; its checksum attribute is computed there
  // and broadcast, because attribute writes must carry the same value everywhere.
  void owned(hid_t parent, const char* name, const float* data, int64_t n, int writer) {
    H5Handle ds = dataset(parent, name, H5T_IEEE_F32LE, {hsize_t(n)});
    uint64_t sum = 0;
    if (rank == writer) {
      if (n > 0) write(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, data, name);
      sum = fnv1a(data, size_t(n) * sizeof(float));
    }
    MPI_Bcast(&sum, 1, MPI_UINT64_T, writer, comm);
    int_attr(ds.get(), "checksum", int64_t(sum));
  }

  // Row `rank` of a [world, n] float dataset from every rank; the checksum covers the rows in
  // rank order (each rank's row checksum, combined).
  void rows(hid_t parent, const char* name, const float* data, int64_t n) {
    H5Handle ds = dataset(parent, name, H5T_IEEE_F32LE, {hsize_t(world), hsize_t(n)});
    if (n > 0 && ds.valid()) {
      H5Handle file_space(H5Dget_space(ds.get()), H5Sclose);
      hsize_t start[2] = {hsize_t(rank), 0}, count[2] = {1, hsize_t(n)};
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
      H5Handle mem_space(H5Screate_simple(1, &count[1], nullptr), H5Sclose);
      write(ds.get(), H5T_NATIVE_FLOAT, mem_space.get(), file_space.get(), data, name);
    }
    std::vector<uint64_t> sums(world);
    uint64_t mine = fnv1a(data, size_t(n) * sizeof(float));
    MPI_Allgather(&mine, 1, MPI_UINT64_T, sums.data(), 1, MPI_UINT64_T, comm);
    int_attr(ds.get(), "checksum", int64_t(fnv1a(sums.data(), sums.size() * 8)));
  }

  // A uint8 dataset of `text`, the same on every rank, written by rank 0, with its checksum.
  void text(hid_t parent, const char* name, const std::string& text) {
    H5Handle ds = dataset(parent, name, H5T_STD_U8LE, {hsize_t(text.size())});
    if (rank == 0 && !text.empty())
      write(ds.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, text.data(), name);
    int_attr(ds.get(), "checksum", int64_t(fnv1a(text.data(), text.size())));
  }

  void stages(hid_t parent, Model& model, Optimizer& optimizer, int key_base,
              const std::vector<int>& stage_owner);
  void header(hid_t f, const CheckpointInfo& info, int64_t stages);
};

// One replica's /stages group under `parent`; its optimizer state is the optimizer's stage key
// key_base + s.
void Writer::stages(hid_t parent, Model& model, Optimizer& optimizer, int key_base,
                    const std::vector<int>& stage_owner) {
  H5Handle stages = group(parent, "stages");
  for (size_t s = 0; s < model.stages.size(); ++s) {
    Stage& st = model.stages[s];
    const int owner = stage_owner.at(s);
    const int key = key_base + int(s);
    H5Handle g = group(stages.get(), std::to_string(s));
    owned(g.get(), "values", HostReadable(st.values).data(), st.param_count(), owner);
    text(g.get(), "param_layout", stage_layout_json(st));
    const int64_t nb = st.buffer_values.defined() ? st.buffer_values.numel() : 0;
    rows(g.get(), "buffers", HostReadable(st.buffer_values).data(), nb);

    H5Handle og = group(g.get(), "optimizer");
    // Only the owner has (or gets) the stage's state: a rank that borrows stages must not
    // allocate theirs just to name the datasets.
    std::vector<std::pair<std::string, Tensor*>> state;
    if (rank == owner) {
      optimizer.prepare(key, st.param_count());
      state = optimizer.state(key);
    }
    int64_t steps = optimizer.step_count(key);
    MPI_Bcast(&steps, 1, MPI_INT64_T, owner, comm);
    int_attr(og.get(), "step_count", steps);
    int_attr(og.get(), "step_count_checksum",
             int64_t(checkpoint_format::step_count_checksum(steps)));
    const std::vector<std::string> names = optimizer.state_names();
    for (size_t i = 0; i < names.size(); ++i)
      owned(og.get(), names[i].c_str(),
            rank == owner ? HostReadable(*state.at(i).second).data() : nullptr, st.param_count(),
            owner);
  }
}

void Writer::header(hid_t f, const CheckpointInfo& info, int64_t stage_count) {
  string_attr(f, "format", checkpoint_format::kFormat);
  int_attr(f, "version", checkpoint_format::kVersion);
  int_attr(f, "step", info.step);
  int_attr(f, "global_batch", info.global_batch);
  int_attr(f, "batches_per_epoch", info.batches_per_epoch);
  int_attr(f, "world_size", info.world_size);
  int_attr(f, "seed", int64_t(info.seed));
  string_attr(f, "schedule", info.schedule);
  string_attr(f, "model", info.model);
  string_attr(f, "optimizer", info.optimizer);
  int_attr(f, "stages", stage_count);
  int_array_attr(f, "cuts", info.cuts);
  if (!info.stage_ranks.empty()) int_array_attr(f, "stage_ranks", info.stage_ranks);
  if (info.replicas > 1) int_attr(f, "replicas", info.replicas);
  string_attr(f, "run_id", info.run_id);
  string_attr(f, "run_dir", info.run_dir);
  const uint64_t sum =
      checkpoint_format::header_checksum(info, checkpoint_format::kVersion, stage_count);
  int_attr(f, "header_checksum", int64_t(sum));
}

// Reserves the blocks of the file's extent so that flushing its metadata cannot run out of space;
// a file system that cannot reserve (EOPNOTSUPP) is left as it was.
void reserve(WriteStatus& status, hid_t f, const std::string& path) {
  hsize_t size = 0;
  if (H5Fget_filesize(f, &size) < 0 || size == 0) return;
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return;
  if (::fallocate(fd, 0, 0, off_t(size)) != 0 && errno != EOPNOTSUPP && errno != ENOSYS)
    status.fail(std::string(std::strerror(errno)) + " (reserving the file's " +
                std::to_string(size) + " bytes)");
  ::close(fd);
}

// The bytes of data a checkpoint holds (every dataset's payload), the same on every rank.
uint64_t payload_bytes(const CheckpointInfo& info, Model& model, Optimizer& optimizer, int world,
                       const ReplicaState& replicas, uint64_t* datasets) {
  uint64_t bytes = info.deck_toml.size();
  *datasets = 1;
  const uint64_t states = optimizer.state_names().size();
  for (size_t r = 0; r <= replicas.more.size(); ++r) {
    Model& m = r == 0 ? model : *replicas.more[r - 1];
    for (Stage& st : m.stages) {
      const uint64_t nb = st.buffer_values.defined() ? uint64_t(st.buffer_values.numel()) : 0;
      bytes += 4 * (uint64_t(st.param_count()) * (1 + states) + uint64_t(world) * nb);
      bytes += stage_layout_json(st).size();
      *datasets += 3 + states;
    }
  }
  if (replicas.kept)
    for (const std::vector<Tensor>& wave : *replicas.kept)
      for (const Tensor& t : wave)
        if (t.defined()) {
          bytes += 4 * uint64_t(world) * uint64_t(t.numel());
          ++*datasets;
        }
  return bytes;
}

// A bound on the checkpoint file's size: its payload plus the metadata (measured: under 4 KB per
// dataset, with the header's attributes) with room to spare. The same on every rank.
uint64_t file_size_bound(const CheckpointInfo& info, Model& model, Optimizer& optimizer,
                         const ReplicaState& replicas, int world) {
  uint64_t datasets = 0;
  const uint64_t payload = payload_bytes(info, model, optimizer, world, replicas, &datasets);
  return payload + 65536 + 4096 * datasets;
}

// A checkpoint larger than the file size limit (ulimit -f) of any rank is refused before the
// file exists: HDF5 cannot close a parallel file it could not extend, and the failed close
// crashes MPI_Finalize. Collective; the same reason on every rank, or "".
std::string check_file_size_limit(uint64_t needed, MPI_Comm comm) {
  uint64_t limit = file_size_limit();
  if (limit == 0) limit = UINT64_MAX;
  MPI_Allreduce(MPI_IN_PLACE, &limit, 1, MPI_UINT64_T, MPI_MIN, comm);
  if (limit == UINT64_MAX) return "";
  if (needed <= limit) return "";
  return std::string(std::strerror(EFBIG)) + " (the checkpoint needs about " +
         std::to_string(needed) + " bytes, over the file size limit (ulimit -f) of " +
         std::to_string(limit) + " bytes)";
}

// Every rank learns whether any rank failed, and the lowest failing rank's reason.
std::string agree(const WriteStatus& status, int rank, int world, MPI_Comm comm) {
  int first = status.ok() ? world : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == world) return "";
  std::string reason = status.reason();
  int64_t n = int64_t(reason.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, first, comm);
  reason.resize(size_t(n));
  MPI_Bcast(reason.data(), int(n), MPI_CHAR, first, comm);
  return reason;
}

void broadcast_from_root(std::string& text, MPI_Comm comm) {
  int64_t n = int64_t(text.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, 0, comm);
  text.resize(size_t(n));
  if (n > 0) MPI_Bcast(text.data(), int(n), MPI_CHAR, 0, comm);
}

}  // namespace

void write_checkpoint(const std::string& path, const CheckpointInfo& info_in, Model& model,
                      Optimizer& optimizer, const std::vector<int>& stage_owner, MPI_Comm comm,
                      const ReplicaState& replicas) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  hdf5_silence_errors();
  Writer w(path);
  w.comm = comm;
  MPI_Comm_rank(comm, &w.rank);
  MPI_Comm_size(comm, &w.world);
  CheckpointInfo info = info_in;  // what the file records: this write's world and replicas
  info.world_size = w.world;
  info.replicas = int(replicas.more.size()) + 1;
  // A parallel file's attributes and dataset shapes must be the same on every rank, but an MPMD
  // launch can give ranks different decks (data.path, say): rank 0's is the one recorded.
  broadcast_from_root(info.deck_toml, comm);
  broadcast_from_root(info.run_dir, comm);
  const uint64_t bound = file_size_bound(info, model, optimizer, replicas, w.world);
  const std::string too_large = check_file_size_limit(bound, comm);
  if (!too_large.empty()) throw CheckpointWriteError(path, too_large);
  // Out of space (or quota) fails here, on every rank alike, before HDF5 has the file.
  SpaceReservation reservation;
  if (w.rank == 0) {
    reservation = reserve_file_space(path, bound);
    if (!reservation.error.empty()) w.status.fail(reservation.error);
  }
  const std::string unreserved = agree(w.status, w.rank, w.world, comm);
  if (!unreserved.empty()) throw CheckpointWriteError(path, unreserved);

  // A raw id, not an H5Handle: closing a parallel file is collective and must happen here, on
  // every rank, never in a destructor while one rank unwinds.
  hid_t f = -1;
  {
    H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL);
    // MPI_File_open is collective: it fails on every rank or on none.
    w.status.run("creating the file", [&] {
      f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
      return f >= 0;
    });
  }
  if (f >= 0) {
    const int64_t stage_count = int64_t(model.stages.size());
    w.header(f, info, stage_count);
    w.text(f, "deck", info.deck_toml);
    w.stages(f, model, optimizer, 0, stage_owner);
    if (!replicas.more.empty()) {
      H5Handle rg = w.group(f, "replicas");
      for (size_t r = 1; r <= replicas.more.size(); ++r) {
        H5Handle g = w.group(rg.get(), std::to_string(r));
        w.stages(g.get(), *replicas.more[r - 1], optimizer, int(r) * int(stage_count), stage_owner);
      }
    }
    if (replicas.kept) {
      // Every rank keeps gradients at the same instructions, so definedness agrees across ranks.
      H5Handle kg = w.group(f, "kept");
      for (size_t r = 0; r < replicas.kept->size(); ++r) {
        H5Handle g = w.group(kg.get(), std::to_string(r));
        for (size_t s = 0; s < (*replicas.kept)[r].size(); ++s) {
          const Tensor& t = (*replicas.kept)[r][s];
          if (t.defined())
            w.rows(g.get(), std::to_string(s).c_str(), HostReadable(t).data(), t.numel());
        }
      }
    }
    // HDF5 1.10 cannot close a parallel file whose metadata it fails to flush: ranks whose
    // caches differ wait in different collectives, and a file that failed to close crashes
    // MPI_Finalize. So rank 0 first reserves the file's whole extent (metadata goes there),
    // and when any write failed, it frees the file's space instead: every rank has stopped
    // writing by the agreement, and the close then flushes the metadata into room that exists.
    if (w.rank == 0 && w.status.ok()) reserve(w.status, f, path);
    if (!agree(w.status, w.rank, w.world, comm).empty()) {
      if (w.rank == 0) ::truncate(path.c_str(), 0);
      MPI_Barrier(comm);
    }
    w.status.run("closing the file", [&] { return H5Fclose(f) >= 0; });
  }
  const std::string reason = agree(w.status, w.rank, w.world, comm);
  if (!reason.empty()) throw CheckpointWriteError(path, reason);
  if (reservation.reserved) release_reserved_tail(path);  // the bound's unused rest
}

}  // namespace wt
