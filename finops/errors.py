"""One small error tree for the whole product.

Every failure a user can meet is a :class:`FinopsError`. Faces translate it: the CLI prints
``message`` and ``hint`` and exits with ``exit_code``; the UDFs put a short ``#FINOPS: ...`` text in
the cell. Foreign errors (botocore, google-api-core, openpyxl, duckdb) are translated at the seam
that calls the foreign library, keeping the original as ``__cause__``.

::

    FinopsError                      exit 2, terminal
    ├── InputError                   bad user input: file / row / column / cell in ``where``
    │   ├── UnknownNameError         a model, GPU, preset, provider... not in a registry
    │   └── CurrencyMismatchError    money in two currencies without a rate table
    ├── DependencyError              an optional extra is missing; hint is the pip line
    └── ProviderError                a cloud API or a bill store failed
        └── TransientProviderError   retryable (throttling, 5xx) after the client's own retries

Messages never contain secrets: pass identifiers, never credentials, into them. As a second guard, the
text of every error has the secrets of the URLs in it redacted (:func:`redacted`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CurrencyMismatchError",
    "DependencyError",
    "FinopsError",
    "InputError",
    "Location",
    "ProviderError",
    "TransientProviderError",
    "UnknownNameError",
    "redacted",
    "require",
]

#: ``scheme://user:password@`` (or ``scheme://token@``): everything between ``//`` and ``@`` is a credential; a URL
#: that went through a file path (``Path("https://...")`` keeps one slash: ``https:/bob:pw@host``) is one too.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*:/+)[^/?#@\s]+@")
#: A query or fragment parameter whose name says it carries a secret (``access_token``, ``api_key``,
#: ``X-Amz-Signature``, ``sig``, ``X-Goog-Credential``, ``password``...).
_SECRET_PARAMETER = re.compile(
    r"(?P<lead>[?&#;](?:[\w.-]*(?:token|key|secret|passw|pwd|signature|credential|auth)[\w.-]*|sig|code|pass))="
    r"[^&#;\s'\"<>]*", re.IGNORECASE)


def redacted(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``: the user information before an
    ``@`` and the value of each query or fragment parameter named as a secret.

    >>> redacted("cannot reach https://bob:hunter2@prom.example:9090/api?access_token=abc&step=60")
    'cannot reach https://***@prom.example:9090/api?access_token=***&step=60'
    >>> redacted("s3://bucket/key?X-Amz-Signature=f00&X-Amz-Credential=AKIA%2F1&x=1#sig=zz")
    's3://bucket/key?X-Amz-Signature=***&X-Amz-Credential=***&x=1#sig=***'
    >>> redacted("price book https:/bob:hunter2@example.com/book.csv does not exist")
    'price book https:/***@example.com/book.csv does not exist'
    """
    return _SECRET_PARAMETER.sub(r"\g<lead>=***", _USERINFO.sub(r"\g<scheme>***@", text))



@dataclass(frozen=True)
class Location:
    """Where bad input was found. Every field is optional; ``str()`` joins those that are set.

    >>> str(Location(file="plan.xlsx", sheet="Budget", row=7, column="Amount"))
    'plan.xlsx, sheet Budget, row 7, column Amount'
    """

    file: str | None = None
    sheet: str | None = None
    row: int | None = None
    column: str | None = None
    cell: str | None = None

    def __str__(self) -> str:
        parts = []
        if self.file:
            parts.append(str(self.file))
        if self.sheet:
            parts.append(f"sheet {self.sheet}")
        if self.cell:
            parts.append(f"cell {self.cell}")
        if self.row is not None:
            parts.append(f"row {self.row}")
        if self.column:
            parts.append(f"column {self.column}")
        return ", ".join(parts)


class FinopsError(Exception):
    """Root of every error the product raises on purpose.

    >>> err = FinopsError("price book is empty", hint="run `finops prices pull`")
    >>> str(err)
    'price book is empty. Hint: run `finops prices pull`'
    """

    exit_code: int = 2
    retryable: bool = False

    def __init__(self, message: str, *, hint: str | None = None, where: Location | None = None) -> None:
        self.message = message
        self.hint = hint
        self.where = where
        super().__init__(self.__str__())

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where and str(self.where) else self.message
        if self.hint:
            text += f"{'' if text.endswith(('?', '.', '!')) else '.'} Hint: {self.hint}"
        return redacted(text)

    def short(self) -> str:
        """One line for an Excel cell: no location, no hint."""
        return f"#FINOPS: {redacted(self.message)}"


class InputError(FinopsError):
    """The user's input is wrong; ``where`` says where, ``hint`` what to do."""


class UnknownNameError(InputError):
    """A name is not in a registry. ``suggestions`` holds the closest known names.

    >>> UnknownNameError("GPU", "h10", ["h100-sxm", "h100-pcie"]).message
    "unknown GPU 'h10'; did you mean: h100-sxm, h100-pcie?"
    """

    def __init__(self, kind: str, name: str, suggestions: list[str], *, known: list[str] | None = None,
                 where: Location | None = None) -> None:
        self.kind = kind
        self.name = name
        self.suggestions = list(suggestions)
        if suggestions:
            message = f"unknown {kind} {name!r}; did you mean: {', '.join(suggestions)}?"
            hint = None
        else:
            message = f"unknown {kind} {name!r}"
            hint = f"known: {', '.join(known)}" if known else None
        super().__init__(message, hint=hint, where=where)


class CurrencyMismatchError(InputError):
    """Two money values in different currencies met without an explicit rate."""


class DependencyError(FinopsError):
    """An optional dependency is missing. The hint is the exact install command."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"this needs the optional package {package!r}",
            hint=f"pip install 'llm-finops[{extra}]'",
        )


class ProviderError(FinopsError):
    """A cloud API or a remote bill store failed after its client's own retries."""


class TransientProviderError(ProviderError):
    """Throttling or a server error that outlived the client's retries; trying later may work."""

    retryable = True


def require(condition: bool, message: str, *, hint: str | None = None, where: Location | None = None) -> None:
    """Raise :class:`InputError` unless ``condition`` holds.

    >>> require(1 > 0, "must be positive")
    """
    if not condition:
        raise InputError(message, hint=hint, where=where)
