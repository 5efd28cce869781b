"""Assign each charge to a plan line inside the bill query: the Mapping sheet's rules as one SQL CASE.

A rule (:class:`~finops.reconcile.plan.MappingRule`) matches a charge when every non-blank field
matches: provider, sub-account (id or name), service, instance type, region, and a tag (``TagKey``
with ``TagValue``; a key alone means "has this tag"). Fields are ``*``/``?``/``[...]`` globs
(:mod:`fnmatch`), compared case-insensitively. Rules are tried in ``Rule`` order and the first that
matches wins; a charge no rule matches goes to :data:`UNMAPPED`, never dropped.

:func:`plan_line_sql` compiles the rules into ``CASE WHEN <rule> THEN '<plan line>' ... END`` (NULL
when no rule matches) over the FOCUS columns, in DuckDB's dialect, so the engine holding the bills
(DuckDB, BigQuery or Athena through sqlglot) maps every charge during its one scan. A glob becomes,
by the table :data:`_GLOB_FORMS`, the cheapest SQL that means the same: ``=`` for plain text,
``LIKE`` when it only has ``*`` and ``?`` and no ``%``, ``_`` or ``\\`` of its own, else an anchored
regular expression. A tag rule is a regular expression over the ``Tags`` JSON object text: a member
whose key matches ``TagKey`` and whose value (text, or a bare number or boolean) matches ``TagValue``.

>>> from finops.reconcile.plan import MappingRule
>>> print(plan_line_sql([MappingRule(2, "Data", service_name="Big*"), MappingRule(1, "GPU", instance_type="p5.*")],
...                     instance_type="x_InstanceType"))
CASE WHEN LOWER(x_InstanceType) LIKE 'p5.%' THEN 'GPU' WHEN LOWER(ServiceName) LIKE 'big%' THEN 'Data' END
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fnmatch import fnmatchcase

from .plan import MappingRule

__all__ = ["UNMAPPED", "compared_columns", "glob_sql", "plan_line_sql", "tag_sql"]

#: The plan line of charges that match no rule.
UNMAPPED = "Unmapped"

#: Characters with a meaning in a glob, and in a LIKE pattern (``\\`` is an escape in some engines' LIKE).
_GLOB_WILDCARDS = "*?["
_LIKE_WILDCARDS = "%_\\"
#: SQL of a rule: the words joining its conditions, the condition of a rule with no field, and the plan line
#: when there are no rules (kept here: SQL words ignore case, so a change of their case changes nothing).
_AND, _OR, _ALWAYS, _NO_PLAN_LINE = " AND ", " OR ", "TRUE", "CAST(NULL AS VARCHAR)"
#: Characters with a meaning in a regular expression (RE2, as in DuckDB and BigQuery, and Java's, as in Athena).
_REGEX_SPECIAL = set("\\.^$|?*+()[]{}")
#: One character of a JSON string as it is written in the text: anything but a quote or backslash, or an escape.
_JSON_CHAR = r'(?:[^"\\]|\\.)'
#: The characters of a bare JSON number (the text is lowercased), and one of them as a regular expression.
_NUMBER_CHARS = "0123456789e.+-"
_NUMBER_CHAR = r"[-+.0-9e]"
#: A regular expression that matches no character: a glob's character that no number holds.
_NO_CHAR = r"[^\s\S]"
#: The bare JSON words -> the text a tag value's glob is matched against (``null`` reads as no text).
_JSON_WORDS = {"true": "true", "false": "false", "null": ""}


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _escape(char: str) -> str:
    return "\\" + char if char in _REGEX_SPECIAL else char


#: Characters of a glob's ``[...]`` set that a regular expression's set would read otherwise: ``\\``, ``[``, a
#: ``^`` that fnmatch takes as itself, a ``]`` first in the set, and ``&`` (Java's ``&&`` intersects sets).
_CLASS_ESCAPES = {char: "\\" + char for char in "\\[]^&"}


def _class_end(glob: str, start: int) -> int:
    """Where the ``[...]`` set opened just before ``start`` closes, as :mod:`fnmatch` reads it (a ``!`` first
    negates, a ``]`` first, after the ``!`` if any, is a member), or -1 when it does not close (``[`` is then
    itself).

    >>> _class_end("[!]a]", 1), _class_end("[]]", 1), _class_end("[!]", 1)
    (4, 2, -1)
    """
    start += glob.startswith("!", start)
    start += glob.startswith("]", start)
    return glob.find("]", start)


def _set(body: str, negate: bool) -> str:
    """A glob's ``[...]`` set (``body``, ``[!...]`` when ``negate``) as a regular expression's set. A range
    whose ends are reversed (``z-a``) is empty, as :mod:`fnmatch` reads it (a regular expression refuses it):
    it is left out, and a set left with nothing matches no character (any character when negated).

    >>> _set("^a-c", True), _set("z-ab", False), _set("z-a", False), _set("z-a", True)
    ('[^\\\\^a-c]', '[b]', '[^\\\\s\\\\S]', '[\\\\s\\\\S]')
    """
    parts, i = [], 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            if body[i] <= body[i + 2]:
                parts.append(_CLASS_ESCAPES.get(body[i], body[i]) + "-" + _CLASS_ESCAPES.get(body[i + 2], body[i + 2]))
            i += 3
        else:
            parts.append("\\-" if body[i] == "-" else _CLASS_ESCAPES.get(body[i], body[i]))
            i += 1
    if not parts:
        return r"[\s\S]" if negate else _NO_CHAR
    return "[" + "^" * negate + "".join(parts) + "]"


def _number_set(body: str, negate: bool) -> str:
    """The characters of a JSON number that a glob's set matches, spelled out, so that a set never reaches a
    letter of ``null`` (:data:`_NO_CHAR` when it matches none).

    >>> _number_set("0-8", True), _number_set("a-d", False)
    ('[9e\\\\.\\\\+-]', '[^\\\\s\\\\S]')
    """
    members = [c for c in _NUMBER_CHARS if fnmatchcase(c, "[" + "!" * negate + body + "]")]
    # "-" comes last in _NUMBER_CHARS, so it is itself in the set, not a range
    return "[" + "".join(map(_escape, members)) + "]" if members else _NO_CHAR


def _number_literal(char: str) -> str:
    """A literal character of a glob in a bare JSON number: itself when a number can hold it, else none."""
    return _escape(char) if char in _NUMBER_CHARS else _NO_CHAR


def _regex(glob: str, *, any_char: str = ".", literal: Callable[[str], str] = _escape,
           members: Callable[[str, bool], str] = _set) -> str:
    """The regular expression of ``glob`` (lowercased), unanchored: fnmatch's ``*``, ``?``, ``[seq]``, ``[!seq]``.

    >>> _regex("a[!0-9]?.*")
    'a[^0-9].\\\\..*'
    """
    glob, out, i = glob.lower(), [], 0
    while i < len(glob):
        char = glob[i]
        i += 1
        if char == "*":
            out.append(any_char + "*")
        elif char == "?":
            out.append(any_char)
        elif char == "[" and (end := _class_end(glob, i)) != -1:
            negate = glob[i] == "!"
            out.append(members(glob[i + negate:end], negate))
            i = end + 1
        else:
            out.append(literal(char))
    return "".join(out)


def _is_plain(glob: str) -> bool:
    return not any(c in glob for c in _GLOB_WILDCARDS)


def _is_like(glob: str) -> bool:
    return "[" not in glob and not any(c in glob for c in _LIKE_WILDCARDS)


#: Glob form -> SQL comparing a column's lowercased value (SQL) with it; the first form a glob has is used.
_GLOB_FORMS: tuple[tuple[Callable[[str], bool], Callable[[str, str], str]], ...] = (
    (_is_plain, lambda lowered, glob: f"{lowered} = {_quote(glob.lower())}"),
    (_is_like, lambda lowered, glob: f"{lowered} LIKE {_quote(glob.lower().replace('*', '%').replace('?', '_'))}"),
    (lambda glob: True, lambda lowered, glob: f"REGEXP_MATCHES({lowered}, {_quote('(?s)^' + _regex(glob) + '$')})"),
)


def glob_sql(column: str, glob: str, *, lowered: str | None = None) -> str:
    """SQL that is true when ``column`` matches ``glob`` case-insensitively (NULL, so not true, for NULL);
    ``lowered`` is SQL already holding ``LOWER(column)``, when there is one.

    >>> glob_sql("RegionId", "us-east-1"), glob_sql("RegionId", "us-*"), glob_sql("SkuId", "a_b*")
    ("LOWER(RegionId) = 'us-east-1'", "LOWER(RegionId) LIKE 'us-%'", "REGEXP_MATCHES(LOWER(SkuId), '(?s)^a_b.*$')")
    """
    return next(sql(lowered or f"LOWER({column})", glob) for form, sql in _GLOB_FORMS if form(glob))


def _json_literal(char: str) -> str:
    """A literal character of a tag key or value as the JSON text writes it, as a regular expression."""
    return {"\\": r"\\\\", '"': r'\\"'}.get(char) or _escape(char)


def tag_sql(column: str, key: str | None, value: str | None) -> str:
    """SQL that is true when the JSON object text in ``column`` has a member whose key matches the glob
    ``key`` and whose value matches the glob ``value`` (``None``: any), case-insensitively. A JSON
    ``null`` value reads as the empty text, as a bare number or boolean reads as its text.

    >>> tag_sql("Tags", "env", None)
    'REGEXP_MATCHES(LOWER(Tags), \\'(?s)[{,]\\\\s*"env"\\\\s*:\\')'
    """
    key_regex = _JSON_CHAR + "*" if key is None else _regex(key, any_char=_JSON_CHAR, literal=_json_literal)
    member = r"[{,]\s*" + '"' + key_regex + '"' + r"\s*:"
    if value is not None:
        forms = ['"' + _regex(value, any_char=_JSON_CHAR, literal=_json_literal) + '"',
                 _regex(value, any_char=_NUMBER_CHAR, literal=_number_literal, members=_number_set)]
        forms += [word for word, text in _JSON_WORDS.items() if fnmatchcase(text, value.lower())]
        member += r"\s*(?:" + "|".join(forms) + r")\s*[,}]"
    return f"REGEXP_MATCHES(LOWER({column}), {_quote('(?s)' + member)})"


#: The FOCUS column of a charge's tags (column names ignore case).
_TAGS = "Tags"
#: Field of a rule -> the columns it compares (a sub-account matches its id or its name); ``None`` stands for
#: the SQL of the charge's instance type. In the order the conditions are written.
_FIELDS: tuple[tuple[str, tuple[str | None, ...]], ...] = (
    ("provider_name", ("ProviderName",)), ("service_name", ("ServiceName",)), ("instance_type", (None,)),
    ("region_id", ("RegionId",)), ("sub_account", ("SubAccountId", "SubAccountName")))


def compared_columns(rules: Sequence[MappingRule], *, instance_type: str) -> list[str]:
    """The columns (``instance_type``: the SQL of the instance type) the rules compare with a glob, as first used.

    >>> compared_columns([MappingRule(1, "GPU", provider_name="AWS", sub_account="prod")], instance_type="it")
    ['ProviderName', 'SubAccountId', 'SubAccountName']
    """
    return list(dict.fromkeys(column or instance_type for rule in sorted(rules, key=lambda r: r.rule)
                              for field, columns in _FIELDS if getattr(rule, field) is not None for column in columns))


def _rule_sql(rule: MappingRule, instance_type: str, lowered: Mapping[str, str]) -> str:
    """The condition of one rule over the FOCUS columns (``TRUE`` for a rule with no field)."""
    parts = []
    for field, columns in _FIELDS:
        glob = getattr(rule, field)
        if glob is not None:
            matches = [glob_sql(column, glob, lowered=lowered.get(column)) for column in
                       (c or instance_type for c in columns)]
            parts.append(matches[0] if len(matches) == 1 else "(" + _OR.join(matches) + ")")
    if rule.tag_key is not None or rule.tag_value is not None:
        parts.append(tag_sql(_TAGS, rule.tag_key, rule.tag_value))
    return _AND.join(parts) or _ALWAYS


def plan_line_sql(rules: Sequence[MappingRule], *, instance_type: str, lowered: Mapping[str, str] | None = None) -> str:
    """``CASE`` over ``rules`` in ``Rule`` order giving the plan line of a charge, NULL when none matches.

    ``instance_type`` is the SQL of a charge's instance type. ``lowered`` names, for columns of
    :func:`compared_columns`, SQL already holding their lowercased value (the scan lowers each once per
    charge; a CASE would lower it again for each rule it tries). With no rules it is ``NULL``.

    >>> plan_line_sql([MappingRule(1, "AWS", provider_name="AWS")], instance_type="it", lowered={"ProviderName": "p"})
    "CASE WHEN p = 'aws' THEN 'AWS' END"
    """
    ordered = sorted(rules, key=lambda r: r.rule)
    if not ordered:
        return _NO_PLAN_LINE
    cases = " ".join(f"WHEN {_rule_sql(r, instance_type, lowered or {})} THEN {_quote(r.plan_line)}" for r in ordered)
    return f"CASE {cases} END"
