import pytest


def _res(data, j=0):
    return data["endpoints"][0]["inference_components"][j]["resources"]


def test_fitting_resources_pass(run_rule, components):
    assert run_rule("FS006", components) == []
    _res(components).update(accelerators=4, memory_mb=192 * 1024 - 4096, cpus=48)  # exactly one ml.g6.12xlarge
    assert run_rule("FS006", components) == []


@pytest.mark.parametrize(
    ("key", "value", "limit"),
    [("accelerators", 5, "4"), ("memory_mb", 200_000, "196608"), ("max_memory_mb", 200_000, "196608"), ("cpus", 64, "48")],
)
def test_exceeding_one_instance_is_an_error(run_rule, hits, components, key, value, limit):
    _res(components, 1)[key] = value
    found = run_rule("FS006", components)
    assert hits(found) == [("FS006", "error", f"endpoints[0].inference_components[1].resources.{key}")]
    assert limit in found[0].message
    assert "ml.g6.12xlarge" in found[0].message


@pytest.mark.parametrize(
    ("key", "value"), [("accelerators", 0), ("memory_mb", 64), ("cpus", 0.1)]
)
def test_below_api_minimum_is_an_error(run_rule, hits, components, key, value):
    _res(components)[key] = value
    assert hits(run_rule("FS006", components)) == [("FS006", "error", f"endpoints[0].inference_components[0].resources.{key}")]


def test_max_memory_below_memory_is_an_error(run_rule, hits, components):
    _res(components)["max_memory_mb"] = 16384
    found = run_rule("FS006", components)
    assert hits(found) == [("FS006", "error", "endpoints[0].inference_components[0].resources.max_memory_mb")]
    assert "32768" in found[0].hint


def test_accelerators_on_a_cpu_type_is_an_error(run_rule, hits, components):
    components["endpoints"][0]["instance_type"] = "ml.m5.4xlarge"
    found = run_rule("FS006", components)
    assert hits(found) == [
        ("FS006", "error", "endpoints[0].inference_components[0].resources.accelerators"),
        ("FS006", "error", "endpoints[0].inference_components[1].resources.accelerators"),
    ]


def test_unknown_type_only_gets_the_api_floor_checks(run_rule, components):
    components["endpoints"][0]["instance_type"] = "ml.g6.2xlarg"
    _res(components)["accelerators"] = 99
    assert run_rule("FS006", components) == []
