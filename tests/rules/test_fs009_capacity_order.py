import pytest


def test_ordered_counts_pass(run_rule, single_model, components, scale_to_zero):
    for data in (single_model, components, scale_to_zero):
        assert run_rule("FS009", data) == []


@pytest.mark.parametrize(
    ("triple", "bad_key"),
    [
        ({"initial": 5, "min": 1, "max": 4}, "initial"),
        ({"initial": 1, "min": 2, "max": 4}, "initial"),
        ({"initial": 1, "min": 3, "max": 2}, "min"),
        ({"initial": 1, "min": -1, "max": 2}, "min"),
    ],
)
def test_instances_out_of_order(run_rule, hits, single_model, triple, bad_key):
    single_model["endpoints"][0]["instances"] = triple
    assert hits(run_rule("FS009", single_model)) == [("FS009", "error", f"endpoints[0].instances.{bad_key}")]


def test_copies_out_of_order(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][1]["copies"] = {"initial": 6, "min": 1, "max": 4}
    found = run_rule("FS009", components)
    assert hits(found) == [("FS009", "error", "endpoints[0].inference_components[1].copies.initial")]
    assert "between 1 and 4" in found[0].hint


def test_max_zero_is_an_error(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][0]["copies"] = {"initial": 0, "min": 0, "max": 0}
    assert hits(run_rule("FS009", components)) == [("FS009", "error", "endpoints[0].inference_components[0].copies.max")]
