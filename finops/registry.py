"""Registries: look things up by name, forgive case and punctuation, suggest on a typo.

Models, accelerators, presets, engines and providers all resolve through a :class:`Registry`, so
``H100_SXM``, ``h100 sxm`` and ``h100-sxm`` are the same key and ``h10`` fails with
"did you mean: h100-sxm, h100-pcie?".

>>> r = Registry("GPU", {"h100-sxm": 1, "h100-pcie": 2}, aliases={"h100": "h100-sxm"})
>>> r["H100_SXM"], r["h100"]
(1, 1)
>>> r["h10"]
Traceback (most recent call last):
...
finops.errors.UnknownNameError: unknown GPU 'h10'; did you mean: h100-sxm, h100-pcie?
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

from .errors import UnknownNameError

__all__ = ["Registry", "normalize_key"]

T = TypeVar("T")


def normalize_key(name: str) -> str:
    """Canonical form of a name: lower case, runs of space/underscore/slash become ``-``.

    >>> normalize_key(" Meta-Llama/Llama_3.1 8B ")
    'meta-llama-llama-3.1-8b'
    """
    return re.sub(r"[\s_/]+", "-", str(name).strip().lower())


class Registry(Mapping[str, T], Generic[T]):
    """A read-only mapping from canonical ids to items, with aliases and suggestions."""

    def __init__(self, kind: str, items: Mapping[str, T], aliases: Mapping[str, str] | None = None) -> None:
        self.kind = kind
        self._items = {normalize_key(k): v for k, v in items.items()}
        self._aliases: dict[str, str] = {}
        for alias, target in (aliases or {}).items():
            key = normalize_key(target)
            if key not in self._items:
                raise KeyError(f"alias {alias!r} points to unknown {kind} {target!r}")
            self._aliases[normalize_key(alias)] = key

    def canonical(self, name: str) -> str:
        """The canonical id for ``name`` or :class:`UnknownNameError` with the closest matches."""
        key = normalize_key(name)
        if key in self._items:
            return key
        if key in self._aliases:
            return self._aliases[key]
        candidates = list(self._items) + list(self._aliases)
        close = difflib.get_close_matches(key, candidates, n=8, cutoff=0.5)
        if not close:
            close = [c for c in candidates if key and (key in c or c in key)]
        suggestions = list(dict.fromkeys(self._aliases.get(c, c) for c in close))[:3]  # canonical ids, once each
        raise UnknownNameError(self.kind, str(name), suggestions, known=sorted(self._items))

    def __getitem__(self, name: str) -> T:
        return self._items[self.canonical(name)]

    def __contains__(self, name: object) -> bool:
        key = normalize_key(str(name))
        return key in self._items or key in self._aliases

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
