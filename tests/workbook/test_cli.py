"""``finops template build``: writes the workbook; bad output paths give one message and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from finops.cli import main


def test_build_writes_the_template(tmp_path: Path, built: Path, capsys):
    out = tmp_path / "deep" / "plan.xlsx"
    assert main(["template", "build", "--out", str(out)]) == 0
    assert out.read_bytes() == built.read_bytes()
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize(
    "name, says", [("plan.csv", "written as .xlsx"), ("blocker/plan.xlsx", "cannot write")]
)
def test_bad_output_gives_one_message_and_exit_code_2(tmp_path: Path, capsys, name, says):
    (tmp_path / "blocker").write_text("a file where a folder should be")
    assert main(["template", "build", "--out", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]  # nothing half-written
