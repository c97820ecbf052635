"""Every destructor in src/ that releases an MPI or NCCL resource in a way that can wait for
other ranks (a window or communicator free, a wait on a request, a barrier, ncclCommDestroy)
must ask util/unwinding.hpp's exception_unwinding() first, and its class must be named in
tests/mpi/test_unwinding_release.cpp, which shows it returns alone while an exception unwinds.
Fails naming every violation.

    unwinding.py SRC_DIR TEST_FILE   check the tree
    unwinding.py --self-test         the check catches an unguarded release and an untested type
"""
import re
import sys
import tempfile
from pathlib import Path

COLLECTIVE = re.compile(r"\b(MPI_Win_free|MPI_Comm_free|MPI_Wait|MPI_Waitall|MPI_Barrier|"
                        r"MPI_File_close|MPI_Comm_disconnect|ncclCommDestroy)\s*\(")
# `Name::~Name(` out of line, or `~Name(` inside a class body.
DESTRUCTOR = re.compile(r"(?:\b(\w+)::)?~(\w+)\s*\(\s*\)[^{;]*\{")


def body_after(text, open_brace):
    depth = 0
    for i in range(open_brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_brace:i + 1]
    return text[open_brace:]


def violations(src, test_file):
    tested = Path(test_file).read_text(errors="replace")
    found = []
    for path in sorted(Path(src).rglob("*")):
        if path.suffix not in (".hpp", ".cpp", ".cu", ".cuh", ".h"):
            continue
        text = path.read_text(errors="replace")
        for m in DESTRUCTOR.finditer(text):
            name = m.group(2)
            body = body_after(text, m.end() - 1)
            release = COLLECTIVE.search(body)
            if not release:
                continue
            if "exception_unwinding()" not in body:
                found.append(f"{path}: ~{name} calls {release.group(1)} without asking "
                             f"exception_unwinding() (util/unwinding.hpp) first")
            if not re.search(rf"\b{re.escape(name)}\b", tested):
                found.append(f"{path}: ~{name} releases an MPI/NCCL resource but {test_file} "
                             f"does not test it")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        (src / "comm").mkdir(parents=True)
        test = Path(tmp) / "test.cpp"
        test.write_text("// Guarded\n")
        (src / "comm" / "a.cpp").write_text(
            "Guarded::~Guarded() {\n  if (exception_unwinding()) return;\n"
            "  MPI_Win_free(&w);\n}\n"
            "Bare::~Bare() { if (x) { MPI_Comm_free(&c); } }\n"
            "Harmless::~Harmless() { close(fd); }\n")
        (src / "comm" / "b.hpp").write_text(
            "class Req {\n  ~Req() override {\n    MPI_Wait(&r, MPI_STATUS_IGNORE);\n  }\n};\n")
        got = violations(src, test)
        want = [("a.cpp", "~Bare calls MPI_Comm_free"), ("a.cpp", "~Bare releases"),
                ("b.hpp", "~Req calls MPI_Wait"), ("b.hpp", "~Req releases")]
        ok = len(got) == len(want) and all(
            any(f in g and w in g for g in got) for f, w in want)
        if not ok:
            print("self-test FAILED; got:\n  " + "\n  ".join(got))
            return 1
    print("self-test passed: unguarded releases and untested types are caught, the rest not")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 3:
        print(__doc__)
        return 2
    found = violations(argv[1], argv[2])
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} destructor(s) may wait for other ranks while an exception unwinds")
        return 1
    print("every destructor that releases an MPI/NCCL resource is guarded and tested")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
