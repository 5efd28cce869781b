"""One module per sheet (or group of sheets) of the planning workbook; ``_table`` writes Excel tables."""
