"""Assign each charge group to a plan line: the Mapping sheet's rules, first match wins.

A rule (:class:`~finops.reconcile.plan.MappingRule`) matches a charge when every non-blank field
matches: provider, sub-account (id or name), service, instance type, region, and a tag (``TagKey``
with ``TagValue``; a key alone means "has this tag"). Fields are ``*``/``?`` globs, compared
case-insensitively. Rules are tried in ``Rule`` order and the first that matches wins; a charge no
rule matches goes to :data:`UNMAPPED`, never dropped.

>>> from finops.reconcile.plan import MappingRule
>>> rules = [MappingRule(2, "Data", service_name="Big*"), MappingRule(1, "GPU", instance_type="p5.*")]
>>> mapper = Mapper(rules)
>>> mapper.plan_line(Charge(provider_name="AWS", instance_type="p5.48xlarge"))
'GPU'
>>> mapper.plan_line(Charge(provider_name="AWS", service_name="AmazonS3"))
'Unmapped'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache

from .plan import MappingRule

__all__ = ["UNMAPPED", "Charge", "Mapper"]

#: The plan line of charges that match no rule.
UNMAPPED = "Unmapped"


@dataclass(frozen=True)
class Charge:
    """The fields of a charge the rules look at (tags as the FOCUS JSON object text)."""

    provider_name: str | None = None
    sub_account_id: str | None = None
    sub_account_name: str | None = None
    service_name: str | None = None
    instance_type: str | None = None
    region_id: str | None = None
    tags: str | None = None


@lru_cache(maxsize=4096)
def _glob(pattern: str, value: str | None) -> bool:
    return value is not None and fnmatchcase(value.lower(), pattern.lower())


def _parse_tags(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(parsed, dict):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in parsed.items()}


class Mapper:
    """The rules of a plan, sorted by ``rule``; remembers the answer for each distinct charge."""

    def __init__(self, rules: list[MappingRule] | tuple[MappingRule, ...]) -> None:
        self.rules = sorted(rules, key=lambda r: r.rule)
        self._cache: dict[Charge, str] = {}

    def plan_line(self, charge: Charge) -> str:
        """The plan line of the first rule matching ``charge``, else :data:`UNMAPPED`."""
        line = self._cache.get(charge)
        if line is None:
            line = next((r.plan_line for r in self.rules if _matches(r, charge)), UNMAPPED)
            self._cache[charge] = line
        return line


def _matches(rule: MappingRule, charge: Charge) -> bool:
    fields = ((rule.provider_name, charge.provider_name), (rule.service_name, charge.service_name),
              (rule.instance_type, charge.instance_type), (rule.region_id, charge.region_id))
    if any(pattern is not None and not _glob(pattern, value) for pattern, value in fields):
        return False
    if rule.sub_account is not None and not (_glob(rule.sub_account, charge.sub_account_id)
                                             or _glob(rule.sub_account, charge.sub_account_name)):
        return False
    if rule.tag_key is None and rule.tag_value is None:
        return True
    tags = _parse_tags(charge.tags)
    return any((rule.tag_key is None or _glob(rule.tag_key, key))
               and (rule.tag_value is None or _glob(rule.tag_value, value)) for key, value in tags.items())
