from __future__ import annotations

import pytest


@pytest.mark.parametrize("uri", ["s3://my-models/qwen3-8b/", "s3://my-models/qwen3-8b/model.tar.gz",
                                 "s3://my.models-1/Qwen/Qwen3-8B/"])
def test_s3_uris_pass(run_rule, single_model, uri):
    single_model["endpoints"][0]["model"]["model_data"] = uri
    assert run_rule("FS076", single_model) == []


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("file:///etc/passwd", "file:// URL"),
        ("/etc/passwd", "not a URL"),
        ("https://my-models.s3.amazonaws.com/model.tar.gz", "web URL"),
        ("http://169.254.169.254/latest/meta-data/", "web URL"),
        ("S3://my-models/x/", "lower case"),
        ("s3://My_Models/x/", "bucket name"),
        ("s3://ab/x/", "bucket name"),
        ("s3://" + "m" * 1030, "more than the 1024"),
    ],
)
def test_anything_else_is_an_error(run_rule, hits, single_model, uri, why):
    single_model["endpoints"][0]["model"]["model_data"] = uri
    found = run_rule("FS076", single_model)
    assert hits(found) == [("FS076", "error", "endpoints[0].model.model_data")]
    assert why in found[0].message
    assert "s3://<bucket>/" in found[0].hint


def test_fallback_overrides_are_checked(run_rule, hits, components):
    ep = components["endpoints"][0]
    ep["capacity"] = {"fallback": [{"instance_type": "ml.g5.12xlarge",
                                    "components": {"qwen": {"model_data": "file:///root/.aws/credentials"}}}]}
    assert hits(run_rule("FS076", components)) == [
        ("FS076", "error", "endpoints[0].capacity.fallback[0].components.qwen.model_data")]
