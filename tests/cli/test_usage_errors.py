"""Usage errors from the parser are one message and exit code 2 for every command, never a traceback."""

import pytest

from finops.cli import main


@pytest.mark.parametrize("argv", [
    ["reconcile"], ["reconcile", "--bogus"], ["tco", "--pue", "abc"], ["no-such-command"],
    ["estimate", "--model", "llama-3.1-8b"], ["mix"], ["prices", "show", "--json", "--extra"],
])
def test_usage_errors_exit_2_without_traceback(argv, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert captured.err.strip()


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0
    assert "reconcile" in capsys.readouterr().out
