"""The accelerator catalog agrees with botocore's SageMaker model and with EC2's own instance data.

Two independent references keep the hand-curated data honest:
- botocore's ``ProductionVariantInstanceType`` enum: which types exist (a botocore upgrade that adds or drops a
  type fails here until ``scripts/update_instance_types.py`` is re-run);
- EC2 ``DescribeInstanceTypes`` output, in the snapshot moto ships: which families carry accelerators and what
  each type has (vCPUs, memory, devices, network, instance store), so a typo in accelerators.json shows up.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import botocore.session
import pytest

import fastscale.infra.base.catalog as catalog

ROOT = Path(__file__).resolve().parents[1]
CATALOG_DIR = ROOT / "infra" / "base" / "catalog"


@pytest.fixture(scope="module")
def sagemaker_enum() -> set[str]:
    model = botocore.session.get_session().get_service_model("sagemaker")
    return set(model.shape_for("ProductionVariantInstanceType").enum)


@pytest.fixture(scope="module")
def ec2_types() -> dict[str, dict]:
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    return INSTANCE_TYPES


@pytest.fixture(scope="module")
def accelerators_doc() -> dict:
    return json.loads((CATALOG_DIR / "accelerators.json").read_text(encoding="utf-8"))


def _ec2_accelerators(record: dict) -> tuple[str, int] | None:
    """(device name, device count) from a DescribeInstanceTypes record, or None for a CPU-only type."""
    if "GpuInfo" in record:
        gpu = record["GpuInfo"]["Gpus"][0]
        return gpu["Name"], gpu["Count"]
    if "NeuronInfo" in record:
        device = record["NeuronInfo"]["NeuronDevices"][0]
        return device["Name"], device["Count"]
    if "InferenceAcceleratorInfo" in record:
        device = record["InferenceAcceleratorInfo"]["Accelerators"][0]
        return device["Name"], device["Count"]
    return None


# Families whose types EC2's snapshot does not describe, classified from AWS's published specifications.
ACCELERATOR_FAMILIES_NOT_IN_EC2_DATA = {"p2", "p3", "p6e-gb200"}
# Accelerator families fastscale deliberately leaves out (Habana Gaudi is none of GPU / Inferentia / Trainium).
EXCLUDED_FAMILIES = {"dl1"}


# --- the committed instance-type list ---------------------------------------------------------------------


def test_committed_list_equals_botocore_enum(sagemaker_enum):
    doc = json.loads((CATALOG_DIR / "sagemaker_instance_types.json").read_text(encoding="utf-8"))
    assert doc["instance_types"] == sorted(sagemaker_enum), "re-run scripts/update_instance_types.py"
    assert catalog.known_instance_types() == frozenset(sagemaker_enum)


def test_update_script_check_mode(tmp_path):
    script = ROOT / "scripts" / "update_instance_types.py"
    fresh = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert fresh.returncode == 0, fresh.stderr

    stale = tmp_path / "types.json"
    doc = json.loads((CATALOG_DIR / "sagemaker_instance_types.json").read_text(encoding="utf-8"))
    doc["instance_types"] = [t for t in doc["instance_types"] if t != "ml.g6.2xlarge"] + ["ml.zz9.xlarge"]
    stale.write_text(json.dumps(doc), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script), "--check", "--output", str(stale)], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 1
    assert "added:   ml.g6.2xlarge" in result.stderr
    assert "removed: ml.zz9.xlarge" in result.stderr


def test_update_script_writes_the_committed_file(tmp_path):
    script = ROOT / "scripts" / "update_instance_types.py"
    out = tmp_path / "types.json"
    result = subprocess.run([sys.executable, str(script), "--output", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8") == (CATALOG_DIR / "sagemaker_instance_types.json").read_text(
        encoding="utf-8"
    )


def test_lookups_do_not_load_botocore():
    # The reason the enum is committed: validation must not pay for botocore's SageMaker model.
    code = (
        "import sys, infra.base.catalog as c\n"
        "assert c.is_known_instance_type('ml.m5.xlarge') and c.get('ml.g6.2xlarge')\n"
        "print('botocore' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


# --- coverage against botocore and EC2 ----------------------------------------------------------------------


def test_every_entry_is_in_the_sagemaker_enum(sagemaker_enum):
    assert {spec.instance_type for spec in catalog.all_instances()} <= sagemaker_enum


def test_every_enum_family_is_classified(sagemaker_enum, ec2_types):
    # A family neither EC2's data nor the lists above describe could be a new accelerator family: make a person
    # look at it rather than silently treating it as CPU-only.
    described = {catalog.family_of(t) for t in sagemaker_enum if t.removeprefix("ml.") in ec2_types}
    unclassified = {catalog.family_of(t) for t in sagemaker_enum} - described
    unclassified -= ACCELERATOR_FAMILIES_NOT_IN_EC2_DATA | EXCLUDED_FAMILIES
    assert not unclassified, f"classify these families in tests/test_catalog.py: {sorted(unclassified)}"


def test_every_accelerator_family_has_all_its_sizes(sagemaker_enum, ec2_types):
    accelerator_families = set(ACCELERATOR_FAMILIES_NOT_IN_EC2_DATA)
    for instance_type in sagemaker_enum:
        record = ec2_types.get(instance_type.removeprefix("ml."))
        if record is not None and _ec2_accelerators(record) is not None:
            accelerator_families.add(catalog.family_of(instance_type))
    accelerator_families -= EXCLUDED_FAMILIES

    expected = {t for t in sagemaker_enum if catalog.family_of(t) in accelerator_families}
    listed = {spec.instance_type for spec in catalog.all_instances()}
    assert expected - listed == set(), "accelerator types missing from accelerators.json"
    assert listed - expected == set(), "accelerators.json lists a type of a family without accelerators"


def test_excluded_families_are_documented(accelerators_doc, sagemaker_enum):
    assert set(accelerators_doc["excluded_families"]) == EXCLUDED_FAMILIES
    assert all(catalog.get(t) is None for t in sagemaker_enum if catalog.family_of(t) in EXCLUDED_FAMILIES)


def _network(performance: str) -> tuple[float, bool]:
    if m := re.fullmatch(r"Up to ([\d.]+) Gigabit", performance):
        return float(m.group(1)), True
    if m := re.fullmatch(r"(\d+)x ([\d.]+) Gigabit", performance):
        return int(m.group(1)) * float(m.group(2)), False
    if m := re.fullmatch(r"([\d.]+) Gigabit", performance):
        return float(m.group(1)), False
    raise AssertionError(f"unexpected NetworkPerformance {performance!r}")


def test_hardware_matches_ec2_describe_instance_types(ec2_types):
    checked = 0
    for spec in catalog.all_instances():
        record = ec2_types.get(spec.instance_type.removeprefix("ml."))
        if record is None:
            continue
        checked += 1
        name, count = _ec2_accelerators(record)
        where = spec.instance_type
        assert spec.accelerator_count == count, where
        # EC2 says "RTX PRO Server 6000" where NVIDIA says "RTX PRO 6000 ... Server Edition": compare words.
        assert set(name.split()) <= set(spec.accelerator_name.split()), where
        assert spec.vcpus == record["VCpuInfo"]["DefaultVCpus"], where
        assert spec.memory_gib == record["MemoryInfo"]["SizeInMiB"] / 1024, where
        assert (spec.network_gbps, spec.network_burst) == _network(record["NetworkInfo"]["NetworkPerformance"]), where
        storage = record.get("InstanceStorageInfo")
        assert spec.local_nvme == bool(storage and storage["NvmeSupport"] in ("required", "supported")), where
        assert spec.nvme_gb == (storage["TotalSizeInGB"] if storage else 0), where
        if spec.accelerator_kind == "nvidia-gpu":
            # AWS lists marketed GPU memory; drivers report a few percent less (22888 MiB for a 24 GiB L4).
            reported_gib = record["GpuInfo"]["Gpus"][0]["MemoryInfo"]["SizeInMiB"] / 1024
            assert reported_gib <= spec.accelerator_memory_gib * 1.01, where
            assert reported_gib >= spec.accelerator_memory_gib * 0.9, where
    assert checked >= 60  # all but p2, p3 and p6e-gb200


# --- sanity checks that catch data typos ---------------------------------------------------------------------

# Device memory (GiB) each accelerator model ships with, from NVIDIA and AWS Neuron specifications.
PLAUSIBLE_DEVICE_MEMORY = {
    "NVIDIA T4": {16},
    "NVIDIA A10G": {24},
    "NVIDIA L4": {24},
    "NVIDIA L40S": {48},
    "NVIDIA RTX PRO 4500 Blackwell Server Edition": {32},
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": {96},
    "NVIDIA K80": {12},
    "NVIDIA V100": {16, 32},
    "NVIDIA A100": {40, 80},
    "NVIDIA H100": {80, 94},
    "NVIDIA H200": {141},
    "NVIDIA B200": {179, 180},
    "NVIDIA B300": {268, 288},
    "NVIDIA GB200": {186},
    "AWS Inferentia": {8},
    "AWS Inferentia2": {32},
    "AWS Trainium": {32},
    "AWS Trainium2": {96},
}
KIND_BY_VENDOR = {"NVIDIA": "nvidia-gpu", "AWS Inferentia": "inferentia", "AWS Trainium": "trainium"}


@pytest.mark.parametrize("spec", catalog.all_instances(), ids=lambda s: s.instance_type)
def test_entry_is_plausible(spec):
    assert spec.accelerator_count > 0
    assert spec.vcpus > 0 and spec.memory_gib > 0 and spec.network_gbps > 0
    assert spec.price_per_hour_usd > 0
    assert spec.accelerator_memory_gib in PLAUSIBLE_DEVICE_MEMORY[spec.accelerator_name]
    assert spec.family == catalog.family_of(spec.instance_type)
    assert spec.accelerator_kind == next(k for v, k in KIND_BY_VENDOR.items() if spec.accelerator_name.startswith(v))
    assert spec.local_nvme == (spec.nvme_gb > 0)
    assert spec.vcpus % 2 == 0  # every accelerator type has an even vCPU count; an odd one is a typo


def test_one_accelerator_model_per_family():
    names: dict[str, set[str]] = {}
    for spec in catalog.all_instances():
        names.setdefault(spec.family, set()).add(spec.accelerator_name)
    assert {family: n for family, n in names.items() if len(n) > 1} == {}


def test_price_grows_with_size_within_a_family():
    # A type that has at least as many devices, vCPUs and GiB as another of its family (and more of one) must cost
    # more. Plain "bigger name, bigger price" is false: ml.g5.16xlarge (1 GPU) is cheaper than ml.g5.12xlarge (4).
    specs = catalog.all_instances()
    for big in specs:
        for small in specs:
            if big.family != small.family or big is small:
                continue
            dims_big = (big.accelerator_count, big.vcpus, big.memory_gib)
            dims_small = (small.accelerator_count, small.vcpus, small.memory_gib)
            if all(b >= s for b, s in zip(dims_big, dims_small)) and dims_big != dims_small:
                assert big.price_per_hour_usd > small.price_per_hour_usd, (big.instance_type, small.instance_type)


def test_estimates_are_marked_and_explained(accelerators_doc):
    estimated = {spec.instance_type for spec in catalog.all_instances() if spec.price_is_estimate}
    assert estimated == set(accelerators_doc["price_estimates"])
    assert all(len(method) > 20 for method in accelerators_doc["price_estimates"].values())
    # The families with long-published SageMaker rates must not silently turn into estimates.
    for family in ("g5", "g6", "g6e", "inf2"):
        assert not any(s.price_is_estimate for s in catalog.all_instances() if s.family == family), family


def test_sources_and_date_are_recorded(accelerators_doc):
    urls = [source["url"] for source in accelerators_doc["sources"]]
    assert all(url.startswith("https://") for url in urls)
    assert any("docs.aws.amazon.com/ec2/latest/instancetypes/ac.html" in url for url in urls)
    assert any("aws.amazon.com/sagemaker/ai/pricing" in url for url in urls)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", catalog.as_of())


def test_g6_2xlarge_is_one_l4():
    spec = catalog.get("ml.g6.2xlarge")
    assert spec is not None
    assert (spec.accelerator_kind, spec.accelerator_name) == ("nvidia-gpu", "NVIDIA L4")
    assert (spec.accelerator_count, spec.accelerator_memory_gib) == (1, 24)
    assert (spec.vcpus, spec.memory_gib) == (8, 32)
    assert spec.local_nvme and spec.nvme_gb > 0


def test_local_nvme_by_family():
    for spec in catalog.all_instances():
        if spec.family in ("g4dn", "g5", "g6", "g6e", "g7e", "p4d", "p5", "trn1"):
            assert spec.local_nvme, spec.instance_type
        if spec.family in ("inf1", "inf2", "p2", "p3"):
            assert not spec.local_nvme and spec.nvme_gb == 0, spec.instance_type


def test_neuron_devices_are_counted_as_chips():
    assert catalog.get("ml.inf2.48xlarge").accelerator_count == 12
    assert catalog.get("ml.inf2.xlarge").accelerator_count == 1
    assert catalog.get("ml.trn1.32xlarge").accelerator_count == 16
    assert catalog.get("ml.inf1.24xlarge").accelerator_count == 16


# --- lookups ----------------------------------------------------------------------------------------------------


def test_get_and_is_accelerator():
    assert catalog.get("ml.m5.xlarge") is None
    assert catalog.is_known_instance_type("ml.m5.xlarge")
    assert not catalog.is_accelerator("ml.m5.xlarge")
    assert catalog.is_accelerator("ml.inf2.xlarge")
    assert catalog.get("ml.inf2.xlarge").accelerator_kind == "inferentia"
    assert catalog.get("ml.trn2.48xlarge").accelerator_kind == "trainium"
    assert not catalog.is_known_instance_type("ml.g9.xlarge")
    assert catalog.get("ml.g9.xlarge") is None
    assert catalog.get("g6.2xlarge") is None  # SageMaker names carry the ml. prefix; no silent fixing


def test_all_instances_is_sorted_and_complete():
    names = [spec.instance_type for spec in catalog.all_instances()]
    assert names == sorted(names)
    assert all(catalog.get(name).instance_type == name for name in names)


def test_total_accelerator_memory():
    assert catalog.get("ml.g6.12xlarge").total_accelerator_memory_gib == 96
    assert catalog.get("ml.p4de.24xlarge").total_accelerator_memory_gib == 640
    assert catalog.get("ml.inf2.48xlarge").total_accelerator_memory_gib == 384


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("ml.g6.2xlarge", "g6"),
        ("ml.p6-b200.48xlarge", "p6-b200"),
        ("ml.p6e-gb200.36xlarge", "p6e-gb200"),
        ("g6e.xlarge", "g6e"),
        (" ML.Inf2.XLarge ", "inf2"),
    ],
)
def test_family_of(name, family):
    assert catalog.family_of(name) == family


@pytest.mark.parametrize("bad", ["", "ml.", "g6", "ml.g6", "ml.g6."])
def test_family_of_rejects_non_type_names(bad):
    with pytest.raises(ValueError, match="is not an instance type name"):
        catalog.family_of(bad)


def test_suggest_fixes_common_slips():
    assert catalog.suggest("g6.2xlarge")[0] == "ml.g6.2xlarge"
    assert catalog.suggest("ML.G6.2XLARGE")[0] == "ml.g6.2xlarge"
    assert catalog.suggest("ml.g6.2xlarg")[0] == "ml.g6.2xlarge"
    assert "ml.g6e.12xlarge" in catalog.suggest("ml.g6e.12xlarg")
    assert catalog.suggest("ml.p5.48xlarge", n=3)[:1] != ["ml.p5.48xlarge"]  # never "did you mean" itself


def test_suggest_limits():
    assert len(catalog.suggest("ml.g6.xlarge", n=2)) == 2
    assert catalog.suggest("ml.g6.xlarge", n=0) == []
    assert catalog.suggest("completely-unrelated-words") == []
    assert all(catalog.is_known_instance_type(t) for t in catalog.suggest("ml.g5.2xlarge", n=5))


# --- malformed data is reported, not half-loaded ---------------------------------------------------------------


def _doc_with(accelerators_doc: dict, **changes) -> str:
    doc = json.loads(json.dumps(accelerators_doc))
    entry = doc["instances"][0]
    for key, value in changes.items():
        if value is None:
            entry.pop(key)
        else:
            entry[key] = value
    return json.dumps(doc)


def test_parse_accepts_the_committed_file(accelerators_doc):
    doc = catalog._parse_accelerators(json.dumps(accelerators_doc))
    assert len(doc.instances) == len(accelerators_doc["instances"])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"vcpu": 4}, "vcpu"),  # misspelt field
        ({"vcpus": None}, "vcpus"),  # missing field
        ({"vcpus": "4"}, "vcpus"),  # number written as text
        ({"accelerator_kind": "tpu"}, "accelerator_kind"),
        ({"family": "g9"}, "does not match"),
        ({"price_is_estimate": True}, "price_estimates"),
    ],
)
def test_parse_rejects_malformed_entries(accelerators_doc, changes, message):
    with pytest.raises(catalog.CatalogError, match=message):
        catalog._parse_accelerators(_doc_with(accelerators_doc, **changes))


def test_parse_rejects_duplicates(accelerators_doc):
    doc = json.loads(json.dumps(accelerators_doc))
    doc["instances"].append(doc["instances"][0])
    with pytest.raises(catalog.CatalogError, match="listed twice"):
        catalog._parse_accelerators(json.dumps(doc))
