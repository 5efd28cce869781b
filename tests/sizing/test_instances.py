"""Instance catalogs: every row resolves to a catalog accelerator, carries provenance, and looks up by name."""

import pytest

from finops.catalog import PROVIDERS, get_accelerator, instance, instances, instances_for_gpu
from finops.errors import UnknownNameError

REQUIRED = {
    "aws": ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge",
            "g5.xlarge", "g5.48xlarge", "g6.xlarge", "g6.48xlarge", "g6e.xlarge", "g6e.48xlarge",
            "inf2.xlarge", "inf2.48xlarge", "trn1.2xlarge", "trn1.32xlarge"],
    "gcp": ["a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g", "a2-highgpu-8g", "a2-megagpu-16g",
            "a2-ultragpu-1g", "a2-ultragpu-2g", "a2-ultragpu-4g", "a2-ultragpu-8g",
            "a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g", "a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g",
            "a4-highgpu-8g"] + [f"g2-standard-{n}" for n in (4, 8, 12, 16, 24, 32, 48, 96)]
           + ["tpu-v5e", "tpu-v5p", "tpu-v6e"],
}


@pytest.mark.parametrize("provider, name", [(p, n) for p, names in REQUIRED.items() for n in names])
def test_required_types_are_there_with_provenance(provider, name):
    item = instance(provider, name)
    assert item.provider == provider and item.instance_type == name
    assert item.source and item.as_of.startswith("20")
    assert item.accelerator.id == item.gpu_model
    assert item.gpu_count >= 1 and item.vcpu >= 1 and item.memory_gib > 0 and item.local_ssd_gb >= 0


@pytest.mark.parametrize("provider, name, gpu, count, vcpu, memory_gib", [
    ("aws", "p4d.24xlarge", "a100-40gb", 8, 96, 1152),
    ("aws", "p5.48xlarge", "h100-sxm", 8, 192, 2048),
    ("aws", "p5en.48xlarge", "h200", 8, 192, 2048),
    ("aws", "p6-b200.48xlarge", "b200", 8, 192, 2048),
    ("aws", "g5.12xlarge", "a10g", 4, 48, 192),
    ("aws", "g6e.xlarge", "l40s", 1, 4, 32),
    ("aws", "inf2.48xlarge", "inferentia2", 12, 192, 768),
    ("aws", "trn1.32xlarge", "trainium1", 16, 128, 512),
    ("gcp", "a2-megagpu-16g", "a100-40gb", 16, 96, 1360),
    ("gcp", "a2-ultragpu-8g", "a100-80gb", 8, 96, 1360),
    ("gcp", "a3-highgpu-1g", "h100-sxm", 1, 26, 234),
    ("gcp", "a3-ultragpu-8g", "h200", 8, 224, 2952),
    ("gcp", "a4-highgpu-8g", "b200", 8, 224, 3968),
    ("gcp", "g2-standard-24", "l4", 2, 24, 96),
    ("gcp", "g2-standard-96", "l4", 8, 96, 384),
    ("gcp", "tpu-v6e", "tpu-v6e", 1, 44, 176),
])
def test_figures(provider, name, gpu, count, vcpu, memory_gib):
    item = instance(provider, name)
    assert (item.gpu_model, item.gpu_count, item.vcpu, item.memory_gib) == (gpu, count, vcpu, memory_gib)


def test_names_are_forgiving_and_unknown_ones_suggest():
    assert instance("AWS", "P5.48XLARGE").instance_type == "p5.48xlarge"
    with pytest.raises(UnknownNameError, match="did you mean: p5.48xlarge"):
        instance("aws", "p5.48xlarg")
    with pytest.raises(UnknownNameError, match="unknown provider 'azure'"):
        instances("azure")


def test_listing_and_by_gpu():
    assert {i.provider for i in instances()} == set(PROVIDERS)
    assert len(instances()) == len(instances("aws")) + len(instances("gcp"))
    h100 = instances_for_gpu("H100")  # alias
    assert {i.instance_type for i in h100} >= {"p5.48xlarge", "a3-highgpu-8g", "a3-megagpu-8g"}
    assert [i.gpu_count for i in h100] == sorted(i.gpu_count for i in h100)
    assert all(i.provider == "gcp" for i in instances_for_gpu("l4", "gcp"))
    with pytest.raises(UnknownNameError):
        instances_for_gpu("h1000")


def test_every_catalog_gpu_used_by_a_cloud_is_reachable():
    used = {i.gpu_model for i in instances()}
    assert used >= {"a10g", "l4", "l40s", "a100-40gb", "a100-80gb", "h100-sxm", "h200", "b200", "inferentia2",
                    "trainium1", "tpu-v5e", "tpu-v5p", "tpu-v6e"}
    assert all(get_accelerator(g).id == g for g in used)


def test_instance_gpu_memory():
    assert instance("aws", "g6e.12xlarge").gpu_memory_gib == pytest.approx(4 * get_accelerator("l40s").memory_gib_usable)
