"""Cell formats of the planning workbook: inputs look different from computed cells.

Inputs (what a planner types) are blue text on pale yellow, as financial-modelling conventions have
it; computed cells (native formulas and add-in functions) are black on white; headers are bold on
dark blue. Number formats: money with a thousands separator and two decimals (with the $ sign where the
currency is known to be USD: cloud prices), percentages, ISO dates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xlsxwriter.format import Format
from xlsxwriter.workbook import Workbook

__all__ = ["Kind", "Styles"]

#: What a cell holds, which decides its number format.
Kind = Literal["text", "int", "number", "rate", "money", "usd", "usd_rate", "percent", "date", "month"]

_NUMBER_FORMATS: dict[str, str] = {
    "text": "@",
    "int": "#,##0",
    "number": "#,##0.00",
    "usd": "$#,##0.00",
    "usd_rate": "$#,##0.0000",
    "rate": "#,##0.0000",
    "money": "#,##0.00",
    "percent": "0.0%",
    "date": "yyyy-mm-dd",
    "month": "@",
}
_INPUT = {"font_color": "#1F4E9A", "bg_color": "#FFF7D6", "border": 1, "border_color": "#D9D9D9"}
_COMPUTED = {"font_color": "#000000", "border": 1, "border_color": "#D9D9D9"}


@dataclass
class Styles:
    """Formats registered once on a workbook, looked up by role and kind."""

    workbook: Workbook

    def __post_init__(self) -> None:
        wb = self.workbook
        self.title = wb.add_format({"bold": True, "font_size": 16, "font_color": "#1F3864"})
        self.subtitle = wb.add_format({"italic": True, "font_color": "#595959"})
        self.header = wb.add_format(
            {
                "bold": True,
                "font_color": "#FFFFFF",
                "bg_color": "#1F3864",
                "border": 1,
                "text_wrap": True,
                "valign": "top",
            }
        )
        self.note = wb.add_format({"font_color": "#595959", "text_wrap": True, "valign": "top"})
        self.wrapped_note = wb.add_format({"italic": True, "font_color": "#595959", "text_wrap": True, "valign": "top"})
        self.label = wb.add_format({"bold": True})
        self.ok = wb.add_format({"font_color": "#006100", "bg_color": "#C6EFCE"})
        self.bad = wb.add_format({"font_color": "#9C0006", "bg_color": "#FFC7CE"})
        self._cache: dict[tuple[str, str], Format] = {}

    def input(self, kind: Kind = "text") -> Format:
        """Format of a cell the planner fills in."""
        return self._format("input", kind)

    def computed(self, kind: Kind = "number") -> Format:
        """Format of a cell holding a formula."""
        return self._format("computed", kind)

    def _format(self, role: str, kind: Kind) -> Format:
        key = (role, kind)
        if key not in self._cache:
            props = dict(_INPUT if role == "input" else _COMPUTED)
            # A formula cell never gets the Text format: Excel stores a formula entered (or re-entered, as
            # the Lite route does once) into a Text cell as a literal string.
            text_formula = role == "computed" and kind == "text"
            props["num_format"] = "General" if text_formula else _NUMBER_FORMATS[kind]
            self._cache[key] = self.workbook.add_format(props)
        return self._cache[key]
