"""The hostile desk suite: each ``test_*.py`` here is a table of cases run by ``desk.check``."""
