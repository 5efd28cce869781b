"""Catalogs of models, accelerators and cloud instance types, each row with its source and date."""

from .accelerators import Accelerator, accelerators, get_accelerator
from .hf_config import count_params, load_hf_config, resolve_model, spec_from_config
from .instances import PROVIDERS, InstanceType, instance, instances, instances_for_gpu
from .links import Link, get_link, links
from .models import AttentionKind, ModelSpec, get_model, models

__all__ = [
    "PROVIDERS",
    "Accelerator",
    "AttentionKind",
    "InstanceType",
    "Link",
    "ModelSpec",
    "accelerators",
    "count_params",
    "get_accelerator",
    "get_link",
    "get_model",
    "instance",
    "instances",
    "instances_for_gpu",
    "links",
    "load_hf_config",
    "models",
    "resolve_model",
    "spec_from_config",
]
