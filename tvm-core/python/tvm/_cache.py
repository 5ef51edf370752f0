"""Where TVM caches things: one rule for every cache (compiled kernels, the entry-point scan,
NVRTC images, OpenCL program binaries), and one way to write a cache file.

``$TVM_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/tvm``, else ``~/.cache/tvm``; each cache is a
sub-directory. ``TVM_CACHE_DIR=0`` (or ``off``, ``none``, ``false``) disables caching.
Kept free of imports so ``import tvm`` can use it.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import itertools
import os
import re
import shutil
import tempfile
import stat
import time
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from typing import Callable

from tvm._env import FALSE

_OFF = (*FALSE, "none")
_publish_count = itertools.count()


def cache_root() -> str | None:
    """The cache root directory, or None when caching is disabled."""
    env = os.environ.get("TVM_CACHE_DIR", "").strip()
    if env.lower() in _OFF:
        return None
    if env:  # "~" and "~/x" as a shell reads them, "~user" kept as written (as the C++ caches do)
        return os.path.expanduser(env) if env == "~" or env.startswith("~/") else env
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "tvm")


def cache_subdir(name: str) -> str | None:
    """``<cache root>/<name>``, or None when caching is disabled."""
    root = cache_root()
    return None if root is None else os.path.join(root, name)


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def special_file_kind(mode: int) -> str | None:
    """What a file of ``mode`` (``os.stat``'s) is when it is not a regular file ("a FIFO" ...)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _FILE_KINDS if test(mode)), "a special file")


class NotARegularFile(OSError):
    """A path to be read is a directory, FIFO, socket or device (``kind``), not a regular file."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a regular file")
        self.kind = kind


def read_regular_file(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``. Raises :class:`NotARegularFile` when it is a
    directory, FIFO, socket or device (reading one would fail, block forever or never end) and
    OSError when it cannot be read, or holds more than ``limit`` bytes (a cache entry no writer
    makes that large is damage, and reading it whole could exhaust memory). Opening does not
    block: a FIFO put there is seen by ``fstat`` before anything is read."""
    kind = special_file_kind(os.stat(path).st_mode)  # a socket cannot even be opened
    if kind is not None:
        raise NotARegularFile(os.fspath(path), kind)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:  # and what was put there since is seen before anything is read
        kind = special_file_kind(os.fstat(fd).st_mode)
    except OSError:
        os.close(fd)
        raise
    if kind is not None:
        os.close(fd)
        raise NotARegularFile(os.fspath(path), kind)
    with os.fdopen(fd, "rb") as f:
        if limit is not None and os.fstat(f.fileno()).st_size > limit:
            raise OSError(errno.EFBIG, f"larger than the {limit} bytes such a file holds", os.fspath(path))
        return f.read(-1 if limit is None else limit + 1)


def check_user_file(path: str) -> None:
    """A ValueError when ``path``, where a user asked for a file to be written, is empty, names a
    folder, or is something other than a regular file (``os.replace`` would put the file in the
    place of a FIFO or a device). Cache entries are replaced whatever sits at their path."""
    if not path or path.endswith(os.sep) or (os.altsep and path.endswith(os.altsep)):
        raise ValueError(f"cannot write a file at {path!r}: give a file name (such as 'lib.so')")
    try:
        kind = special_file_kind(os.stat(path).st_mode)
    except OSError:
        return  # absent (or unreadable): os.replace says what is wrong
    if kind is not None:
        what = "a folder" if kind == "a directory" else f"not a regular file ({kind})"
        raise ValueError(f"cannot write a file at {path}: it is {what}; give the path of a file")


def publish(path: str | os.PathLike, write: "Callable[[str], None]") -> None:
    """Make the file ``path`` (creating its folder) with ``write(temporary_path)`` so that readers
    see either the old file or the complete new one: a temporary name private to this process and
    thread, then ``os.replace``; nothing is left behind when ``write`` fails."""
    path = os.fspath(path)
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, mode=0o755, exist_ok=True)
    # a short name of its own: the file's name plus a suffix could pass the system's limit
    tmp = os.path.join(folder, f".tvm-{os.getpid()}-{_thread.get_ident()}-{next(_publish_count)}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, OSError):
            raise naming(err, path) from None
        raise


def naming(err: OSError, path: str) -> OSError:
    """``err`` about ``path`` (the file the caller asked for) instead of a private name."""
    return OSError(err.errno, err.strerror, path) if err.errno is not None else err


class ScratchError(OSError):
    """An OSError about a file in the temporary folder (TMPDIR), not in the cache or the user's."""


def in_scratch(err: OSError, path: str) -> ScratchError:
    """``err`` about ``path`` in the temporary folder, saying which folder that is (TMPDIR): a
    full or unwritable one is not the user's own path."""
    return ScratchError(
        err.errno,
        f"{err.strerror} (in the temporary folder {tempfile.gettempdir()}: set TMPDIR to a folder with room)",
        path,
    )


#: Scratch folders a process names after itself (:func:`scratch_prefix`): ``tvm-cc-<pid>-...``.
_SCRATCH_NAME = re.compile(r"tvm-(?:cc|build|lib|omp)-(\d+)-")
#: How old a dead process's scratch folder must be before another removes it (a process of
#: another pid namespace sharing the folder may be alive under a pid this one does not see).
_STALE_AFTER_S = 3600
_swept = False


def scratch_prefix(kind: str) -> str:
    """The name prefix of a scratch folder of this process (``tvm-cc-<pid>-``). A process stopped
    by a signal Python does not turn into an exception (SIGTERM, SIGKILL) leaves its folder, with
    the kernel's source, behind: the first process of the same user to make one afterwards
    removes those of processes that are gone."""
    global _swept
    if not _swept:
        _swept = True
        _remove_stale_scratch(tempfile.gettempdir())
    return f"tvm-{kind}-{os.getpid()}-"


def _remove_stale_scratch(folder: str) -> None:
    try:
        names = os.listdir(folder)
    except OSError:
        return
    now = time.time()
    for name in names:
        found = _SCRATCH_NAME.match(name)
        if found is None:
            continue
        path = os.path.join(folder, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
        if mine and now - info.st_mtime > _STALE_AFTER_S and not _process_alive(int(found.group(1))):
            shutil.rmtree(path, ignore_errors=True)


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` may be running (True when that cannot be told)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):  # another user's, no right to ask, or no pid at all
        return True
    return True


def atomic_write(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` with :func:`publish`. New files are never writable by group or
    others, whatever the umask."""

    def write(tmp: str) -> None:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.fchmod(fd, os.fstat(fd).st_mode & 0o755)  # a permissive umask cannot make it shared-writable
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    publish(path, write)


@contextlib.contextmanager
def exclusive_lock(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive advisory lock on the file ``path`` (created if needed), between processes
    and threads: ``flock`` where the platform has it; elsewhere, or when the file cannot be
    created, no lock (the caller's own writes still report their errors)."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    path = os.fspath(path)
    try:
        os.makedirs(os.path.dirname(path) or ".", mode=0o755, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


#: Header of a cache entry: magic, then the payload's length and CRC-32 as little-endian u64
#: (the same format as the C++ runtimes' tvm/runtime/disk_cache.h).
ENTRY_MAGIC = b"TVMCACH1"


def write_entry(path: str | os.PathLike, payload: bytes) -> None:
    """Store ``payload`` at ``path`` with its integrity header (atomically, see atomic_write)."""
    import zlib

    header = ENTRY_MAGIC + len(payload).to_bytes(8, "little") + zlib.crc32(payload).to_bytes(8, "little")
    atomic_write(path, header + payload)


#: The most bytes a cache entry (a program binary, a tuning record file ...) is read up to
ENTRY_LIMIT = 1 << 30


def read_entry(path: str | os.PathLike) -> bytes | None:
    """The payload stored at ``path``; None when it is absent or fails the integrity check (a
    truncated, bit-flipped or foreign file, which is then removed so the next store replaces it)."""
    import zlib

    try:
        data = read_regular_file(path, limit=ENTRY_LIMIT)
    except NotARegularFile:
        data = b""  # removed below, so that the next store replaces it
    except OSError:
        return None
    payload = data[24:]
    if (
        data[:8] == ENTRY_MAGIC
        and int.from_bytes(data[8:16], "little") == len(payload)
        and int.from_bytes(data[16:24], "little") == zlib.crc32(payload)
        and payload
    ):
        return payload
    try:
        os.unlink(path)
    except OSError:
        pass
    return None


def cached_entry(subdir: str, key: str, suffix: str, make: "Callable[[], bytes]") -> bytes:
    """The bytes stored as entry ``<key><suffix>`` of cache ``subdir`` (sharded by the key's first
    two characters); when it is absent or damaged, ``make()``'s result, stored for next time (an
    unwritable cache only costs the work again). With caching off, always ``make()``."""
    d = cache_subdir(subdir)
    path = None if d is None else os.path.join(d, key[:2], key + suffix)
    if path is not None:
        hit = read_entry(path)
        if hit is not None:
            return hit
    data = make()
    if path is not None:
        try:
            write_entry(path, data)
        except OSError:
            pass
    return data
