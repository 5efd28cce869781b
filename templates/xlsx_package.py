"""Edit an ``.xlsx`` as its package: add sheets and table rows, and leave every other part as it is.

An ``.xlsx`` is a zip of XML parts (ECMA-376 Part 2, Open Packaging Conventions). Loading it into
openpyxl and saving it again rewrites every part: the cached values of its 983 formulas go (openpyxl
writes formulas without them and asks Excel to recalculate everything on load, which turns every
add-in cell into ``#NAME?`` where the add-in is missing), and so do the dynamic-array metadata, and
whatever openpyxl does not model. :class:`XlsxPackage` instead copies every part byte for byte and
changes only:

* ``xl/workbook.xml``, its relationships and ``[Content_Types].xml``, to list an added sheet;
* ``xl/sharedStrings.xml``, to which the strings of new cells are appended;
* the sheets it writes (:meth:`XlsxPackage.put_table_sheet`: title, note, one table) and the rows
  it appends below a table (:meth:`XlsxPackage.append_table_rows`: new ``<row>`` elements with the
  styles of the table's last row), with the table parts whose ``ref`` grows.

Charts, drawings, data validation, conditional formats, defined names, styles and the formulas with
their cached values are those of the input.
"""

from __future__ import annotations

import numbers
import posixpath
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple
from xml.sax.saxutils import escape, quoteattr

from finops.errors import InputError, Location

__all__ = ["FormulaCell", "XlsxPackage"]

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_WORKSHEET_TYPE = f"{_REL}/worksheet"
_TABLE_TYPE = f"{_REL}/table"
_STRINGS_TYPE = f"{_REL}/sharedStrings"
_CONTENT = {"worksheet": "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml",
            "table": "application/vnd.openxmlformats-officedocument.spreadsheetml.table+xml",
            "sharedStrings": "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"}
_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_ROW = re.compile(r'<row r="(\d+)"[^>]*?(?:/>|>.*?</row>)', re.DOTALL)



class FormulaCell(NamedTuple):
    """A formula with its cached value. ``text`` (with its ``=``) may name the row being written as ``{row}`` and
    a column of the table being appended to as ``{Column}`` (its cell on that row, e.g. ``$B12``)."""

    text: str
    value: float | int | None


Cell = str | int | float | FormulaCell | None
#: Excel's built-in number formats by code (ECMA-376 Part 1, 18.8.30): no ``numFmt`` entry needed.
_BUILTIN_FORMATS = {"0": 1, "0.00": 2, "#,##0": 3, "#,##0.00": 4, "0%": 9, "0.00%": 10}


def _sheet_ref(name: str) -> str:
    """A sheet name as a defined name's formula needs it: always quoted, quotes doubled, XML-escaped."""
    return escape("'" + name.replace("'", "''") + "'")


def sheet_named(sheets: Mapping[str, str], name: str) -> tuple[str, str] | None:
    """The sheet of ``sheets`` (name -> part) that Excel takes for ``name``: sheet names ignore case there, so a
    workbook holding ``actuals`` and ``Actuals`` is one Excel repairs (dropping one). (its name, its part) or None.

    >>> sheet_named({"Budget": "xl/worksheets/sheet1.xml", "fleet": "xl/worksheets/sheet2.xml"}, "Fleet")
    ('fleet', 'xl/worksheets/sheet2.xml')
    """
    return next(((found, part) for found, part in sheets.items() if found.casefold() == name.casefold()), None)


def column_letter(index: int) -> str:
    """1 -> ``A``, 27 -> ``AA``.

    >>> column_letter(1), column_letter(8), column_letter(27)
    ('A', 'H', 'AA')
    """
    letters = ""
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _rels_path(part: str) -> str:
    folder, name = posixpath.split(part)
    return posixpath.join(folder, "_rels", name + ".rels")


