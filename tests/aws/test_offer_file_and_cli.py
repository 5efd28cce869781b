"""Bulk offer files (JSON, CSV, gzip) price exactly like the API, and the CLI commands over them."""

from __future__ import annotations

import gzip
import json

import pytest

from connectors import aws
from connectors.aws.pricing import price_rows
from finops.cli import main
from finops.errors import InputError
from finops.price_book import COLUMNS, PriceBook


def _key(row):
    return (row.region, row.pricing_model, row.payment_option, row.hourly_cost, row.upfront_cost, row.gpu_model)


@pytest.fixture
def api_rows(data):
    pages = json.loads((data / "get_products_p5.json").read_text())["pages"]
    return sorted(_key(r) for page in pages for item in page["PriceList"]
                  for r in price_rows(json.loads(item), gpu_of=aws.catalog_gpu, as_of="2025-11-01", source="api"))


@pytest.mark.parametrize("name, compress", [("offer-AmazonEC2-excerpt.json", False),
                                            ("offer-AmazonEC2-excerpt.csv", False),
                                            ("offer-AmazonEC2-excerpt.csv", True)])
def test_offer_file_prices_like_the_api(data, tmp_path, api_rows, name, compress):
    path = data / name
    if compress:
        path = tmp_path / (name + ".gz")
        path.write_bytes(gzip.compress((data / name).read_bytes()))
    book = aws.read_offer_file(path)
    assert sorted(_key(r) for r in book) == api_rows  # Windows and m7i.large variants are not priced
    assert {r.effective_date for r in book} == {"2025-11-01"}
    assert all("published 2025-11-01" in r.source for r in book)


def _excerpt_without_column(data, column):
    lines = (data / "offer-AmazonEC2-excerpt.csv").read_text().splitlines()
    header = lines[5].split(",")
    index = header.index(f'"{column}"')
    return "\n".join(lines[:5] + [",".join(c for i, c in enumerate(line.split(",")) if i != index)
                                  for line in lines[5:]]).encode()


@pytest.mark.parametrize("name, content, message, where", [
    ("index.json", b'{"hello": 1}', "not an AWS offer file", None),
    ("index.json", b'{"products": {\n  "SKU1": {,\n', "not valid JSON", "index.json, row 2, column 12"),
    ("index.csv", b'"SKU","Unit"\n"A","Hrs"\n', "metadata lines", "index.csv"),
    ("index.csv", "no-SKU", "header lacks SKU", "index.csv, row 6"),
    ("index.csv", "no-PricePerUnit", "header lacks PricePerUnit", "index.csv, row 6"),
    ("index.csv", "bad-price", "PricePerUnit 'about 55' is not a number", "index.csv, row 8, column PricePerUnit"),
    ("index.csv.gz", b"\x1f\x8b\x08\x00truncated", "damaged or not text", "index.csv.gz"),
    ("index.csv", b"\xff\xfe\x00\x81 latin junk", "damaged or not text", "index.csv"),
])
def test_a_file_that_is_not_a_sound_offer_file_is_an_input_error_naming_it(data, tmp_path, capsys, name, content,
                                                                           message, where):
    if content == "bad-price":
        content = (data / "offer-AmazonEC2-excerpt.csv").read_bytes().replace(b'"38.5280000000"', b'"about 55"', 1)
    elif isinstance(content, str):
        content = _excerpt_without_column(data, content.removeprefix("no-"))
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as caught:
        aws.read_offer_file(path)
    assert where is None or str(caught.value.where) == where
    assert caught.value.hint
    out = tmp_path / "book.parquet"
    assert main(["prices", "pull", "--provider", "aws", "--offer-file", str(path), "--out", str(out)]) == 2
    assert message in capsys.readouterr().err and not out.exists()


