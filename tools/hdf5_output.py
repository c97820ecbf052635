"""An HDF5 output file written under a temporary name and renamed into place only when complete.

Every tool in tools/ that writes an HDF5 file writes it through Hdf5Output, so a file under the
output's name is always whole. Any failure (bad input found late, a full disk or a file size limit
met while writing or during HDF5's final flush, SIGTERM or Ctrl-C) removes the temporary. HDF5
reports a failed write as OSError from most calls but as RuntimeError from flush and close;
both become one ConvertError naming the output and the cause. An output that another process
holds open (a job reading the dataset, a program writing it) is not replaced.

After a failed write the temporary is removed but the file is not closed: HDF5 1.10 can crash
(SIGSEGV) flushing it again in H5Fclose, so the process must end without running exit handlers
(os._exit), as converter_cli.run_converter does on any ConvertError.
"""
import errno
import os
import resource
import traceback

import h5py


class ConvertError(Exception):
    """Bad input or an unwritable output: one message naming the input and the item; exit 2."""

    def __init__(self, where, message):
        super().__init__(f"{where}: {message}" if where else message)


def is_write_error(error):
    """Whether `error` is a failed write of the output: an OSError, or a RuntimeError that HDF5
    raised (h5py's flush and close report failed writes so)."""
    if isinstance(error, OSError):
        return True
    if not isinstance(error, RuntimeError) or error.__traceback__ is None:
        return False
    innermost = traceback.extract_tb(error.__traceback__)[-1].filename
    return "h5py" in innermost


def write_failure(path, error):
    """A ConvertError for a failed write of `path` (disk full, file size limit, ...)."""
    text = str(error)
    code = getattr(error, "errno", None)
    if code == errno.ENOSPC or "No space left" in text or "errno = 28," in text:
        return ConvertError(path, "the file system is full (No space left on device); "
                                  "free space or write elsewhere")
    if code == errno.EFBIG or "File too large" in text or "errno = 27," in text:
        return ConvertError(path, "the file would exceed the file size limit (File too large; "
                                  "see ulimit -f)")
    first_line = text.splitlines()[0] if text else type(error).__name__
    return ConvertError(path, f"cannot write: {first_line}")


def lock_holder(path):
    """Who holds `path` open with a lock (HDF5 locks every file it opens, readers included): a
    description such as "process 4242 (wavetrain)", "another process", or "" for nobody."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return ""  # no file (or unreadable: replacing it is the caller's business)
    try:
        import fcntl
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return ""  # released when fd closes
        except BlockingIOError:
            pass
        st = os.fstat(fd)
    finally:
        os.close(fd)
    pid = _flock_holder_pid(st.st_ino)
    if not pid:
        return "another process"
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f"process {pid} ({f.read().strip()})"
    except OSError:
        return f"process {pid}"


def _flock_holder_pid(inode):
    """The pid holding a flock on the file with this inode, from /proc/locks (0 if not visible).
    Lines read "1: FLOCK  ADVISORY  READ 1234 08:01:1311834 0 EOF"; waiters have "->"."""
    try:
        with open("/proc/locks") as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5].endswith(f":{inode}"):
                    return int(fields[4]) if fields[4].isdigit() else 0
    except OSError:
        pass
    return 0


def refuse_if_open(path):
    holder = lock_holder(path)
    if holder:
        raise ConvertError(path, f"in use: {holder} has it open (a job reading it would go on "
                                 "with the old file, a program writing it would lose its writes); "
                                 "stop it or write another --output; nothing written")


def megabytes(need, have):
    """The two sizes in MB, with as many decimals as it takes to tell them apart."""
    for decimals in range(1, 7):
        a, b = f"{need / 1e6:.{decimals}f}", f"{have / 1e6:.{decimals}f}"
        if a != b:
            break
    return a, b


def check_room(path, parent, estimated_bytes):
    """Refuses up front an output that cannot fit the file system or the file size limit."""
    if estimated_bytes <= 0:
        return
    free = os.statvfs(parent)
    blocks = -(-estimated_bytes // max(1, free.f_frsize))  # the file system allocates whole blocks
    free_bytes = free.f_bavail * free.f_frsize
    if blocks * free.f_frsize > free_bytes:
        need, have = megabytes(blocks * free.f_frsize, free_bytes)
        raise ConvertError(path, f"the output needs about {need} MB but the file system holds "
                                 f"only {have} MB free; free space or write elsewhere")
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY and estimated_bytes > limit:
        need, have = megabytes(estimated_bytes, limit)
        raise ConvertError(path, f"the output needs about {need} MB: the file would exceed the "
                                 f"file size limit of {have} MB (ulimit -f); raise it or write "
                                 "elsewhere")


class Hdf5Output:
    """A context manager: `h5`, an h5py.File open on a temporary next to `path` inside the block;
    commit() renames it into place. Any exception leaving the block removes the temporary, and a
    failed write becomes a ConvertError naming the output."""

    def __init__(self, path, estimated_bytes=0):
        self.path = path
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise ConvertError(path, f"--output: directory {parent} does not exist")
        if os.path.isdir(path):
            raise ConvertError(path, "--output: is a directory")
        refuse_if_open(path)
        check_room(path, parent, estimated_bytes)
        self.temp = f"{path}.tmp.{os.getpid()}"
        self.h5 = None

    def commit(self):
        """Flushes, closes and syncs the temporary, then renames it to the output."""
        try:
            self.h5.flush()
            self.h5.close()
            with open(self.temp, "rb") as f:
                os.fsync(f.fileno())
        except (OSError, RuntimeError) as e:
            self.abandon(close=False)
            raise write_failure(self.path, e) from e
        try:
            refuse_if_open(self.path)  # opened while the output was being written
        except ConvertError:
            self.abandon()
            raise
        os.replace(self.temp, self.path)

    def abandon(self, close=True):
        """Removes the temporary (after an error), closing it first unless a write failed."""
        try:
            if close and self.h5 is not None and self.h5.id.valid:
                self.h5.close()
        except Exception:
            pass
        if os.path.exists(self.temp):
            os.remove(self.temp)

    def __enter__(self):
        # The temporary is made here, not in __init__: an exception between the two (a signal)
        # would leave it with no __exit__ to remove it. One inside __enter__ is handled here.
        try:
            self.h5 = h5py.File(self.temp, "w")
        except OSError as e:
            self.abandon(close=False)
            raise write_failure(self.temp, e) from e
        except BaseException:
            self.abandon()
            raise
        return self

    def __exit__(self, kind, value, trace):
        if kind is not None:
            failed_write = is_write_error(value)
            self.abandon(close=not failed_write)
            if failed_write:
                raise write_failure(self.path, value) from value
        return False
