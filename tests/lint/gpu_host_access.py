"""The GPU backends' host code never reads or writes a Tensor through its host accessors.

In src/ops/cuda/, src/device/cuda/ and src/comm/cuda/ every line is host code that runs at issue
time (it launches kernels on a stream) or device code: a Tensor's storage there is device memory,
so `t.data()`, `t.view()` and `HostReadable(t)` are always wrong. `t.device_ptr()` is the
argument a launch takes. The strict device catches such an access in the executor's and the
layers' code, but nothing on a CPU runs these backends' own host code: the first GPU run found a
convolution taking its cuDNN workspace with `data()` (every conv model stopped at step 1).

The check is textual: names declared in the file as `Tensor` (variables, members, parameters)
must not be followed by `.data()` or `.view()`, and `HostReadable` must not appear.
Fails naming every violation.

    gpu_host_access.py SRC_DIR   check the tree
    gpu_host_access.py --self-test  the check catches the planted access (and only it)
"""
import re
import sys
import tempfile
from pathlib import Path

GPU_DIRS = ("ops/cuda", "device/cuda", "comm/cuda")
# `Tensor name`, `Tensor& name`, `const Tensor* name`, `std::vector<Tensor> name`, ...
DECLARED = re.compile(r"\bTensor\s*>?\s*[&*]?\s*(\w+)\s*[;,=)({]")
HOST_READABLE = re.compile(r"\bHostReadable\b")


def violations(src):
    found = []
    for sub in GPU_DIRS:
        for path in sorted((Path(src) / sub).glob("*")):
            if path.suffix not in (".hpp", ".cpp", ".cu", ".cuh", ".h"):
                continue
            text = path.read_text(errors="replace")
            names = set(DECLARED.findall(text))
            for number, line in enumerate(text.splitlines(), 1):
                for name in names:
                    if re.search(rf"\b{re.escape(name)}(\[[^\]]*\])?\s*(\.|->)\s*(data|view)\s*\(",
                                 line):
                        found.append(f"{path}:{number}: the Tensor '{name}' read through a host "
                                     f"accessor in GPU host code: pass {name}.device_ptr()")
                if HOST_READABLE.search(line):
                    found.append(f"{path}:{number}: HostReadable in GPU host code: device memory "
                                 f"is not the host's")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp)
        (src / "ops" / "cuda").mkdir(parents=True)
        ok = ("struct S {\n  Tensor held;\n  std::vector<float> values;\n  void* p = nullptr;\n"
              "  void f() { p = held.device_ptr(); float* v = values.data(); (void)v; }\n};\n")
        (src / "ops" / "cuda" / "conv.cu").write_text(ok)
        assert violations(src) == [], violations(src)
        (src / "ops" / "cuda" / "conv.cu").write_text(ok.replace("held.device_ptr()",
                                                                 "held.data()"))
        found = violations(src)
        assert len(found) == 1 and "the Tensor 'held'" in found[0] and ":5:" in found[0], found
        (src / "ops" / "cuda" / "conv.cu").write_text(ok)
        (src / "device" / "cuda").mkdir(parents=True)
        (src / "device" / "cuda" / "x.cpp").write_text(
            "void g(const Tensor& t) { HostReadable r(t); (void)r; }\n")
        found = violations(src)
        assert len(found) == 1 and "HostReadable" in found[0], found
    print("self-test: a Tensor's data() and a HostReadable in GPU host code are caught; "
          "device_ptr() and a vector's data() pass")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    found = violations(sys.argv[1])
    for line in found:
        print(line)
    print(f"{len(found)} host access(es) in GPU host code" if found else "gpu_host_access: ok")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
