"""``read_table``: rows numbered as a spreadsheet shows them, cells stripped, and each broken file named."""

import pytest

from finops.errors import InputError, Location
from finops.mix._csv import read_table


def table(tmp_path, data: bytes, required=("name",)):
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    return path, read_table(path, "options", required)


def test_rows_are_numbered_from_the_header_and_blank_rows_skipped(tmp_path):
    _, rows = table(tmp_path, b" name , kind \r\n a , b \r\n\r\n , \r\nc,d\r\n")
    assert rows == [(2, {"name": "a", "kind": "b"}), (5, {"name": "c", "kind": "d"})]


def test_short_rows_read_missing_cells_as_empty_and_long_rows_drop_the_extra(tmp_path):
    _, rows = table(tmp_path, b"name,kind,cost\nod\nri,reserved,4,extra,more\n")
    assert rows == [(2, {"name": "od", "kind": "", "cost": ""}), (3, {"name": "ri", "kind": "reserved", "cost": "4"})]


def test_a_byte_order_mark_is_not_part_of_the_first_column(tmp_path):
    _, rows = table(tmp_path, "\ufeffname,kind\nod,on_demand\n".encode("utf-8"))
    assert rows == [(2, {"name": "od", "kind": "on_demand"})]


def test_quoted_cells_keep_their_commas_and_line_breaks(tmp_path):
    """A row is a record, as a spreadsheet shows it: a line break inside quotes does not start a new one."""
    _, rows = table(tmp_path, b'name,note\n"a,b","two\nlines"\nc,d\n')
    assert rows == [(2, {"name": "a,b", "note": "two\nlines"}), (3, {"name": "c", "note": "d"})]


@pytest.mark.parametrize("data, row, message, hint", [
    (b"kind\nx\n", 1, "missing column 'name'", "the options CSV needs columns name, kind"),
    (b"", 1, "missing column 'name'", "the options CSV needs columns name, kind"),
    (b"name,kind\n\n \n", None, "options file has no rows", None),
    (b"name,kind\nod,x\nri,\xff\n", 3, "the options file is not UTF-8 text (byte 0xff)",
     "save the CSV with UTF-8 encoding"),
    (b'name,kind\nod,x\nri,"open\n', 3, "malformed CSV: unexpected end of data",
     "close every double quote; a field holds at most 131,072 characters"),
    (b'name,kind\nod,"a"b\n', 2, "malformed CSV: ',' expected after '\"'",
     "close every double quote; a field holds at most 131,072 characters"),
])
def test_broken_files_name_the_file_and_row(tmp_path, data, row, message, hint):
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    with pytest.raises(InputError) as caught:
        read_table(path, "options", ("name", "kind"))
    assert caught.value.message == message and caught.value.hint == hint
    column = "name" if message.startswith("missing") else None
    assert caught.value.where == Location(file=str(path), row=row, column=column)


def test_a_missing_file_is_named(tmp_path):
    path = tmp_path / "nowhere.csv"
    with pytest.raises(InputError) as caught:
        read_table(path, "demand", ("hour",))
    assert caught.value.message == "cannot read demand file: No such file or directory"
    assert caught.value.where == Location(file=str(path))


def test_old_mac_line_endings_and_windows_breaks_inside_quotes(tmp_path):
    """Excel for Mac's classic CSV ends rows with a bare carriage return; a quoted cell keeps its \\r\\n."""
    _, rows = table(tmp_path, b'name,note\r"a","two\r\nlines"\rc,d\r')
    assert rows == [(2, {"name": "a", "note": "two\r\nlines"}), (3, {"name": "c", "note": "d"})]