def test_cli_prices_pull_from_offer_file_writes_parquet_and_prices_sheet_csv(data, tmp_path, capsys):
    out = tmp_path / "aws-book.parquet"
    code = main(["prices", "pull", "--provider", "aws", "--offer-file", str(data / "offer-AmazonEC2-excerpt.csv"),
                 "--instance-types", "p5.48xlarge", "--regions", "us-east-1", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    parquet, csv_book = PriceBook.read(out), PriceBook.read(tmp_path / "aws-book.csv")
    assert len(parquet) == len(csv_book) == 7  # the us-west-2 on-demand row is left out
    assert [(r.pricing_model, r.payment_option, r.upfront_cost) for r in parquet] == \
        [(r.pricing_model, r.payment_option, r.upfront_cost) for r in csv_book]
    assert (tmp_path / "aws-book.csv").read_text().splitlines()[0] == ",".join(COLUMNS)


def test_cli_bills_pull_rejects_a_bad_month_with_exit_2(tmp_path, capsys):
    code = main(["bills", "pull", "--provider", "aws", "--source", str(tmp_path), "--month", "May-2026",
                 "--out", str(tmp_path / "x.parquet")])
    assert code == 2
    assert "month must be 'YYYY-MM'" in capsys.readouterr().err
    assert not (tmp_path / "x.parquet").exists()


def test_cli_bills_pull_from_a_local_export(data, tmp_path, capsys):
    root = tmp_path / "exports"
    (root / "gpu-focus/data/BILLING_PERIOD=2026-05").mkdir(parents=True)
    (root / "gpu-focus/metadata/BILLING_PERIOD=2026-05").mkdir(parents=True)
    (root / "gpu-focus/data/BILLING_PERIOD=2026-05/gpu-focus-00001.csv.gz").write_bytes(
        gzip.compress((data / "focus-1.2-aws-sample-40.csv").read_bytes()))
    (root / "gpu-focus/metadata/BILLING_PERIOD=2026-05/gpu-focus-Manifest.json").write_text(json.dumps(
        {"dataFiles": ["s3://b/p/gpu-focus/data/BILLING_PERIOD=2026-05/gpu-focus-00001.csv.gz"]}))
    out = tmp_path / "focus.parquet"
    code = main(["bills", "pull", "--provider", "aws", "--source", str(root), "--month", "2026-05", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert "wrote 40 FOCUS rows" in capsys.readouterr().out


def test_cli_prices_show_piped_puts_each_row_whole_on_one_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("FINOPS_PRICE_BOOK", raising=False)
    assert main(["prices", "show", "--provider", "aws", "--instance-type", "p5.48xlarge", "--region",
                 "us-east-1"]) == 0
    out = capsys.readouterr().out
    rows = PriceBook.bundled().filter(provider="aws", instance_type="p5.48xlarge", region="us-east-1")
    assert f"{len(rows)} prices aws USD" in out and "…" not in out
    lines = [line.split() for line in out.splitlines() if "p5.48xlarge" in line]
    assert sorted((line[4], line[-4], line[-3], line[-2], line[-1]) for line in lines) == sorted(
        (r.pricing_model, f"{r.hourly_cost:.4f}", f"{r.per_gpu_hour:.4f}", f"{r.upfront_cost:.2f}", r.effective_date)
        for r in rows)


@pytest.mark.parametrize("args, text", [
    (["--instance-type", "p5.48xlargex"], "did you mean: p5.48xlarge"),
    (["--provider", "azure"], "known: aws, gcp"),
    (["--region", "us-east-9"], "did you mean: us-east-2, us-east-1"),
    (["--pricing-model", "reserved"], "unknown pricing model 'reserved'"),
])
def test_cli_prices_show_refuses_a_filter_value_no_row_has(capsys, monkeypatch, args, text):
    monkeypatch.delenv("FINOPS_PRICE_BOOK", raising=False)
    assert main(["prices", "show", *args]) == 2
    captured = capsys.readouterr()
    assert text in captured.err and captured.out == ""


@pytest.mark.parametrize("name, content, text", [
    ("book.txt", b"provider\n", "is neither .parquet nor .csv"),
    ("book.parquet", b"not parquet", "is not a readable Parquet file"),
    ("book.csv", b"\x80\x81 not utf-8", "is not a UTF-8 CSV"),
    ("book.csv.gz", b"\x1f\x8b\x08\x00 cut short", "is not a UTF-8 CSV"),
])
def test_a_configured_price_book_that_does_not_read_is_an_input_error(tmp_path, capsys, monkeypatch, name, content,
                                                                      text):
    (tmp_path / name).write_bytes(content)
    monkeypatch.setenv("FINOPS_PRICE_BOOK", str(tmp_path / name))
    assert main(["prices", "show", "--provider", "aws"]) == 2
    err = capsys.readouterr().err
    assert text in err and "FINOPS_PRICE_BOOK" in err


@pytest.mark.parametrize("out, text", [("prices.txt", "is neither .parquet, .csv nor .csv.gz"),
                                       ("blocker/prices.parquet", "cannot write")])
def test_cli_prices_pull_refuses_an_out_it_cannot_write(data, tmp_path, capsys, out, text):
    (tmp_path / "blocker").write_text("a file where a folder should be")
    assert main(["prices", "pull", "--provider", "aws", "--offer-file", str(data / "offer-AmazonEC2-excerpt.csv"),
                 "--out", str(tmp_path / out)]) == 2
    assert text in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]


def test_cli_bills_pull_refuses_an_out_it_cannot_write(data, tmp_path, capsys):
    (tmp_path / "blocker").write_text("a file where a folder should be")
    assert main(["bills", "pull", "--provider", "aws", "--source", "ce", "--month", "2026-05",
                 "--out", str(tmp_path / "blocker" / "may.parquet")]) == 2
    assert "cannot write" in capsys.readouterr().err
