"""Model catalog: the architecture facts that sizing needs, per model.

Each row of ``finops/catalog/data/models.csv`` is read from the model's Hugging Face ``config.json``
(its URL is the row's ``source``). ``attention`` is ``mha``, ``gqa`` or ``mla``; ``sliding_window``
is set where every layer uses a window. MoE rows carry ``num_experts``, ``experts_per_token`` and
``active_params_b``.

>>> m = get_model("meta-llama/Llama-3.1-8B-Instruct")
>>> m.id, m.layers, m.num_kv_heads, m.head_dim
('llama-3.1-8b', 32, 8, 128)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

from ..registry import Registry
from ._table import aliases, parse, read_rows

__all__ = ["AttentionKind", "ModelSpec", "get_model", "models"]

_FILE = "models.csv"
AttentionKind = Literal["mha", "gqa", "mla"]


@dataclass(frozen=True)
class ModelSpec:
    id: str
    hf_id: str
    aliases: tuple[str, ...]
    family: str
    attention: AttentionKind
    layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    moe_intermediate_size: int | None
    num_experts: int | None
    experts_per_token: int | None
    shared_experts: int | None
    first_dense_layers: int | None
    vocab_size: int
    tied_embeddings: bool
    total_params_b: float
    active_params_b: float
    kv_lora_rank: int | None
    qk_rope_head_dim: int | None
    sliding_window: int | None
    max_context: int
    source: str
    as_of: str

    @property
    def is_moe(self) -> bool:
        return bool(self.num_experts)


_INT_COLUMNS = ("layers", "hidden_size", "num_attention_heads", "num_kv_heads", "head_dim", "intermediate_size",
                "moe_intermediate_size", "num_experts", "experts_per_token", "shared_experts",
                "first_dense_layers", "vocab_size", "kv_lora_rank", "qk_rope_head_dim", "sliding_window",
                "max_context")


@cache
def models() -> Registry[ModelSpec]:
    """All catalog models by short id; Hugging Face ids and aliases resolve too."""
    items: dict[str, ModelSpec] = {}
    alias_map: dict[str, str] = {}
    for line, row in read_rows(_FILE):
        values: dict[str, object] = {c: parse(row[c], int, file=_FILE, line=line, column=c) for c in _INT_COLUMNS}
        values.update(
            total_params_b=parse(row["total_params_b"], float, file=_FILE, line=line, column="total_params_b"),
            active_params_b=parse(row["active_params_b"], float, file=_FILE, line=line, column="active_params_b"),
            tied_embeddings=parse(row["tied_embeddings"], bool, file=_FILE, line=line, column="tied_embeddings"),
        )
        spec = ModelSpec(id=row["id"], hf_id=row["hf_id"], aliases=tuple(aliases(row["aliases"])),
                         family=row["family"], attention=row["attention"],  # type: ignore[arg-type]
                         source=row["source"], as_of=row["as_of"], **values)  # type: ignore[arg-type]
        items[spec.id] = spec
        alias_map.update({a: spec.id for a in (spec.hf_id, *spec.aliases)})
    return Registry("model", items, alias_map)


def get_model(name: str) -> ModelSpec:
    """Resolve a catalog id, alias or Hugging Face id; unknown names list the closest."""
    return models()[name]
