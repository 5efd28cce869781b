"""The FOCUS aggregation for engines that already hold the bills: BigQuery and Athena.

There is one SQL source, :mod:`finops.reconcile.aggregation` (DuckDB's dialect): the scan that maps
charges to plan lines with the plan's rules and groups them, and the summary over its groups, here
as one statement (``WITH charge_groups AS (scan) summary``). :func:`remote_sql` transpiles it with
sqlglot (a declarative dialect table, no per-engine branches), points it at the engine's table and
replaces the columns that table lacks by NULL. The engine runs it and only the summary (the groups
of plan line and review dimensions, the largest unmapped groups and one row for the rest: a few
hundred rows) comes back; :func:`reconcile_remote` turns it into a reconciliation exactly as for
local files.

A runner is any callable ``sql -> rows`` (rows as tuples in the query's column order); the cloud
clients that run queries live in the connectors.

>>> [line.strip() for line in remote_sql("athena", "focus.bills_2026", "2026-05").splitlines() if "FROM focus" in line]
['FROM focus.bills_2026']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal, get_args

from ..errors import InputError, Location
from ..focus import SUCCESSORS
from ..registry import Registry
from .aggregation import Summary, charge_groups_sql, summary_sql
from .bill_checks import (
    CHECKS,
    EXAMPLES,
    JSON_ARRAY_AT,
    JSON_ARRAY_AT_CALL,
    NOT_JSON_OBJECT,
    NOT_JSON_OBJECT_CALL,
    checks_sql,
    refused_charge,
)
from .commitment_schedule import EarlierCommitment
from .contract_applied import (
    APPLIED_COLUMN,
    AppliedSums,
    contract_applied_sql,
    read_applied,
    unknown_commitment,
    unknown_error,
)
from .contract_commitments import ContractTerm
from .engine import InstanceGpus, reconcile_groups
from .plan import MappingRule, Plan
from .result import Reconciliation
from .tokens import unit_error, unit_problem

__all__ = [
    "ENGINES",
    "Engine",
    "QueryRunner",
    "canonical_engine",
    "reconcile_remote",
    "remote_checks_sql",
    "remote_contract_applied_sql",
    "remote_sql",
]

Engine = Literal["duckdb", "bigquery", "athena"]
ENGINES: tuple[str, ...] = get_args(Engine)

#: Engine -> sqlglot dialect name (Athena's SQL engine is Trino/Presto).
_DIALECTS = Registry("engine", {"duckdb": "duckdb", "bigquery": "bigquery", "athena": "athena"},
                     aliases={"trino": "athena", "presto": "athena", "bq": "bigquery"})

#: ``sql -> rows``: runs a query on a remote engine and returns its result rows.
QueryRunner = Callable[[str], Sequence[Sequence[Any]]]

_PLACEHOLDER = "focus_bills"
#: Checked columns a remote reconcile reads only at times: AllocatedTags where the engine lays them over Tags
#: (:data:`_ALLOCATED_TAGS_MERGE`), ContractApplied with the Contract Commitment dataset. They are checked when read,
#: so a table without them needs no ``--table-lacks`` where they are not read.
_READ_AT_TIMES = ("AllocatedTags", APPLIED_COLUMN)
#: The JSON tests the checks write as calls (:mod:`finops.reconcile.bill_checks`): name -> engine -> SQL.
_JSON_TESTS = {NOT_JSON_OBJECT_CALL: NOT_JSON_OBJECT, JSON_ARRAY_AT_CALL: JSON_ARRAY_AT}
_GROUPS = "charge_groups"

#: Engines whose FOCUS timestamp columns are absolute instants (BigQuery's TIMESTAMP; its DATETIME,
#: which sqlglot writes for DuckDB's TIMESTAMP, is civil time and does not compare with them): the
#: month's bounds are written there as UTC instants.
_INSTANT_TIME = {"bigquery"}
#: sqlglot's types for DuckDB's TIMESTAMP (civil time): TIMESTAMPNTZ in sqlglot 26 and later, TIMESTAMP before.
_CIVIL_TIME = ("timestamp", "timestampntz")
#: What a civil-time cast becomes on an instant-time engine.
_INSTANT_TYPE = "TIMESTAMPTZ"
#: Engine -> the type a cast to DECIMAL(38, 10) is written as, where sqlglot's own is refused: sqlglot writes BigQuery's
#: ``CAST`` as BIGNUMERIC but its ``SAFE_CAST`` as NUMERIC(38, 10), and BigQuery's NUMERIC takes 9 decimals at most
#: (https://cloud.google.com/bigquery/docs/reference/standard-sql/data-types, parameterized decimal types).
_DECIMAL_TYPE = {"bigquery": "BIGNUMERIC"}
#: Engine -> a FOCUS 1.3 charge's Tags with its ``AllocatedTags`` laid over them (RFC 7396 merge patch of two flat
#: objects, as the local scan does with DuckDB's ``json_merge_patch``: :func:`finops.reconcile.bills.open_bills`),
#: written in that engine's own dialect over ``{tags}`` and ``{allocated}``; sqlglot passes ``json_merge_patch``
#: through unchanged, and Athena (Trino) has none, so Athena merges the two objects as maps (``map_concat``: the
#: later map wins a key). An engine not listed (BigQuery: no merge of JSON objects, no MAP type) reads Tags as they
#: are. Source: Trino functions ``json_parse``, ``map_concat``, ``json_format``
#: (https://trino.io/docs/current/functions/json.html, https://trino.io/docs/current/functions/map.html).
_ALLOCATED_TAGS_MERGE = {
    "duckdb": ("CASE WHEN {allocated} IS NULL OR {allocated} = '' THEN {tags} ELSE CAST(json_merge_patch("
               "COALESCE(NULLIF({tags}, ''), '{{}}'), {allocated}) AS VARCHAR) END"),
    "athena": ("CASE WHEN {allocated} IS NULL OR {allocated} = '' THEN {tags} ELSE json_format(CAST(map_concat("
               "CAST(json_parse(COALESCE(NULLIF({tags}, ''), '{{}}')) AS MAP(VARCHAR, JSON)), "
               "CAST(json_parse({allocated}) AS MAP(VARCHAR, JSON))) AS JSON)) END"),
}

#: Engine -> how it reads a JSON array from a JSON text (``{json}`` at ``{path}``) for ``UNNEST``, where sqlglot's
#: transpiled ``CAST(... AS ARRAY<JSON>)`` is not valid there (BigQuery casts no JSON to an array). Athena (Trino)
#: casts JSON to ``ARRAY(JSON)`` as written. Source: BigQuery JSON functions, ``JSON_EXTRACT_ARRAY``
#: (https://cloud.google.com/bigquery/docs/reference/standard-sql/json_functions).
_JSON_ARRAY = {"bigquery": "JSON_EXTRACT_ARRAY({json}, {path})"}


def canonical_engine(name: str) -> str:
    """The engine a name means (aliases: ``bq``, ``trino``, ``presto``); a typo gets suggestions.

    >>> canonical_engine("Trino"), canonical_engine("bq")
    ('athena', 'bigquery')
    """
    return _DIALECTS[name]


def remote_sql(engine: str, relation: str, month: str, *, missing: Iterable[str] = (),
               rules: Sequence[MappingRule] = (), rates: Mapping[str, Decimal] | None = None) -> str:
    """The aggregation of ``month`` over ``relation`` in ``engine``'s dialect, mapping with ``rules``.

    ``missing`` names FOCUS columns the table does not have (optional ones, or the ``x_`` GPU
    columns in a provider's own export); they read as NULL, or as the column that succeeds them when the table has
    it (:data:`finops.focus.SUCCESSORS`: a FOCUS 1.4 table's ServiceProviderName for ProviderName). A table with
    ``AllocatedTags`` (FOCUS 1.3) has them laid over ``Tags`` where the engine can merge JSON objects
    (:data:`_ALLOCATED_TAGS_MERGE`). ``rates`` rank the unmapped groups in the plan currency.

    >>> "NULL AS gpu_model" in remote_sql("bigquery", "proj.billing.focus", "2026-05", missing=["x_GpuModel"])
    True
    >>> "ServiceProviderName AS provider_name" in remote_sql("athena", "t", "2026-05", missing=["ProviderName"])
    True
    """
    import sqlglot

    dialect = _DIALECTS[engine]
    absent = {name.lower() for name in missing}
    # Equivalent mutants (docs/testing.md): sqlglot reads a second "WITH" left in, and this SQL in its
    # default dialect, to the same tree, so the two lines marked below are not mutated.
    summary = summary_sql(_GROUPS, rates=rates)
    ctes = summary.removeprefix("WITH ")  # pragma: no mutate
    sql = f"WITH {_GROUPS} AS (\n{charge_groups_sql(_PLACEHOLDER, month, rules)}\n),\n" + ctes
    tree = sqlglot.parse_one(sql, read="duckdb")  # pragma: no mutate
    merge = _ALLOCATED_TAGS_MERGE.get(dialect) if "allocatedtags" not in absent else None
    tags = None
    if merge is not None:
        tags_read = "NULL" if "tags" in absent else "Tags"
        tags = sqlglot.parse_one(merge.format(tags=tags_read, allocated="AllocatedTags"), read=dialect)

    return _written(tree, engine, relation, absent, tags)


def _written(tree: Any, engine: str, relation: str, absent: set[str], tags: Any = None) -> str:
    """``tree`` (DuckDB's dialect over :data:`_PLACEHOLDER`) written for ``engine`` over ``relation``: the columns
    in ``absent`` (lower case) read as NULL or as their successor, civil-time casts as instants where the engine's
    timestamps are instants, ``Tags`` as ``tags`` when given, and a JSON array cast as the engine reads one
    (:data:`_JSON_ARRAY`)."""
    import sqlglot
    from sqlglot import exp

    dialect = _DIALECTS[engine]
    stand_ins = {name.lower(): next((c for c in columns if c.lower() not in absent), None)
                 for name, columns in SUCCESSORS.items()}
    array_of = _JSON_ARRAY.get(dialect)

    def rewrite(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and node.name.lower() in _JSON_TESTS:
            text, *path = (arg.transform(rewrite).sql(dialect=dialect) for arg in node.expressions)
            written = _JSON_TESTS[node.name.lower()][dialect]
            return sqlglot.parse_one(written.format(c=text, path=path[0] if path else ""), read=dialect)
        if tags is not None and isinstance(node, exp.Column) and node.name == "Tags" and not node.table:
            return tags.copy()
        if isinstance(node, exp.Column) and node.name.lower() in absent:
            stand_in = stand_ins.get(node.name.lower())
            return exp.column(stand_in) if stand_in else exp.Null()
        if isinstance(node, exp.Cast) and dialect in _INSTANT_TIME and node.to.is_type(*_CIVIL_TIME):
            return exp.cast(node.this, exp.DataType.build(_INSTANT_TYPE))
        if isinstance(node, exp.Cast) and dialect in _DECIMAL_TYPE and node.to.is_type(exp.DataType.Type.DECIMAL):
            node.set("to", exp.DataType.build(_DECIMAL_TYPE[dialect], dialect=dialect))
            return node
        if (array_of is not None and isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.ARRAY)
                and isinstance(node.this, exp.JSONExtract)):
            return sqlglot.parse_one(array_of.format(json=node.this.this.sql(dialect=dialect),
                                                     path=node.this.expression.sql(dialect=dialect)), read=dialect)
        if isinstance(node, exp.Table) and node.name == _PLACEHOLDER:
            return exp.to_table(relation, dialect=dialect)
        return node

    try:
        return tree.transform(rewrite).sql(dialect=dialect, pretty=True)
    except sqlglot.errors.SqlglotError as exc:
        raise InputError(f"cannot write the aggregation for {engine}: {exc}",
                         hint="check the table name (e.g. project.dataset.table)") from exc


def remote_contract_applied_sql(engine: str, relation: str, month: str, *, missing: Iterable[str] = ()) -> str:
    """The month's FOCUS 1.3 ``ContractApplied`` sums over ``relation`` in ``engine``'s dialect: the SQL of
    :func:`~finops.reconcile.contract_applied.contract_applied_sql`, transpiled like the aggregation.

    >>> "JSON_EXTRACT_ARRAY(ContractApplied, '$.Elements')" in remote_contract_applied_sql("bigquery", "t", "2026-05")
    True
    """
    return _transpiled(contract_applied_sql(_PLACEHOLDER, month), engine, relation, missing)


def remote_checks_sql(engine: str, relation: str, month: str, *, missing: Iterable[str] = (),
                      also: Iterable[str] = (), limit: int = EXAMPLES) -> str:
    """The checks every engine runs on the month's charges (:data:`finops.reconcile.bill_checks.CHECKS`: empty
    costs, Tags that are not a JSON object, closed FOCUS values) over ``relation`` in ``engine``'s dialect, as one
    query returning the first few offenders of each (:func:`~finops.reconcile.bill_checks.checks_sql`). A column in
    ``missing`` reads as NULL (a mandatory cost then fails its check: the table cannot be reconciled), and the
    columns a remote reconcile reads at times only (``AllocatedTags``, ``ContractApplied``) are checked when named in
    ``also``. ``limit``: the offenders returned per check.

    >>> sql = remote_checks_sql("bigquery", "p.d.t", "2026-05")
    >>> "NOT COALESCE(ChargeClass, '') IN ('', 'Correction')" in sql, "SAFE.PARSE_JSON(Tags) IS NULL" in sql
    (True, True)
    """
    checked = [check.column for check in CHECKS if check.column not in _READ_AT_TIMES or check.column in set(also)]
    return _transpiled(checks_sql(_PLACEHOLDER, month, checked, limit=limit), engine, relation, missing)


def _transpiled(sql: str, engine: str, relation: str, missing: Iterable[str]) -> str:
    """``sql`` (DuckDB's dialect over :data:`_PLACEHOLDER`) written for ``engine`` over ``relation`` (:func:`_written`)."""
    import sqlglot

    tree = sqlglot.parse_one(sql, read="duckdb")  # pragma: no mutate
    return _written(tree, engine, relation, {name.lower() for name in missing})


def reconcile_remote(plan: Plan, runner: QueryRunner, engine: str, relation: str, month: str, *,
                     missing: Iterable[str] = (), rates: Mapping[str, Decimal] | None = None,
                     threshold_pct: Decimal = Decimal(10), materiality: Decimal | None = None,
                     past_actuals: Mapping[str, Decimal] | None = None,
                     instance_gpus: InstanceGpus | None = None,
                     past_one_off: Mapping[str, Decimal] | None = None,
                     earlier_commitments: Mapping[str, EarlierCommitment] | None = None,
                     contracts: Mapping[str, ContractTerm] | None = None) -> Reconciliation:
    """Reconcile ``month`` with the aggregation run by ``runner`` on ``engine`` over ``relation``
    (``past_actuals``, ``past_one_off`` and ``earlier_commitments`` from the history, as for local bills).
    The commitments come from the same summary rows as every other figure.

    With ``contracts`` (the FOCUS Contract Commitment dataset) and a table that has ``ContractApplied`` (not in
    ``missing``), a second query sums it (:func:`remote_contract_applied_sql`) and the commitments use it as for
    local bills; a commitment the dataset does not list raises :class:`InputError` naming the table and column
    (the engine returns sums, not rows)."""
    source = f"{engine}:{relation}"
    absent = {name.lower() for name in missing}
    # the values FOCUS refuses, checked first, in one query: the aggregation would sum them silently
    summed = contracts is not None and APPLIED_COLUMN.lower() not in absent
    read = [name for name, when in (("AllocatedTags", _DIALECTS[engine] in _ALLOCATED_TAGS_MERGE), (APPLIED_COLUMN, summed))
            if when and name.lower() not in absent]
    refused = refused_charge(runner(remote_checks_sql(engine, relation, month, missing=missing, also=read)), source)
    if refused is not None:
        raise refused
    rows = runner(remote_sql(engine, relation, month, missing=missing, rules=plan.mapping, rates=rates))
    summary = Summary.from_rows([tuple(row) for row in rows])
    if not summary.groups:
        raise InputError(f"no charges in {month} in {relation}", hint="check the table and the month")
    problem = unit_problem(summary.groups)
    if problem is not None:  # a token charge whose unit counts no tokens, as the local run refuses it
        raise unit_error(problem["unit"], Location(file=source, column="ConsumedUnit"))
    applied: tuple[AppliedSums, ...] = ()
    if summed:
        applied = read_applied((tuple(row) for row in runner(remote_contract_applied_sql(engine, relation, month,
                                                                                         missing=missing))),
                               Location(file=source, column=APPLIED_COLUMN))
        known = {cid: term.contract_id for cid, term in contracts.items()}
        found = unknown_commitment(applied, known)
        if found is not None:
            raise unknown_error(found, Location(file=source, column=APPLIED_COLUMN),
                                "the Contract Commitment dataset (--contract-commitments)", known)
    extra = {} if materiality is None else {"materiality": materiality}
    return reconcile_groups(plan, summary, month, rates=rates, threshold_pct=threshold_pct, **extra,
                            past_actuals=past_actuals,
                            instance_gpus=instance_gpus, source=source, past_one_off=past_one_off,
                            earlier_commitments=earlier_commitments, contracts=contracts, applied=applied)
