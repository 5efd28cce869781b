"""The workbook face: the planning template built from the core (XlsxWriter)."""

from .builder import build_template

__all__ = ["build_template"]
