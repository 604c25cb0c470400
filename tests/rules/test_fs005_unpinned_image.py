import pytest

REPO = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm"


@pytest.mark.parametrize(
    "image",
    [
        f"{REPO}:1.0",
        f"{REPO}@sha256:" + "a" * 64,
        f"{REPO}:latest@sha256:" + "a" * 64,  # the digest pins, whatever the tag says
        "localhost:5000/llm:2.1",  # a registry port is not a tag
    ],
)
def test_pinned_images_pass(run_rule, single_model, image):
    single_model["endpoints"][0]["model"]["image"] = image
    assert run_rule("FS005", single_model) == []


@pytest.mark.parametrize("image", [f"{REPO}:latest", f"{REPO}:LATEST", REPO, "localhost:5000/llm"])
def test_latest_or_missing_tag_warns(run_rule, hits, single_model, image):
    single_model["endpoints"][0]["model"]["image"] = image
    found = run_rule("FS005", single_model)
    assert hits(found) == [("FS005", "warning", "endpoints[0].model.image")]
    assert "@sha256:" in found[0].hint
    assert "latest" not in found[0].hint.lower()  # the suggestion replaces the tag instead of appending to it
