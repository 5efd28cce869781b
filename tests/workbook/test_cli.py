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


def test_a_pulled_price_book_prices_the_workbook(tmp_path: Path, capsys):
    """``--prices``: the Prices sheet holds exactly the pulled rows, and the cloud prices come from them."""
    import openpyxl

    from finops.price_book import PriceBook

    book = PriceBook.bundled().filter(provider="gcp", region="us-central1")
    pulled = book.write_csv(tmp_path / "pulled.csv")
    out = tmp_path / "plan.xlsx"
    assert main(["template", "build", "--out", str(out), "--prices", str(pulled)]) == 0
    wb = openpyxl.load_workbook(out, data_only=True)
    ((_, ref),) = wb.defined_names["PriceTable"].destinations
    rows = list(wb["Prices"][ref.replace("$", "")])
    assert len(rows) - 1 == len(book)  # header + one sheet row per price-book row
    providers = {row[0].value for row in rows[1:]}
    assert providers == {"gcp"}
    tco = wb["TCO"].tables["tblTco"]
    first_row = int(tco.ref.split(":")[0].lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")) + 1
    headers = [c.value for c in wb["TCO"][first_row - 1]]
    provider, instance, model = (headers.index(h) for h in ("Provider", "InstanceType", "PricingModel"))
    hourly = headers.index("InstanceHourly")
    cells = [c.value for c in wb["TCO"][first_row]]
    expected = book.lookup("gcp", cells[instance], cells[model], "us-central1")
    assert cells[provider] == "gcp" and cells[hourly] == pytest.approx(float(expected.hourly_cost))


def test_a_missing_price_book_gives_one_message_and_exit_code_2(tmp_path: Path, capsys):
    out = tmp_path / "plan.xlsx"
    assert main(["template", "build", "--out", str(out), "--prices", str(tmp_path / "none.csv")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "finops prices pull" in err and "Traceback" not in err
    assert not out.exists()


def test_a_plan_already_at_out_is_never_written_over(tmp_path: Path, capsys):
    """A plan filled in by hand keeps the template's name: building again into it is refused (exit 2, the
    file named, the file unchanged) unless ``--replace`` says to rebuild it."""
    plan = tmp_path / "llm-finops-plan.xlsx"
    plan.write_bytes(b"a filled-in plan")
    assert main(["template", "build", "--out", str(plan)]) == 2
    err = capsys.readouterr().err
    assert "llm-finops-plan.xlsx" in err and "--replace" in err and "Traceback" not in err
    assert plan.read_bytes() == b"a filled-in plan"
    assert main(["template", "build", "--out", str(plan), "--replace"]) == 0
    assert plan.read_bytes().startswith(b"PK")
