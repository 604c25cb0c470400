"""Instance pools and what runs on each: the one decision rules, stacks, verification and estimates share."""

from __future__ import annotations

from fastscale.infra.aws.clients import AwsClients
from fastscale.infra.aws.inventory import Scan
from fastscale.infra.config import load_config, parse_config
from fastscale.infra.model import capacity
from fastscale.infra.model.naming import endpoint_names
from fastscale.infra.model.resolved import resolve
from tests.conftest import ROOT
from tests.rules.conftest import components_config, single_model_config

FALLBACK = ROOT / "examples" / "capacity-fallback.yaml"


def test_pools_default_priorities_follow_the_list_and_sort_by_priority():
    data = components_config()
    data["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.12xlarge", "priority": 4},
                                                     {"instance_type": "ml.g6e.12xlarge"}]}
    ep = parse_config(data).endpoints[0]
    assert [(p.priority, p.instance_type, p.path) for p in capacity.pools(ep)] == [
        (1, "ml.g6.12xlarge", "instance_type"), (4, "ml.g5.12xlarge", "capacity.fallback[0]"),
        (3, "ml.g6e.12xlarge", "capacity.fallback[1]")]
    assert [p.priority for p in capacity.pools_by_priority(ep)] == [1, 3, 4]
    assert capacity.has_pools(ep) and capacity.needs_awscc_config(ep)


def test_no_pools_unless_asked():
    ep = parse_config(single_model_config()).endpoints[0]
    assert not capacity.has_pools(ep) and not capacity.needs_awscc_config(ep)
    assert capacity.instance_types(ep) == ["ml.g6.2xlarge"]


def test_overrides_replace_only_what_they_set():
    ep = load_config(FALLBACK).endpoints[0]
    comp = ep.inference_components[0]
    g5, g6e = capacity.pools(ep)[1:]
    assert capacity.component_on(g5, comp) == comp
    on_g6e = capacity.component_on(g6e, comp)
    assert on_g6e.resources.accelerators == 1 and on_g6e.environment["OPTION_TENSOR_PARALLEL_DEGREE"] == "1"
    assert (on_g6e.image, on_g6e.model_data, on_g6e.model_size_gb) == (comp.image, comp.model_data, comp.model_size_gb)
    assert capacity.every_workload(ep) == [comp, on_g6e]


def test_pool_models_are_named_and_torn_down_with_the_endpoint():
    config = load_config(FALLBACK)
    names = endpoint_names(config, config.endpoints[0])
    (extra,) = names.pool_models
    assert extra.startswith("support-qwen3-14b-") and extra != names.components[0].model
    # The teardown inventory looks for it by its exact name (no AWS call is made here).
    assert Scan(AwsClients(config.region), resolve(config)).wanted("model")[extra.lower()] == "endpoints[0].capacity.fallback"
    single = parse_config(single_model_config())
    assert endpoint_names(single, single.endpoints[0]).pool_models == []
