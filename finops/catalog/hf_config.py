"""Build a :class:`ModelSpec` from a Hugging Face ``config.json``, and resolve any model reference.

Understands the Llama, Mistral, Mixtral, Qwen2/Qwen3, Qwen2-MoE/Qwen3-MoE and DeepSeek-V2/V3
layouts (a multimodal config's ``text_config`` is read the same way). Missing keys take the
transformers defaults: ``num_key_value_heads`` = ``num_attention_heads`` (MHA), ``head_dim`` =
``hidden_size / num_attention_heads``, ``tie_word_embeddings`` false (the default of every family
above). ``sliding_window`` counts only when every layer uses it (Qwen's ``use_sliding_window: false``
or ``max_window_layers < num_hidden_layers``, and a ``layer_types`` list with any full-attention layer,
as gpt-oss alternates them, leave full attention on some layers, so no cap).

Parameter counts are computed from the architecture (see :func:`count_params`) because configs do not
state them: embeddings + per layer (attention + norms + dense MLP or MoE block) + final norm + LM head.

>>> spec = spec_from_config({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
...     "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
...     "max_position_embeddings": 131072}, name="my-llama")
>>> spec.attention, spec.head_dim, round(spec.total_params_b, 3)
('gqa', 128, 8.03)
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError, Location, UnknownNameError
from ..limits import json_document
from ..registry import normalize_key
from .models import ModelSpec, get_model

__all__ = ["count_params", "load_hf_config", "resolve_model", "spec_from_config"]


def _int(config: Mapping[str, Any], key: str, default: int | None = None, *, file: str | None = None) -> int | None:
    value = config.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"config key {key!r} must be a whole number >= 0, got {value!r}",
                         where=Location(file=file))
    return value


def _required(config: Mapping[str, Any], key: str, file: str | None) -> int:
    value = _int(config, key, file=file)
    if not value:
        raise InputError(f"config has no {key!r}", where=Location(file=file),
                         hint="pass the model's own config.json from its Hugging Face repository; "
                              + _COVERED_ARCHITECTURES)
    return value


def count_params(config: Mapping[str, Any]) -> tuple[int, int]:
    """``(total, active)`` parameters of a decoder-only transformer from its config.

    Attention per layer: ``q + k + v + o`` projections (MLA: the low-rank ``q_a/q_b``, ``kv_a/kv_b``
    and ``o``, with their norms); QKV biases for Qwen2 or ``attention_bias``; Qwen3's q/k norms.
    MLP: gated, ``3 x hidden x intermediate``. MoE layers: router + experts (+ shared experts);
    *active* counts ``num_experts_per_tok`` routed experts instead of all of them.

    >>> cfg = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    ...        "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
    ...        "num_local_experts": 8, "num_experts_per_tok": 2}
    >>> [round(n / 1e9, 2) for n in count_params(cfg)]          # Mixtral-8x7B
    [46.7, 12.88]
    """
    cfg = _text_config(config)
    hidden = _required(cfg, "hidden_size", None)
    layers = _required(cfg, "num_hidden_layers", None)
    heads = _required(cfg, "num_attention_heads", None)
    kv_heads = _int(cfg, "num_key_value_heads") or heads
    head_dim = _int(cfg, "head_dim") or hidden // heads
    vocab = _required(cfg, "vocab_size", None)
    model_type = str(cfg.get("model_type", ""))

    if cfg.get("kv_lora_rank"):
        kv_rank = _int(cfg, "kv_lora_rank") or 0
        q_rank = _int(cfg, "q_lora_rank") or 0
        rope = _int(cfg, "qk_rope_head_dim") or 0
        nope = _int(cfg, "qk_nope_head_dim") or head_dim
        v_dim = _int(cfg, "v_head_dim") or head_dim
        q_out = heads * (nope + rope)
        q_proj = hidden * q_rank + q_rank + q_rank * q_out if q_rank else hidden * q_out
        attention = q_proj + hidden * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v_dim) \
            + heads * v_dim * hidden
    else:
        attention = hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden
        if cfg.get("attention_bias") or model_type in ("qwen2", "qwen2_moe"):
            attention += heads * head_dim + 2 * kv_heads * head_dim
        if model_type in ("qwen3", "qwen3_moe"):
            attention += 2 * head_dim
    norms = 2 * hidden

    experts = _experts(cfg)
    dense_mlp = 3 * hidden * (_int(cfg, "intermediate_size") or 0)
    moe_layers = _moe_layer_count(cfg, layers) if experts else 0
    total_layer = active_layer = 0
    if experts:
        expert_size = 3 * hidden * (_int(cfg, "moe_intermediate_size") or _int(cfg, "intermediate_size") or 0)
        per_token = _int(cfg, "num_experts_per_tok") or 1
        shared = _shared_expert_params(cfg, hidden, expert_size)
        router = hidden * experts + (experts if model_type.startswith("deepseek_v3") else 0)
        total_layer += moe_layers * (experts * expert_size + shared + router)
        active_layer += moe_layers * (per_token * expert_size + shared + router)
    common = layers * (attention + norms) + (layers - moe_layers) * dense_mlp
    embed = vocab * hidden * (1 if cfg.get("tie_word_embeddings", False) else 2)
    base = common + embed + hidden
    return base + total_layer, base + active_layer


def _text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    text = config.get("text_config")
    return {**config, **text} if isinstance(text, Mapping) else config


def _experts(cfg: Mapping[str, Any]) -> int:
    for key in ("num_local_experts", "n_routed_experts", "num_experts"):
        if cfg.get(key):
            return _int(cfg, key) or 0
    return 0


def _moe_layer_count(cfg: Mapping[str, Any], layers: int) -> int:
    if "first_k_dense_replace" in cfg:  # DeepSeek: the first k layers are dense, then every moe_layer_freq-th
        first = _int(cfg, "first_k_dense_replace") or 0
        freq = _int(cfg, "moe_layer_freq") or 1
        return sum(1 for i in range(first, layers) if i % freq == 0)
    step = _int(cfg, "decoder_sparse_step") or 1  # Qwen-MoE; Mixtral has neither key: every layer
    dense = cfg.get("mlp_only_layers") or []
    if not isinstance(dense, list) or not all(isinstance(i, int) for i in dense):
        raise InputError(f"config key 'mlp_only_layers' must be a list of layer numbers, got {dense!r}")
    return sum(1 for i in range(layers) if i not in dense and (i + 1) % step == 0)


def _shared_expert_params(cfg: Mapping[str, Any], hidden: int, expert_size: int) -> int:
    if cfg.get("n_shared_experts"):
        return (_int(cfg, "n_shared_experts") or 0) * expert_size
    if cfg.get("shared_expert_intermediate_size"):  # Qwen2-MoE: one wide shared expert plus its gate
        return 3 * hidden * (_int(cfg, "shared_expert_intermediate_size") or 0) + hidden
    return 0


def _shared_experts(cfg: Mapping[str, Any]) -> int:
    if cfg.get("n_shared_experts"):
        return _int(cfg, "n_shared_experts") or 0
    return 1 if cfg.get("shared_expert_intermediate_size") else 0


def _full_sliding_window(cfg: Mapping[str, Any], layers: int) -> int | None:
    window = _int(cfg, "sliding_window")
    if not window or cfg.get("use_sliding_window") is False:
        return None
    layer_types = cfg.get("layer_types")   # gpt-oss, Gemma 2/3: the window on some layers only
    if isinstance(layer_types, list) and any(kind != "sliding_attention" for kind in layer_types):
        return None
    max_window_layers = _int(cfg, "max_window_layers")
    if cfg.get("use_sliding_window") and max_window_layers is not None and max_window_layers < layers:
        return None
    return window


#: Architectures whose steps are not those of a transformer decoder (state-space or recurrent layers,
#: alone or between attention layers): their weights, KV cache and step times are not the model's
#: formulas. Names are Hugging Face ``model_type`` values.
_NOT_TRANSFORMER_DECODERS = {
    **dict.fromkeys(("mamba", "mamba2", "falcon_mamba"), "a state-space model (no attention, no KV cache)"),
    **dict.fromkeys(("rwkv", "rwkv5", "rwkv6", "rwkv7"), "a recurrent model (no attention, no KV cache)"),
    **dict.fromkeys(("jamba", "zamba", "zamba2", "bamba", "nemotron_h", "granitemoehybrid", "falcon_h1",
                     "recurrent_gemma"), "a hybrid of attention and state-space or recurrent layers"),
}
_COVERED_ARCHITECTURES = ("covered: decoder-only transformers with multi-head, grouped-query or multi-head latent "
                          "attention, dense or mixture-of-experts (Llama, Mistral, Mixtral, Qwen2/Qwen3, "
                          "DeepSeek-V2/V3 and their kin)")


def spec_from_config(config: Mapping[str, Any], *, name: str, source: str = "config.json",
                     as_of: str | None = None, file: str | None = None) -> ModelSpec:
    """A :class:`ModelSpec` from a parsed ``config.json`` mapping (see the module docstring)."""
    cfg = _text_config(config)
    kind = str(cfg.get("model_type") or "")
    if kind in _NOT_TRANSFORMER_DECODERS:
        raise InputError(f"{kind} ({', '.join(map(str, cfg.get('architectures') or [])) or 'this model'}) is "
                         f"{_NOT_TRANSFORMER_DECODERS[kind]}: the performance model does not cover it",
                         where=Location(file=file), hint=_COVERED_ARCHITECTURES)
    hidden = _required(cfg, "hidden_size", file)
    layers = _required(cfg, "num_hidden_layers", file)
    heads = _required(cfg, "num_attention_heads", file)
    vocab = _required(cfg, "vocab_size", file)
    kv_heads = _int(cfg, "num_key_value_heads", file=file) or heads
    if heads % kv_heads:
        raise InputError(f"num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}",
                         where=Location(file=file))
    kv_rank = _int(cfg, "kv_lora_rank", file=file)
    head_dim = (_int(cfg, "head_dim", file=file) or _int(cfg, "v_head_dim", file=file) or hidden // heads)
    try:
        experts = _experts(cfg)
        total, active = count_params(cfg)
    except InputError as exc:
        raise InputError(exc.message, hint=exc.hint, where=Location(file=file)) from exc
    attention = "mla" if kv_rank else ("mha" if kv_heads == heads else "gqa")
    try:
        window = _full_sliding_window(cfg, layers)
    except InputError as exc:
        raise InputError(exc.message, where=Location(file=file)) from exc
    moe_layers = _moe_layer_count(cfg, layers) if experts else 0
    return ModelSpec(
        id=normalize_key(name), hf_id=str(cfg.get("_name_or_path") or name), aliases=(),
        family=str(cfg.get("model_type") or "custom"), attention=attention,  # type: ignore[arg-type]
        layers=layers, hidden_size=hidden, num_attention_heads=heads, num_kv_heads=kv_heads, head_dim=head_dim,
        intermediate_size=_int(cfg, "intermediate_size", file=file) or 0,
        moe_intermediate_size=(_int(cfg, "moe_intermediate_size", file=file)
                               or _int(cfg, "intermediate_size", file=file)) if experts else None,
        num_experts=experts or None,
        experts_per_token=(_int(cfg, "num_experts_per_tok", file=file) or 1) if experts else None,
        shared_experts=_shared_experts(cfg) if experts else None,
        first_dense_layers=(layers - moe_layers) if experts else None,
        vocab_size=vocab, tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        total_params_b=total / 1e9, active_params_b=active / 1e9,
        kv_lora_rank=kv_rank, qk_rope_head_dim=_int(cfg, "qk_rope_head_dim", file=file) if kv_rank else None,
        sliding_window=window,
        max_context=_int(cfg, "max_position_embeddings", file=file) or 0,
        source=source, as_of=as_of or _dt.date.today().isoformat(),
    )


def load_hf_config(path: str | Path) -> ModelSpec:
    """Read a ``config.json`` (or a model folder holding one) into a :class:`ModelSpec`.

    The spec's id is the folder name; ``source`` is the file path and ``as_of`` its modification date.
    """
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / "config.json"
    if not p.is_file():
        raise InputError(f"no such config file: {p}", hint="pass a Hugging Face config.json or its folder")
    try:
        config = json_document(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read JSON: {exc}", where=Location(file=str(p))) from exc
    if not isinstance(config, dict):
        raise InputError("config.json must hold a JSON object", where=Location(file=str(p)))
    name = p.parent.name if p.name == "config.json" and p.parent.name else p.stem
    as_of = _dt.date.fromtimestamp(p.stat().st_mtime).isoformat()
    return spec_from_config(config, name=name, source=str(p), as_of=as_of, file=str(p))


def resolve_model(name_or_path: str | Path | ModelSpec) -> ModelSpec:
    """A catalog id, alias or Hugging Face id, or a path to a ``config.json`` (or its folder).

    >>> resolve_model("meta-llama/Llama-3.1-8B-Instruct").id
    'llama-3.1-8b'
    """
    if isinstance(name_or_path, ModelSpec):
        return name_or_path
    text = str(name_or_path).strip()
    if isinstance(name_or_path, Path) or text.endswith(".json") or (Path(text).expanduser() / "config.json").is_file():
        return load_hf_config(text)
    try:
        return get_model(text)
    except UnknownNameError as exc:
        if "/" in text:  # a Hugging Face id the catalog lacks: nothing is downloaded at run time
            exc.hint = "for a model outside the catalog, download its config.json and pass its path"
            exc.args = (str(exc),)
        raise
