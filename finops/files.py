"""Files written whole or not at all: a temporary file beside the target, renamed over it.

``os.replace`` is atomic on one file system, so a reader (Excel, a scheduler, the next run) sees the
old file or the whole new one, never a part; on any error the temporary file is removed and the
target is left as it was.

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

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError, Location

__all__ = ["replacing", "write_atomically"]


@contextmanager
def replacing(target: Path, *, mode_of: Path | None = None) -> Iterator[Path]:
    """A temporary path beside ``target`` to write; when the block ends without an error it replaces
    ``target``, otherwise it is removed. The new file takes ``mode_of``'s permissions (a file it
    replaces), else those a new file gets under the umask."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        if mode_of is not None:
            shutil.copymode(mode_of, temporary)
        else:  # mkstemp makes it private (0600); a new file is 0666 less the umask
            umask = os.umask(0)
            os.umask(umask)
            temporary.chmod(0o666 & ~umask)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_atomically(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all; an unwritable place is an :class:`InputError`."""
    try:
        with replacing(path) as temporary:
            temporary.write_bytes(data)
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror or error}", where=Location(file=str(path)),
                         hint="write to a folder you can write to") from error
    return path
