"""The sheets of the budget-review workbook, one module each (written by :mod:`templates.review_writer`)."""
