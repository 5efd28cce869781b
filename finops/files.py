"""Files written whole or not at all: a temporary file beside the target, renamed over it.

``os.replace`` is atomic on one file system, so a reader (Excel, a scheduler, the next run) sees the
old file or the whole new one, never a part; on any error the temporary file is removed and the
target is left as it was. A symbolic link is followed: its target is replaced and the link kept.

Several files that must change together (the budget review and the history database) are written in
:func:`one_unit`: each :func:`replacing` inside it writes its temporary file, and only when the unit
ends without an error is a journal written (itself atomically) naming every rename, then the renames
are done and the journal removed. :func:`recover`, run by the next writer of the folder, finishes the
renames of a journal a kill interrupted and removes temporary files whose writer is gone, so every
file is the old one or the new one, never a mix of the two states.

Inputs are never replaced: inside :func:`inputs_kept` (the command line's boundary holds one naming every
file a command reads) :func:`replacing` refuses a target that is one of them, compared as the file itself
(device and inode, so a symbolic link, a hard link or another spelling of the path is the same file), with
an :class:`InputError` naming both; only a write made with ``updates_input=True`` (``reconcile
--in-place``) replaces its input on purpose.

A run that fails leaves the file system as it was: inside :func:`undone_on_failure` (the command line's
boundary holds one around every command) each folder this module creates and each file it creates where
there was none are recorded, and an error removes them again (a file only while it is still the one
written; a folder only while empty). A file that replaced an older one stays replaced; commands that
change several existing files change them in one :func:`one_unit`.

>>> import tempfile
>>> target = Path(tempfile.mkdtemp()) / "book.csv"
>>> write_atomically(target, b"a,b\\n").read_bytes()
b'a,b\\n'
>>> try:
...     with replacing(target) as temporary:
...         _ = temporary.write_bytes(b"half")
...         raise RuntimeError("stopped")
... except RuntimeError:
...     pass
>>> target.read_bytes(), sorted(p.name for p in target.parent.iterdir())
(b'a,b\\n', ['book.csv'])
"""

from __future__ import annotations

import contextvars
import errno
import glob
import json
import os
import secrets
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .errors import InputError, Location

__all__ = ["inputs_kept", "locked", "make_folder", "one_unit", "real_path", "recover", "refuse_input", "replacing",
           "undone_on_failure", "write_atomically"]

_JOURNAL_PREFIX = ".finops-commit."
#: The renames of the :func:`one_unit` being written, if any: (temporary, target) pairs.
_UNIT: contextvars.ContextVar[list[tuple[Path, Path]] | None] = contextvars.ContextVar("finops_unit", default=None)


@dataclass
class _Made:
    """What a run created: folders in the order made, and new files with the (device, inode) written."""

    folders: list[Path] = field(default_factory=list)
    files: list[tuple[Path, tuple[int, int]]] = field(default_factory=list)

    def undo(self) -> None:
        """Remove the new files still the ones written, then the folders made, deepest first, if empty."""
        for path, identity in reversed(self.files):
            try:
                if _identity(path) == identity:
                    path.unlink()
            except OSError:
                pass
        for folder in reversed(self.folders):
            try:
                folder.rmdir()
            except OSError:  # not empty (someone else wrote there) or gone
                pass


#: The files the run being made reads: (device, inode) -> (how the user named it, e.g. ``--plan plan.xlsx``,
#: and whether the run's own writers replace it: its history, its earlier review).
_INPUTS: contextvars.ContextVar[dict[tuple[int, int], tuple[str, bool]] | None] = contextvars.ContextVar(
    "finops_inputs", default=None)


