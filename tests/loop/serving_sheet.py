"""Reading the review's Serving sheet the way a person does: each table starts at a header row whose
first cell is ``PlanLine`` (the stable column names) and runs to the first empty row."""

from __future__ import annotations

from pathlib import Path

import openpyxl


def serving_tables(review: Path) -> list[list[dict[str, object]]]:
    """The Serving sheet's tables, top to bottom, each as its rows keyed by column name."""
    cells = list(openpyxl.load_workbook(review, read_only=True, data_only=True)["Serving"].iter_rows(values_only=True))
    tables, current, header = [], None, None
    for row in cells:
        if row and row[0] == "PlanLine":
            header, current = row, []
            tables.append(current)
        elif current is not None and row and row[0] is not None:
            current.append({k: v for k, v in zip(header, row) if k is not None})
        else:
            current = None
    return tables


def serving_lines(review: Path) -> dict[str, dict[str, object]]:
    """Each production line's columns from every table that is not the load tests' (no ``File``)."""
    lines: dict[str, dict[str, object]] = {}
    for table in serving_tables(review):
        for row in table:
            if "File" not in row:
                lines.setdefault(str(row["PlanLine"]), {}).update(row)
    return lines
