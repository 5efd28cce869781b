"""What a spreadsheet cell shows of a figure: ``-`` where the figure does not apply, ``yes``/``no`` for a truth.

A spreadsheet stores each formula's last result with the file. LibreOffice shows a stored number or text
as it opens the file, but recomputes every formula whose stored result is an empty string or TRUE/FALSE;
where the add-in is missing, that recomputation is an error. So the tables and figures the add-in returns
(and the workbook stores) never hold an empty string or a boolean: a figure the core leaves out (no
reason why not for a configuration that meets its targets, no error band, no committed units for
on-demand) is :data:`NOT_APPLICABLE`, and a truth is the text ``yes`` or ``no``.

>>> shown(None), shown(""), shown(True), shown(False), shown(0.0), shown("h100-sxm")
('-', '-', 'yes', 'no', 0.0, 'h100-sxm')
"""

from __future__ import annotations

from typing import Any

__all__ = ["NOT_APPLICABLE", "shown"]

#: What a cell shows for a figure that does not apply.
NOT_APPLICABLE = "-"


def shown(value: Any) -> Any:
    """``value`` as a cell shows it: ``None`` and ``""`` as :data:`NOT_APPLICABLE`, a boolean as ``yes``/``no``."""
    if value is None or (isinstance(value, str) and value == ""):
        return NOT_APPLICABLE
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value