@contextmanager
def inputs_kept(named: dict[Path, str] | list[Path], *, owned: dict[Path, str] | None = None) -> Iterator[None]:
    """No :func:`replacing` in the block replaces any of ``named`` (path -> how the user gave it, e.g.
    ``--plan plan.xlsx``) or ``owned`` (files the run reads that only a write made with ``owned=True``
    replaces: the history it updates); paths that are not files are ignored. A file given both ways is
    ``named``. Blocks nest: the inputs add up.

    >>> import tempfile
    >>> plan = Path(tempfile.mkdtemp()) / "plan.xlsx"
    >>> _ = plan.write_bytes(b"x")
    >>> with inputs_kept({plan: "--plan plan.xlsx"}):
    ...     write_atomically(plan, b"y")
    Traceback (most recent call last):
    ...
    finops.errors.InputError: ...plan.xlsx: this is an input of this run (--plan plan.xlsx); an input is never modified...
    """
    pairs = named.items() if isinstance(named, dict) else ((path, str(path)) for path in named)
    kept = dict(_INPUTS.get() or {})
    for (path, label), is_owned in [*((pair, False) for pair in pairs), *((pair, True) for pair in (owned or {}).items())]:
        try:
            if Path(path).is_file():
                kept.setdefault(_identity_followed(Path(path)), (label, is_owned))
        except OSError:
            continue
    token = _INPUTS.set(kept)
    try:
        yield
    finally:
        _INPUTS.reset(token)


def real_path(path: Path) -> Path:
    """``path`` as the file system resolves it once its missing folders are made: symbolic links followed, and a
    ``..`` after a folder that does not exist yet taken back lexically, as the kernel will once the write has made
    that folder (``new/../plan.xlsx`` is ``plan.xlsx``, though ``os.stat`` cannot see it before ``new`` exists).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> real_path(root / "new" / ".." / "plan.xlsx") == Path(os.path.realpath(root)) / "plan.xlsx"
    True
    """
    return Path(os.path.realpath(path))


def _identity_followed(path: Path) -> tuple[int, int]:
    status = os.stat(real_path(path))
    return status.st_dev, status.st_ino


def refuse_input(target: Path, option: str = "the output", *, owned: bool = False) -> None:
    """An :class:`InputError` when ``target`` (links followed) is a file this run reads (:func:`inputs_kept`),
    unless ``owned`` and it is one of the run's own files."""
    try:
        identity = _identity_followed(Path(target))
    except OSError:
        return  # not there (yet): no input can be it
    label, is_owned = (_INPUTS.get() or {}).get(identity, (None, False))
    if label is not None and not (owned and is_owned):
        raise InputError(f"this is an input of this run ({label}); an input is never modified",
                         where=Location(file=str(target)),
                         hint=f"give {option} another file name; the inputs stay as they are")


#: What the :func:`undone_on_failure` block being run has created, if any.
_MADE: contextvars.ContextVar[_Made | None] = contextvars.ContextVar("finops_made", default=None)


def _identity(path: Path) -> tuple[int, int]:
    status = os.stat(path, follow_symlinks=False)
    return status.st_dev, status.st_ino


@contextmanager
def undone_on_failure() -> Iterator[None]:
    """Remove, when the block raises, every folder and new file it created through this module.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> try:
    ...     with undone_on_failure():
    ...         _ = write_atomically(root / "new" / "deeper" / "a.csv", b"a")
    ...         raise RuntimeError("a later step failed")
    ... except RuntimeError:
    ...     pass
    >>> list(root.iterdir())
    []
    """
    made = _Made()
    token = _MADE.set(made)
    try:
        yield
    except BaseException:
        made.undo()
        raise
    finally:
        _MADE.reset(token)
    outer = _MADE.get()
    if outer is not None:  # a nested run's creations are the enclosing run's too
        outer.folders += made.folders
        outer.files += made.files


def make_folder(folder: Path) -> list[Path]:
    """Make ``folder`` and its missing parents; returns those made (outermost first), recorded so that a
    failing :func:`undone_on_failure` block removes them. An :class:`OSError` is an :class:`InputError`."""
    folder = Path(folder)
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    made = []
    try:
        for each in reversed(missing):
            try:
                each.mkdir()
            except FileExistsError:  # another run made it meanwhile: not ours to remove
                continue
            made.append(each)
    except OSError as error:
        _remove_folders(made)
        raise _cannot_write(missing[0], error) from error
    recording = _MADE.get()
    if recording is not None:
        recording.folders += made
    return made