class XlsxPackage:
    """The parts of one ``.xlsx``, edited in memory (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        with zipfile.ZipFile(self.path) as package:
            self.parts = {info.filename: package.read(info) for info in package.infolist()}
        self._strings: list[str] | None = None

    # ---- reading ------------------------------------------------------------------------------------
    def _text(self, part: str) -> str:
        return self.parts[part].decode("utf-8")

    def _relationships(self, part: str) -> list[tuple[str, str, str]]:
        """``(id, type, absolute target)`` of ``part``'s relationships."""
        rels = _rels_path(part)
        if rels not in self.parts:
            return []
        folder = posixpath.dirname(part)
        out = []
        for attrs in re.findall(r"<Relationship\b([^>]*)/?>", self._text(rels)):
            get = dict(re.findall(r'(\w+)="([^"]*)"', attrs))
            target = get["Target"]
            target = target[1:] if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            out.append((get["Id"], get["Type"], target))
        return out

    def sheets(self) -> dict[str, str]:
        """Sheet name -> its part."""
        targets = {rid: target for rid, _, target in self._relationships("xl/workbook.xml")}
        return {name: targets[rid] for name, rid in
                re.findall(r'<sheet\b[^>]*?name="([^"]*)"[^>]*?r:id="([^"]*)"', self._text("xl/workbook.xml"))}

    def _table_part(self, sheet_part: str, table: str | None = None) -> str | None:
        for _, kind, target in self._relationships(sheet_part):
            if kind == _TABLE_TYPE and (table is None or f'name="{table}"' in self._text(target)):
                return target
        return None

    # ---- writing ------------------------------------------------------------------------------------
    def _add_relationship(self, part: str, kind: str, target_part: str) -> str:
        rels = _rels_path(part)
        text = self._text(rels) if rels in self.parts else f'{_HEAD}<Relationships xmlns="{_PKG_REL}"></Relationships>'
        taken = set(re.findall(r'Id="([^"]*)"', text))
        rid = next(f"rId{i}" for i in range(1, len(taken) + 2) if f"rId{i}" not in taken)
        target = posixpath.relpath(target_part, posixpath.dirname(part))
        text = text.replace("</Relationships>", f'<Relationship Id="{rid}" Type="{kind}" Target="{target}"/></Relationships>')
        self.parts[rels] = text.encode()
        return rid

    def _declare(self, part: str, kind: str) -> None:
        types = self._text("[Content_Types].xml")
        if f'PartName="/{part}"' not in types:
            types = types.replace("</Types>", f'<Override PartName="/{part}" ContentType="{_CONTENT[kind]}"/></Types>')
            self.parts["[Content_Types].xml"] = types.encode()

    def _free(self, pattern: str) -> str:
        return next(pattern.format(i) for i in range(1, len(self.parts) + 2) if pattern.format(i) not in self.parts)

    def _string(self, text: str) -> int:
        """Index of ``text`` in the shared strings (appended when new)."""
        if self._strings is None:
            if "xl/sharedStrings.xml" not in self.parts:
                self.parts["xl/sharedStrings.xml"] = f'{_HEAD}<sst xmlns="{_MAIN}" count="0" uniqueCount="0"></sst>'.encode()
                self._add_relationship("xl/workbook.xml", _STRINGS_TYPE, "xl/sharedStrings.xml")
                self._declare("xl/sharedStrings.xml", "sharedStrings")
            items = re.findall(r"<si>(.*?)</si>", self._text("xl/sharedStrings.xml"), re.DOTALL)
            self._strings = ["".join(re.findall(r"<t[^>]*>(.*?)</t>", i, re.DOTALL)) for i in items]
            self._new_strings: list[str] = []
        key = escape(text)
        if key in self._strings:
            return self._strings.index(key)
        self._strings.append(key)
        self._new_strings.append(key)
        return len(self._strings) - 1

    def _cell(self, ref: str, value: Cell, style: str | None = None) -> str:
        s = "" if style is None else f' s="{style}"'
        if isinstance(value, FormulaCell):
            cached = "" if value.value is None else f"<v>{float(value.value)!r}</v>"
            return f'<c r="{ref}"{s}><f>{escape(value.text.removeprefix("="))}</f>{cached}</c>'
        if value is None:
            return f'<c r="{ref}"{s}/>' if style is not None else ""
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return f'<c r="{ref}"{s} t="s"><v>{self._string(str(value))}</v></c>'
        number = int(value) if isinstance(value, numbers.Integral) else float(value)
        return f'<c r="{ref}"{s}><v>{number!r}</v></c>'

    def _row(self, number: int, values: Sequence[Cell], styles: Sequence[str | None] = (), first: int = 1) -> str:
        cells = "".join(self._cell(f"{column_letter(first + i)}{number}", v, styles[i] if i < len(styles) else None)
                        for i, v in enumerate(values))
        return f'<row r="{number}">{cells}</row>'

    def defines(self, name: str) -> bool:
        """Whether the workbook defines the name ``name`` (a named input such as ``HoursPerMonth``)."""
        return re.search(rf'<definedName\b[^>]*?\bname="{re.escape(name)}"', self._text("xl/workbook.xml")) is not None

    def append_table_rows(self, sheet: str, table: str, rows: Sequence[Mapping[str, Cell]],
                          drop_tail: Sequence[int] = ()) -> None:
        """Append ``rows`` (column name -> value) below the table's last row, each cell styled as that
        row's, growing the table's ``ref``.

        ``drop_tail`` are sheet row numbers at the table's end to drop first (rows an earlier run wrote).
        """
        part = self.sheets().get(sheet)
        table_part = None if part is None else self._table_part(part, table)
        if table_part is None:
            raise InputError(f"no table {table} on sheet {sheet}", where=Location(file=str(self.path), sheet=sheet))
        table_xml = self._text(table_part)
        ref = re.search(r'<table\b[^>]*?\bref="([A-Z]+)(\d+):([A-Z]+)(\d+)"', table_xml)
        assert ref is not None
        first_col, top, last_col, end = ref.group(1), int(ref.group(2)), ref.group(3), int(ref.group(4))
        names = [n.replace("&amp;", "&") for n in re.findall(r'<tableColumn\b[^>]*?\bname="([^"]*)"', table_xml)]
        first = next(i for i in range(1, 16385) if column_letter(i) == first_col)
        if drop_tail and sorted(drop_tail) != list(range(end - len(drop_tail) + 1, end + 1)):
            raise InputError(f"{table} has rows of the next month in the middle of the table (rows "
                             f"{', '.join(map(str, sorted(drop_tail)))})", where=Location(file=str(self.path), sheet=sheet),
                             hint="delete them, or move them to the end of the table")
        end -= len(drop_tail)
        xml = self._text(part)
        found = {int(m.group(1)): m for m in _ROW.finditer(xml)}
        last = found.get(end)
        styles = dict(re.findall(r'<c r="([A-Z]+)\d+"(?: s="(\d+)")?', last.group(0))) if last is not None and end > top else {}
        column_styles = [styles.get(column_letter(first + i)) or None for i in range(len(names))]
        new_end = end + len(rows)
        for number in range(end + 1, new_end + 1):
            if number in found and number not in drop_tail and "<v>" in found[number].group(0):
                raise InputError(f"{table} cannot grow: row {number} below it is not empty",
                                 where=Location(file=str(self.path), sheet=sheet, row=number),
                                 hint=f"move what is below the table {table} further down")
        keep = [m.group(0) for n, m in sorted(found.items()) if not end < n <= max(new_end, end + len(drop_tail))]
        body = [m for m in keep if int(re.match(r'<row r="(\d+)"', m).group(1)) <= end]   # type: ignore[union-attr]
        after = keep[len(body):]
        def placed(value: Cell, number: int) -> Cell:
            if not isinstance(value, FormulaCell):
                return value
            cells = {n: f"${column_letter(first + i)}{number}" for i, n in enumerate(names)}
            return value._replace(text=value.text.format(row=number, **cells))

        added = [self._row(end + 1 + i, [placed(row.get(n), end + 1 + i) for n in names], column_styles, first)
                 for i, row in enumerate(rows)]
        start, stop = xml.index("<sheetData>") + len("<sheetData>"), xml.index("</sheetData>")
        xml = xml[:start] + "".join(body + added + after) + xml[stop:]
        xml = re.sub(r'(<dimension ref="[A-Z]+\d+:[A-Z]+)(\d+)"',
                     lambda m: f'{m.group(1)}{max(int(m.group(2)), new_end)}"', xml, count=1)
        self.parts[part] = xml.encode()
        grown = f'{first_col}{top}:{last_col}{max(new_end, top + 1)}'
        table_xml = re.sub(r'(<table\b[^>]*?\bref=")[^"]*"', rf'\g<1>{grown}"', table_xml, count=1)
        table_xml = re.sub(r'(<autoFilter\b[^>]*?\bref=")[^"]*"', rf'\g<1>{grown}"', table_xml, count=1)
        self.parts[table_part] = table_xml.encode()

    def _cell_style(self, number_format: str) -> str:
        """Index of a cell format (``cellXfs``) showing ``number_format``, added to the styles when new."""
        styles = self._text("xl/styles.xml")
        known = {code: int(i) for i, code in re.findall(r'<numFmt\b[^>]*?numFmtId="(\d+)"[^>]*?formatCode="([^"]*)"',
                                                         styles)}
        code = escape(number_format, {'"': "&quot;"})
        fmt_id = _BUILTIN_FORMATS.get(number_format, known.get(code))
        if fmt_id is None:
            fmt_id = max([163, *known.values()]) + 1
            if "<numFmts" in styles:
                styles = re.sub(r"</numFmts>", f'<numFmt numFmtId="{fmt_id}" formatCode="{code}"/></numFmts>', styles, 1)
            else:
                styles = re.sub(r"(<styleSheet\b[^>]*>)",
                                rf'\g<1><numFmts count="1"><numFmt numFmtId="{fmt_id}" formatCode="{code}"/></numFmts>',
                                styles, 1)
        block = re.search(r"<cellXfs\b[^>]*>(.*?)</cellXfs>", styles, re.DOTALL)
        assert block is not None
        xfs = re.findall(r"<xf\b[^>]*?(?:/>|>.*?</xf>)", block.group(1), re.DOTALL)
        wanted = f'<xf numFmtId="{fmt_id}" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
        if wanted in xfs:
            index = xfs.index(wanted)
        else:
            index = len(xfs)
            styles = styles.replace(block.group(0), re.sub(r'count="\d+"', f'count="{index + 1}"',
                                                           block.group(0).replace("</cellXfs>", wanted + "</cellXfs>"), 1))
        self.parts["xl/styles.xml"] = styles.encode()
        return str(index)

    def _row_styles(self, sheet: str | None) -> list[str | None]:
        """The style index of cell A1, A2 and A3 of ``sheet`` (title, note, table header), where it has them."""
        part = None if sheet is None else self.sheets().get(sheet)
        if part is None:
            return [None, None, None]
        xml = self._text(part)
        found = [re.search(rf'<c r="A{n}"(?: s="(\d+)")?', xml) for n in (1, 2, 3)]
        return [None if m is None else m.group(1) for m in found]

    def _print_titles(self, name: str, row: int) -> None:
        """Row ``row`` of sheet ``name`` repeated at the top of every printed page (``_xlnm.Print_Titles``)."""
        workbook = self._text("xl/workbook.xml")
        index = [n for n in re.findall(r'<sheet\b[^>]*?name="([^"]*)"', workbook)].index(escape(name))
        entry = (f'<definedName name="_xlnm.Print_Titles" localSheetId="{index}">'
                 f"{_sheet_ref(name)}!${row}:${row}</definedName>")
        workbook = re.sub(rf'<definedName name="_xlnm.Print_Titles" localSheetId="{index}">[^<]*</definedName>', "",
                          workbook)
        if "<definedNames>" in workbook:
            workbook = workbook.replace("<definedNames>", "<definedNames>" + entry, 1)
        elif "<definedNames/>" in workbook:
            workbook = workbook.replace("<definedNames/>", f"<definedNames>{entry}</definedNames>", 1)
        else:
            workbook = workbook.replace("</sheets>", f"</sheets><definedNames>{entry}</definedNames>", 1)
        self.parts["xl/workbook.xml"] = workbook.encode()

    def put_table_sheet(self, name: str, table: str, headers: Sequence[str], rows: Sequence[Sequence[Cell]],
                        note: str, *, formats: Sequence[str | None] = (), widths: Sequence[float] = (),
                        like: str | None = None) -> None:
        """Write the sheet ``name`` (replacing one of that name): its name in A1, ``note`` in A2, the table
        ``table`` with its header in row 3, frozen below it.

        ``formats`` are the columns' number formats (Excel codes, ``None``: General), ``widths`` their widths
        (characters); the title, note and header take the styles of sheet ``like``'s A1, A2 and A3. It
        prints landscape A4 at :func:`templates.sheets._table.print_scale` (one page wide where that keeps
        the text at 8 pt or more), its header on every page."""
        found = sheet_named(self.sheets(), name)
        if found is not None and found[0] != name:
            raise InputError(f"the plan has a sheet {found[0]!r}, which Excel takes for the sheet {name} written here",
                             where=Location(file=str(self.path), sheet=found[0]),
                             hint=f"rename that sheet, so that the plan's sheet names stay apart from {name}")
        part = None if found is None else found[1]
        if part is None:
            part = self._free("xl/worksheets/sheet{}.xml")
            rid = self._add_relationship("xl/workbook.xml", _WORKSHEET_TYPE, part)
            workbook = self._text("xl/workbook.xml")
            ids = [int(i) for i in re.findall(r'<sheet\b[^>]*?sheetId="(\d+)"', workbook)]
            workbook = workbook.replace("</sheets>", f'<sheet name={quoteattr(name)} sheetId="{max(ids, default=0) + 1}" '
                                                     f'r:id="{rid}"/></sheets>')
            self.parts["xl/workbook.xml"] = workbook.encode()
            self._declare(part, "worksheet")
        table_part = self._table_part(part) if part in self.parts else None
        if table_part is None:
            table_part = self._free("xl/tables/table{}.xml")
            self.parts.pop(_rels_path(part), None)
            self._add_relationship(part, _TABLE_TYPE, table_part)
            self._declare(table_part, "table")
        table_rid = next(rid for rid, kind, target in self._relationships(part) if target == table_part)
        last = f"{column_letter(len(headers))}{3 + max(1, len(rows))}"
        title, subtitle, header = self._row_styles(like)
        column_styles = [None if not f else self._cell_style(f) for f in formats]
        data = [self._row(1, [name], [title]), self._row(2, [note], [subtitle]),
                self._row(3, list(headers), [header] * len(headers))]
        data += [self._row(4 + i, list(row), column_styles) for i, row in enumerate(rows)]
        widths = list(widths) or [max(10.0, min(40.0, len(str(h)) + 2)) for h in headers]
        cols = "".join(f'<col min="{i}" max="{i}" width="{w}" customWidth="1"/>' for i, w in enumerate(widths, start=1))
        from .sheets._table import print_scale

        setup = (f'<pageSetup paperSize="9" scale="{print_scale(widths, margins=0.8)}" orientation="landscape" '
                 'pageOrder="overThenDown"/>')
        self.parts[part] = (
            f'{_HEAD}<worksheet xmlns="{_MAIN}" xmlns:r="{_REL}">'
            f'<dimension ref="A1:{last}"/>'
            '<sheetViews><sheetView workbookViewId="0"><pane ySplit="3" topLeftCell="A4" activePane="bottomLeft" '
            'state="frozen"/><selection pane="bottomLeft"/></sheetView></sheetViews><sheetFormatPr defaultRowHeight="15"/>'
            f'<cols>{cols}</cols><sheetData>{"".join(data)}</sheetData>'
            '<pageMargins left="0.4" right="0.4" top="0.5" bottom="0.6" header="0.3" footer="0.3"/>'
            f'{setup}<headerFooter><oddFooter>&amp;L&amp;A&amp;RPage &amp;P of &amp;N</oddFooter></headerFooter>'
            f'<tableParts count="1"><tablePart r:id="{table_rid}"/></tableParts></worksheet>').encode()
        self._print_titles(name, 3)
        others = {p: body for p, body in self.parts.items() if p.startswith("xl/tables/") and p != table_part}
        taken = [n.decode() for body in others.values() for n in re.findall(rb'<table\b[^>]*?\bname="([^"]*)"', body)
                 if n.decode().casefold() == table.casefold()]
        if taken:  # table names are the workbook's, ignoring case: a second one is repaired away
            raise InputError(f"the plan has a table {taken[0]!r} on another sheet; the table {table} of sheet {name} "
                             "takes that name", where=Location(file=str(self.path)),
                             hint=f"rename that table (Table Design > Table Name), so that {table} stays free")
        ids = [int(i) for body in others.values() for i in re.findall(rb'<table\b[^>]*?\bid="(\d+)"', body)]
        columns = "".join(f'<tableColumn id="{i}" name={quoteattr(h)}/>' for i, h in enumerate(headers, start=1))
        self.parts[table_part] = (
            f'{_HEAD}<table xmlns="{_MAIN}" id="{max(ids, default=0) + 1}" name="{table}" displayName="{table}" '
            f'ref="A3:{last}" totalsRowShown="0"><autoFilter ref="A3:{last}"/>'
            f'<tableColumns count="{len(headers)}">{columns}</tableColumns>'
            '<tableStyleInfo name="TableStyleLight9" showFirstColumn="0" showLastColumn="0" showRowStripes="1" '
            'showColumnStripes="0"/></table>').encode()

    def to_bytes(self) -> bytes:
        """The package as ``.xlsx`` bytes (the shared strings with what was appended)."""
        import io

        if self._strings is not None and self._new_strings:
            text = self._text("xl/sharedStrings.xml")
            added = "".join(f'<si><t xml:space="preserve">{s}</t></si>' for s in self._new_strings)
            text = text.replace("</sst>", added + "</sst>") if "</sst>" in text else text.replace("/>", f">{added}</sst>", 1)
            text = re.sub(r'uniqueCount="\d+"', f'uniqueCount="{len(self._strings)}"', text, count=1)
            count = re.search(r'\bcount="(\d+)"', text)
            if count is not None:
                text = re.sub(r'\bcount="\d+"', f'count="{int(count.group(1)) + len(self._new_strings)}"', text, count=1)
            self.parts["xl/sharedStrings.xml"] = text.encode()
            self._new_strings = []
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
            for name, body in self.parts.items():
                out.writestr(name, body)
        return buffer.getvalue()
