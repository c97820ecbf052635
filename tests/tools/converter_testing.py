"""What the converter tests share: running a tool as a user does (a subprocess), reading the file
it wrote, and a test case with a scratch directory that checks conversions and refusals (exit
status 2, one line naming the file, no output and no temporary left behind). Not a test itself:
tests/CMakeLists.txt registers only tests/tools/test_*.py.
"""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import h5py

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def run(tool, *args):
    """(exit status, stdout, stderr) of a converter."""
    p = subprocess.run([sys.executable, str(TOOLS / tool), *map(str, args)],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def load(path):
    """The file's datasets and attributes, read whole (the file closed again)."""
    with h5py.File(path, "r") as f:
        data = {f"{s}/{k}": f[s][k][:] for s in f for k in f[s]}
        data["attrs"] = dict(f.attrs)
    return data


class Converting(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def converts(self, tool, *args):
        out = self.d / "out.h5"
        rc, stdout, stderr = run(tool, *args, "--output", out)
        self.assertEqual(rc, 0, stderr)
        return load(out), stdout, stderr

    def refuses(self, pattern, tool, *args):
        out = self.d / "refused.h5"
        rc, _, stderr = run(tool, *args, "--output", out)
        self.assertEqual(rc, 2, stderr)
        lines = [line for line in stderr.splitlines() if ": error: " in line]
        self.assertEqual(len(lines), 1, stderr)
        self.assertNotIn("Traceback", stderr)
        self.assertRegex(lines[0], pattern)
        self.assertFalse(out.exists())
        self.assertEqual(list(self.d.glob("*.tmp.*")), [])
        return lines[0]

    def csv(self, name, header, rows, prefix=b"", newline="\n"):
        text = newline.join([header] + [",".join(map(str, r)) for r in rows]) + newline
        (self.d / name).write_bytes(prefix + text.encode())
        return self.d / name