def _record_new(targets: list[Path]) -> None:
    recording = _MADE.get()
    if recording is not None:
        recording.files += [(target, _identity(target)) for target in targets]


def _temporary_name(target: Path) -> Path:
    """``.<name>.<pid>.<random>.tmp`` beside ``target``: the pid lets :func:`recover` tell a leftover."""
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


#: errno -> what to do when a write fails with it; any other: :data:`_WRITE_HINT`.
_WRITE_HINTS = {errno.ENOSPC: "the disk is full: free space there, or write to another folder, and run again",
                errno.EDQUOT: "the disk quota is used up: free space there, or write to another folder",
                errno.EROFS: "that file system is read-only: write to another folder"}
_WRITE_HINT = "write to a folder that exists or can be created, and that you can write to"
#: What a library that reports a full disk in its own exception type (DuckDB's IOException) says.
_NO_SPACE_TEXT = ("No space left on device", "Disk quota exceeded")


def _cannot_write(target: Path, error: OSError) -> InputError:
    return InputError(f"cannot write {target.name}: {error.strerror or error}; nothing was changed",
                      where=Location(file=str(target)), hint=_WRITE_HINTS.get(error.errno or 0, _WRITE_HINT))


def _as_os_error(error: BaseException) -> OSError | None:
    """``error`` as the OSError it is or reports (a full disk seen by DuckDB or a zip writer), else None."""
    if isinstance(error, OSError):
        return error
    text = str(error)
    for code, words in ((errno.ENOSPC, _NO_SPACE_TEXT[0]), (errno.EDQUOT, _NO_SPACE_TEXT[1])):
        if words in text and isinstance(error, Exception):
            return OSError(code, os.strerror(code))
    return None


def _remove_temporary(temporary: Path) -> None:
    """Remove a temporary file and what a writer kept beside it (a database's ``.wal``)."""
    temporary.unlink(missing_ok=True)
    for beside in temporary.parent.glob(f"{glob.escape(temporary.name)}.*"):
        beside.unlink(missing_ok=True)


def replaceable_target(target: Path) -> Path:
    """The file to replace: a symbolic link's target (the link stays), a path through ``..`` as it resolves
    (:func:`real_path`); a folder is refused, and so is anything else that is not a plain file (a device such as
    ``/dev/null``, a named pipe, a socket), which a rename would replace by a file."""
    target = Path(target)
    if target.is_symlink() or ".." in target.parts:
        target = real_path(target)
    if target.is_dir():
        raise InputError("this is a folder, not a file", where=Location(file=str(target)),
                         hint="give a file name inside the folder")
    if target.exists() and not target.is_file():
        raise InputError("this is not a plain file (a device, a named pipe or a socket); it is never replaced",
                         where=Location(file=str(target)), hint="give the name of a file to write")
    return target


def _flush(path: Path) -> None:
    """Put ``path``'s bytes on disk before a rename makes them the target's."""
    with path.open("rb+") as handle:
        os.fsync(handle.fileno())


