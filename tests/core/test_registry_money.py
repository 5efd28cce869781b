from decimal import Decimal

import pytest

from finops import CurrencyMismatchError, InputError, Money, UnknownNameError, to_decimal
from finops.catalog import accelerators, get_accelerator, get_model, models


@pytest.mark.parametrize("name, expected", [
    ("H100", "h100-sxm"), ("h100_sxm", "h100-sxm"), ("H100 PCIe", "h100-pcie"), ("tpu-v6e", "tpu-v6e"),
    ("trillium", "tpu-v6e"), ("MI300X", "mi300x"), ("a100", "a100-40gb"),
])
def test_gpu_names_resolve(name, expected):
    assert get_accelerator(name).id == expected


@pytest.mark.parametrize("name, expected", [
    ("llama-3.1-8b", "llama-3.1-8b"), ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"), ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
    ("mixtral", "mixtral-8x7b"),
])
def test_model_names_resolve(name, expected):
    assert get_model(name).id == expected


def test_unknown_names_list_closest_matches():
    with pytest.raises(UnknownNameError) as info:
        get_accelerator("h10")
    suggestions = info.value.suggestions
    assert suggestions[0] == "h100-sxm"  # via the alias h100, shown as the canonical id
    assert len(set(suggestions)) == len(suggestions) and set(suggestions) <= set(accelerators())
    with pytest.raises(UnknownNameError) as info:
        get_model("qwen3-33b")
    assert "qwen3-32b" in info.value.suggestions


def test_catalogs_cover_the_required_rows_with_provenance():
    required_gpus = {"a10g", "l4", "l40s", "a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200", "h20", "b200",
                     "mi300x", "mi325x", "tpu-v5e", "tpu-v5p", "tpu-v6e"}
    assert required_gpus <= set(accelerators())
    required_models = {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.3-70b", "qwen3-8b", "qwen3-32b",
                       "qwen3-30b-a3b", "mistral-7b", "mixtral-8x7b", "deepseek-v3"}
    assert required_models <= set(models())
    for item in list(accelerators().values()) + list(models().values()):
        assert item.source and item.as_of


@pytest.mark.parametrize("value, expected", [
    (0.1, Decimal("0.1")), ("1,234.50", Decimal("1234.50")), ("-1,234,567", Decimal("-1234567")), (7, Decimal(7)), (Decimal("2.5"), Decimal("2.5")),
])
def test_to_decimal_is_exact(value, expected):
    assert to_decimal(value) == expected


@pytest.mark.parametrize("bad", ["abc", "", float("nan"), True, None, "12,5", "1,23.4"])
def test_to_decimal_rejects_non_numbers(bad):
    with pytest.raises(InputError):
        to_decimal(bad)


def test_money_never_mixes_currencies():
    assert Money.of(160000, "CNY") * 9 + Money.of(9000, "CNY") * 9 * 36 == Money.of(4356000, "CNY")
    with pytest.raises(CurrencyMismatchError):
        Money.of(1, "USD") + Money.of(1, "CNY")
