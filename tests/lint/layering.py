"""The layering rules of ARCHITECTURE.md, checked on the source tree:
- dependencies point one way: a file in src/<dir>/ may include headers of its own directory, of a
  directory on the same tier, or of a lower tier, never of a higher one;
- the planner and the simulator price through the floor beneath them (pricing/) and never read
  each other: plan/ and sim/ share a tier but neither includes the other;
- kernels live behind the ops interface: nothing outside src/ops/ includes or calls a BLAS, and
  nothing but src/ops/ and src/device/ (which picks the backend) includes a backend's folder
  (ops/host/, ops/cuda/): layers, the executor, optimizers and the guard call OpsBackend.
Fails naming every violation.

    layering.py SRC_DIR      check the tree
    layering.py --self-test  the checks catch an upward include, plan/ and sim/ reading each other
                             and a BLAS call (and only those)
"""
import re
import sys
import tempfile
from pathlib import Path

# Lowest first. A directory not listed here is an error too, so a new one gets a tier.
TIERS = [
    {"util"},                          # errors, HDF5 helpers: used everywhere
    {"compress"},                      # weight codecs: pure functions on arrays (ops call them)
    {"mem"},                           # the caching allocator
    {"tensor"},
    {"ops", "device"},                 # kernels and their backends
    {"model", "comm", "data", "io"},
    {"sched"},                         # instructions and generators: pure data
    {"pricing"},                       # device model, node and sync costs, DeepPool's cost table
    {"exec", "plan", "sim"},           # run, plan and price the instruction lists
    {"deck"},                          # the input deck: fills in the components' options
    {"job"},
    {"app"},
]
TIER = {d: i for i, tier in enumerate(TIERS) for d in tier}
# Directories on one tier that must not include each other: both read the tier below instead.
APART = [{"plan", "sim"}]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)
BLAS = re.compile(r'#\s*include\s*<cblas\.h>|\bcblas_[a-z]+\s*\(')
BACKEND = re.compile(r'^\s*#\s*include\s+"ops/(host|cuda)/', re.M)


def violations(src):
    found = []
    for path in sorted(Path(src).rglob("*")):
        if path.suffix not in (".hpp", ".cpp", ".cu", ".cuh", ".h"):
            continue
        where = path.relative_to(src).parts[0]
        if where not in TIER:
            found.append(f"{path}: directory src/{where}/ has no tier in {__file__}")
            continue
        for target in INCLUDE.findall(path.read_text(errors="replace")):
            if target not in TIER:
                found.append(f"{path}: includes {target}/, which has no tier")
            elif TIER[target] > TIER[where]:
                found.append(f"{path}: includes {target}/ (higher than {where}/): "
                             f"the dependency must point down")
            elif {where, target} in APART:
                found.append(f"{path}: includes {target}/, which {where}/ must not read: "
                             f"both price through pricing/, never each other")
        if where != "ops" and BLAS.search(path.read_text(errors="replace")):
            found.append(f"{path}: uses a BLAS outside src/ops/: call an ops/ kernel instead")
        if where not in ("ops", "device") and BACKEND.search(path.read_text(errors="replace")):
            found.append(f"{path}: includes a backend's kernels: call them through OpsBackend "
                         f"(the device context's ops())")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp)
        (src / "model").mkdir()
        (src / "sched").mkdir()
        (src / "model" / "ok.hpp").write_text('#include "tensor/tensor.hpp"\n#include "model/x.hpp"\n')
        (src / "sched" / "ok.cpp").write_text('#include "model/ok.hpp"\n')
        assert violations(src) == [], violations(src)
        (src / "model" / "bad.cpp").write_text('#include "sched/ok.hpp"\n')
        found = violations(src)
        assert len(found) == 1 and "includes sched/ (higher than model/)" in found[0], found
        (src / "model" / "bad.cpp").write_text('void f(float* y) { cblas_sscal(4, 2.0f, y, 1); }\n')
        (src / "ops").mkdir()
        (src / "ops" / "ok.cpp").write_text('#include <cblas.h>\n')
        found = violations(src)
        assert len(found) == 1 and "uses a BLAS outside src/ops/" in found[0], found
        (src / "model" / "bad.cpp").write_text('#include "ops/host/gemm.hpp"\n')
        found = violations(src)
        assert len(found) == 1 and "includes a backend's kernels" in found[0], found
        (src / "device").mkdir()
        (src / "device" / "ok.cpp").write_text('#include "ops/host/host_ops.hpp"\n')
        assert len(violations(src)) == 1
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp)
        for d in ("pricing", "plan", "sim"):
            (src / d).mkdir()
        (src / "pricing" / "costs.hpp").write_text('#include "sched/instruction.hpp"\n')
        (src / "plan" / "ok.cpp").write_text('#include "pricing/costs.hpp"\n#include "plan/x.hpp"\n')
        (src / "sim" / "ok.cpp").write_text('#include "pricing/costs.hpp"\n')
        assert violations(src) == [], violations(src)
        (src / "plan" / "bad.cpp").write_text('#include "sim/simulator.hpp"\n')
        (src / "sim" / "bad.cpp").write_text('#include "plan/layer_profile.hpp"\n')
        found = violations(src)
        assert len(found) == 2 and all("must not read" in f for f in found), found
        (src / "plan" / "bad.cpp").unlink()
        (src / "sim" / "bad.cpp").unlink()
        (src / "pricing" / "bad.cpp").write_text('#include "plan/burst_planner.hpp"\n')
        found = violations(src)
        assert len(found) == 1 and "includes plan/ (higher than pricing/)" in found[0], found
    print("self-test: an upward include, plan/ and sim/ reading each other, a BLAS call outside "
          "ops/ and a backend included past the ops interface are caught; the rest passes")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    found = violations(sys.argv[1])
    for line in found:
        print(line)
    print(f"{len(found)} layering violation(s)" if found else "layering: ok")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