@contextmanager
def replacing(target: Path, *, mode_of: Path | None = None, updates_input: bool = False,
              owned: bool = False) -> Iterator[Path]:
    """A temporary path beside ``target`` to write; when the block ends without an error it replaces
    ``target`` (at the end of the :func:`one_unit` it is in, if any), otherwise it is removed. The new
    file takes ``mode_of``'s permissions (a file it replaces), else those a new file gets under the
    umask. An :class:`OSError` (no room, no permission) becomes an :class:`InputError` naming the file.
    Temporary files an earlier, killed write of the same target left are removed first. A target that is
    an input of the run (:func:`inputs_kept`) is refused unless ``updates_input`` (the input itself is
    meant), or ``owned`` and it is one of the run's own files (its history, its earlier review)."""
    if not updates_input:
        refuse_input(Path(target), owned=owned)
    target = replaceable_target(Path(target))
    temporary = _temporary_name(target)
    made = make_folder(target.parent)
    try:
        _remove_leftovers(target.parent, f".{glob.escape(target.name)}")  # an earlier, killed write of it
        temporary.touch(mode=0o600, exist_ok=False)
    except OSError as error:
        _remove_folders(made)
        raise _cannot_write(target, error) from error
    try:
        yield temporary
        if mode_of is not None:
            shutil.copymode(mode_of, temporary)
        else:  # a new file is 0666 less the umask
            umask = os.umask(0)
            os.umask(umask)
            temporary.chmod(0o666 & ~umask)
        _flush(temporary)
        unit = _UNIT.get()
        if unit is None:
            new = not target.exists()
            os.replace(temporary, target)
            _record_new([target] if new else [])
        else:
            unit.append((temporary, target))
    except BaseException as error:
        _remove_temporary(temporary)
        _remove_folders(made)
        os_error = _as_os_error(error)
        if os_error is not None:
            raise _cannot_write(target, os_error) from error
        raise


def _remove_folders(made: list[Path]) -> None:
    """Remove the folders a failed write made (deepest first) while they are empty."""
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:
            pass


