// Measures this machine as the simulator's device model needs it and prints a device file
// (TOML, see src/pricing/device_model.hpp): GEMM FLOP/s and memory bandwidth per rank while every
// rank runs at once (ranks share caches and memory), and the message latency and bandwidth
// between two ranks by ping-pong. Run it with the rank count the runs will use:
//   mpiexec -n 2 build/probe_device > bench/devices/this_machine.toml
// With ranks 0 and 1 on two nodes (e.g. mpirun --host a,b) the ping-pong is the inter-node link,
// and the file says so (tests/e2e/pbs_two_hosts.sh measures a TCP link that way).
// Exit status: 0 done, 2 bad usage, 1 other.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "ops/host/gemm.hpp"
#include "tool_command_line.hpp"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Every rank multiplies at once: what one rank gets when all of them compute.
double gemm_flops(int64_t n, int reps) {
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.f);
  wt::ops::gemm(false, false, n, n, n, 1.f, a.data(), b.data(), 0.f, c.data());  // warm up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    wt::ops::gemm(false, false, n, n, n, 1.f, a.data(), b.data(), 0.f, c.data());
    t.push_back(now() - t0);
  }
  return 2.0 * double(n) * double(n) * double(n) / median(t);
}

// STREAM triad, bytes moved: two reads and one write per element.
double triad_bandwidth(int64_t n, int reps) {
  std::vector<float> a(n, 1.f), b(n, 2.f), c(n, 0.f);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    for (int64_t j = 0; j < n; ++j) c[j] = a[j] + 1.5f * b[j];
    t.push_back(now() - t0);
    a[i % n] = c[(i * 7) % n];  // keep the loop from being optimised away
  }
  return 3.0 * sizeof(float) * double(n) / median(t);
}

// Half a round trip between ranks 0 and 1 (the others wait).
double ping_pong(int rank, int64_t bytes, int reps) {
  std::vector<char> buf(std::max<int64_t>(bytes, 1));
  std::vector<double> t;
  for (int i = 0; i < reps + 2; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    if (rank == 0) {
      MPI_Send(buf.data(), int(bytes), MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), int(bytes), MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf.data(), int(bytes), MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), int(bytes), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
    if (i >= 2) t.push_back((now() - t0) / 2);
  }
  double m = median(t);
  MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return m;
}

// Where the ranks run: how many share rank 0's node, and whether ranks 0 and 1 (the ping-pong
// pair) share one, which says which link the ping-pong measured.
struct Placement {
  int ranks_per_node = 1;
  bool pair_on_one_node = true;
};

Placement find_placement(int rank) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local = 1, node_leader = rank;
  MPI_Comm_size(node, &local);
  MPI_Allreduce(MPI_IN_PLACE, &node_leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  int leaders[2] = {node_leader, node_leader};
  MPI_Bcast(&leaders[0], 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(&leaders[1], 1, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Bcast(&local, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return {local, leaders[0] == leaders[1]};
}

void print_device(const std::string& name, int world, const double lowest[2], double alpha,
                  double beta, const Placement& placement) {
  std::printf("# Measured by tools/probe_device on %d ranks (GEMM backend %s); slowest rank.\n",
              world, wt::ops::gemm_backend());
  std::printf("name = \"%s\"\n", name.c_str());
  std::printf("peak_flops = %.4g         # GEMM 768^3 with every rank computing\n", lowest[0]);
  std::printf("efficiency = 1.0\n");
  std::printf("memory_bandwidth = %.4g   # triad per rank, every rank at once\n", lowest[1]);
  std::printf("launch_s = 2e-6\n");
  std::printf("memory_bytes = 0\n");
  std::printf("ranks_per_node = %d\n", placement.ranks_per_node);
  if (placement.pair_on_one_node) {
    std::printf("intra_alpha_s = %.4g\n", alpha);
    std::printf("intra_bytes_per_s = %.4g\n", beta);
    std::printf("inter_alpha_s = %.4g      # one node only: inter-node = intra-node\n", alpha);
    std::printf("inter_bytes_per_s = %.4g\n", beta);
    std::printf("comm_uses_compute = true  # shared-memory MPI copies with the rank's core\n");
  } else {
    std::printf("intra_alpha_s = %.4g      # ranks 0 and 1 on two nodes: intra-node not measured\n",
                alpha);
    std::printf("intra_bytes_per_s = %.4g\n", beta);
    std::printf("inter_alpha_s = %.4g      # ping-pong between ranks 0 and 1 on two nodes\n",
                alpha);
    std::printf("inter_bytes_per_s = %.4g\n", beta);
    std::printf("comm_uses_compute = true  # the kernel's TCP copies run on the rank's core\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  CLI::App app{"Measure this machine for wavetrain's simulator; prints a device file (TOML)."};
  std::string name = "this_machine";
  app.add_option("--name", name, "device name written to the file")->capture_default_str();
  if (const int rc = wt::tools::parse_tool_command_line(app, argc, argv);
      rc != wt::tools::kContinue) {
    MPI_Finalize();
    return rc;
  }
  int rc = 0;
  Kokkos::initialize();
  {
    const double flops = gemm_flops(768, 7);
    const double bandwidth = triad_bandwidth(int64_t(16) << 20, 7);
    double alpha = 0, beta = 0;
    if (world >= 2) {
      alpha = ping_pong(rank, 8, 50);
      const int64_t big = int64_t(8) << 20;
      beta = double(big) / std::max(1e-9, ping_pong(rank, big, 9) - alpha);
    }
    double all[2] = {flops, bandwidth}, lowest[2];
    MPI_Reduce(all, lowest, 2, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    const Placement placement = find_placement(rank);
    if (rank == 0) {
      if (world < 2) {
        std::fprintf(stderr, "probe_device: run with 2 or more ranks to measure messages\n");
        rc = 2;
      } else {
        print_device(name, world, lowest, alpha, beta, placement);
      }
    }
  }
  Kokkos::finalize();
  MPI_Finalize();
  return rc;
}
