"""infra.config.partial: the valid rest of a config with schema errors, and paths as the file spells them."""

from __future__ import annotations

from fastscale.infra.config import partial_config


def _endpoint(name: str, **extra) -> dict:
    return {"name": name, "instance_type": "ml.g6.2xlarge", "instances": {"initial": 1, "min": 1, "max": 2},
            "model": {"image": "763104351884.dkr.ecr.us-east-1.amazonaws.com/x:1", "model_data": "s3://b/m/",
                      "model_size_gb": 1}, **extra}


def _config(*endpoints: dict) -> dict:
    return {"project": "p", "region": "us-east-1", "endpoints": list(endpoints)}


def test_a_list_item_left_out_keeps_the_file_indexes_of_the_others():
    bad = _endpoint("b")
    del bad["instance_type"]
    partial = partial_config(_config(_endpoint("a"), bad, _endpoint("c"), {"name": "d"}, _endpoint("e")))
    assert partial is not None
    assert [e.name for e in partial.config.endpoints] == ["a", "c", "e"]
    assert partial.left_out == ("endpoints[1]", "endpoints[3]")
    assert partial.file_path("endpoints[1].instances.max") == "endpoints[2].instances.max"
    assert partial.file_path("endpoints[2]") == "endpoints[4]"
    assert partial.covers("endpoints[3].name") and not partial.covers("endpoints[2].name")


def test_a_bad_key_with_a_default_takes_its_default_and_keeps_its_mapping():
    partial = partial_config(_config(_endpoint("a", colour="blue", startup_health_check_timeout="slow")))
    assert partial is not None and [e.name for e in partial.config.endpoints] == ["a"]
    assert set(partial.left_out) == {"endpoints[0].colour", "endpoints[0].startup_health_check_timeout"}


def test_nothing_to_check_without_the_required_top_level_keys():
    assert partial_config({"project": "p"}) is None
    assert partial_config(_config({"name": "only-a-name"})) is None  # no endpoint left: endpoints must not be empty