def write_atomically(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all; an unwritable place is an :class:`InputError`."""
    with replacing(path) as temporary:
        temporary.write_bytes(data)
    return path


@contextmanager
def one_unit() -> Iterator[None]:
    """Every :func:`replacing` in the block takes effect together at its end, or none does.

    A kill before the journal is written leaves every file as it was (and temporary files that
    :func:`recover` removes); a kill after it leaves a journal that :func:`recover` completes.
    """
    renames: list[tuple[Path, Path]] = []
    token = _UNIT.set(renames)
    try:
        yield
    except BaseException:
        for temporary, _ in renames:
            _remove_temporary(temporary)
        raise
    finally:
        _UNIT.reset(token)
    if not renames:
        return
    folder = renames[0][1].parent
    journal = folder / f"{_JOURNAL_PREFIX}{os.getpid()}.{secrets.token_hex(4)}.json"
    pairs = [[str(temporary), str(target)] for temporary, target in renames]
    new = [target for _, target in renames if not target.exists()]
    with _ctrl_c_deferred():  # the journal and its renames are not cut in half by Ctrl-C
        try:
            write_atomically(journal, json.dumps(pairs).encode("utf-8"))
        except BaseException:  # no journal (a full disk): no rename is done, and no temporary stays
            for temporary, _ in renames:
                _remove_temporary(temporary)
            raise
        _apply(journal)
        _record_new(new)


@contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
    """Hold SIGINT until the block ends (POSIX main thread; elsewhere the block runs as it is): Ctrl-C
    during a unit's commit arrives after it, as an error of a run whose files are whole."""
    try:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (AttributeError, ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _apply(journal: Path) -> None:
    """Do the renames a journal names (those not done yet), then remove it."""
    for temporary, target in json.loads(journal.read_text(encoding="utf-8")):
        if Path(temporary).exists():
            os.replace(temporary, target)
    journal.unlink()


def _writer_gone(path: Path) -> bool:
    """Whether the process named in a temporary or journal name (``.<...>.<pid>.<random>.<ext>``) has ended."""
    try:
        pid = int(path.name.split(".")[-3])
    except (IndexError, ValueError):
        return False  # not one of ours
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


def recover(folder: Path) -> list[Path]:
    """Finish the units a kill interrupted in ``folder`` and remove temporary files left by writers that
    are gone; returns the paths removed or completed. Run it where no other writer can start (under
    :func:`locked`) before reading the folder's state.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / ".review.xlsx.999999999.ab12cd34.tmp").write_bytes(b"half")
    >>> [p.name for p in recover(folder)], sorted(p.name for p in folder.iterdir())
    (['.review.xlsx.999999999.ab12cd34.tmp'], [])
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    done = []
    for journal in sorted(folder.glob(f"{_JOURNAL_PREFIX}*.json")):
        if _writer_gone(journal):
            _apply(journal)
            done.append(journal)
    return done + _remove_leftovers(folder, ".*") + _remove_stale_locks(folder)


def _remove_stale_locks(folder: Path) -> list[Path]:
    """Remove the lock files (:func:`locked`) a killed holder left: one whose lock can be taken at once has
    no holder (the operating system released a dead one's); it is removed while locked, as a holder does.
    A lock held by anyone, this process's other handles included, is left alone."""
    removed = []
    for path in sorted(folder.glob(".*.lock")):
        try:
            handle = path.open("a+b")
        except OSError:
            continue
        with handle:
            if _try_lock(handle) and _still_at(handle, path):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _remove_leftovers(folder: Path, name: str) -> list[Path]:
    """Remove the temporary files of targets matching ``name`` whose writers are gone (with the ``.wal`` a
    database's temporary may have beside it); none while a journal still needs them."""
    if any(folder.glob(f"{_JOURNAL_PREFIX}*.json")):
        return []
    removed = []
    for leftover in sorted(folder.glob(f"{name}.*.tmp*")):
        stem = leftover.with_name(leftover.name.split(".tmp")[0] + ".tmp")
        if leftover.is_file() and _writer_gone(stem):
            leftover.unlink(missing_ok=True)
            removed.append(leftover)
    return removed


@contextmanager
def locked(path: Path, *, wait_s: float, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` for the block; the file is there only while held.

    Another holder is waited for up to ``wait_s`` seconds; ``on_wait`` receives one message when the
    wait starts. The holder removes the file while it still holds the lock, so a clean run leaves nothing
    behind; a waiter that then gets the lock finds its open file no longer at ``path`` (another inode, or
    none) and starts again on a new one, so two holders never overlap. A kill leaves the file, unlocked
    (the operating system releases a dead holder's lock), for the next run to take and remove. Past the
    wait an :class:`InputError` says so.
    """
    path = Path(path)
    deadline = time.monotonic() + wait_s
    told = False
    while True:
        handle = _open_lock(path)
        taken = _try_lock(handle)
        if taken and _still_at(handle, path):
            break
        handle.close()
        if taken:  # the holder removed the file as it let go: open the new one at once
            continue
        if time.monotonic() >= deadline:
            raise InputError(f"another run still holds {path.name} after {wait_s:g} s",
                             where=Location(file=str(path)),
                             hint="wait for the other `finops reconcile` of this folder to finish, then "
                                  "run again; the history itself is fine")
        if not told and on_wait is not None:
            on_wait(f"waiting up to {wait_s:g} s for another run that holds {path}")
            told = True
        time.sleep(0.1)
    try:
        yield
    finally:
        try:
            path.unlink()  # while still locked: a waiter re-checks and opens a new file
        except OSError:  # Windows keeps an open file; it is reused there
            pass
        handle.close()  # closing releases the lock


def _open_lock(path: Path) -> BinaryIO:
    """The lock file at ``path``, opened (made, with its folder, where missing) but not yet locked."""
    try:
        make_folder(path.parent)
        return path.open("a+b")
    except OSError as error:
        raise _cannot_write(path, error) from error


def _still_at(handle: object, path: Path) -> bool:
    """Whether the locked open file is still the one at ``path`` (its holder did not remove it meanwhile)."""
    try:
        at_path = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(handle.fileno())  # type: ignore[attr-defined]
    return (held.st_dev, held.st_ino) == (at_path.st_dev, at_path.st_ino)


def _try_lock(handle: object) -> bool:
    """Take an exclusive lock on an open file without waiting; whether it was taken."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[attr-defined]
    except BlockingIOError:
        return False
    return True
