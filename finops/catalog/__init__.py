"""Catalogs of models and accelerators, each row with its source and date."""

from .accelerators import Accelerator, accelerators, get_accelerator
from .models import AttentionKind, ModelSpec, get_model, models

__all__ = ["Accelerator", "AttentionKind", "ModelSpec", "accelerators", "get_accelerator", "get_model", "models"]
