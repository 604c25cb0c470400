from __future__ import annotations

import json

import pytest

from fastscale.infra.aws.preflight import check_artifacts
from fastscale.infra.base.artifacts import parse_image
from fastscale.infra.model.resolved import resolve
from fastscale.infra.rules import Severity
from tests.aws.factories import ACCOUNT, REGION, component_config, single_model_config, stubbed

REPO_URI = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/djl-inference"
DIGEST = "sha256:" + "ab" * 32


def _push(ecr, tag: str = "0.33.0") -> str:
    ecr.create_repository(repositoryName="djl-inference")
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "size": 7023, "digest": DIGEST},
        "layers": [],
    }
    return ecr.put_image(repositoryName="djl-inference", imageManifest=json.dumps(manifest), imageTag=tag)["image"]["imageId"][
        "imageDigest"
    ]


def _bucket(s3, *keys: str) -> None:
    s3.create_bucket(Bucket="demo-models")
    for key in keys:
        s3.put_object(Bucket="demo-models", Key=key, Body=b"weights")


def codes(findings) -> list[tuple[str, str, str]]:
    return [(f.code, f.severity.value, f.path) for f in findings]


def test_image_and_prefix_present(aws):
    _push(aws["ecr"])
    _bucket(aws["s3"], "qwen3/config.json", "qwen3/model.safetensors")
    config = single_model_config(image=f"{REPO_URI}:0.33.0", model_data="s3://demo-models/qwen3/")
    assert check_artifacts(resolve(config), clients=aws) == []


def test_missing_tag_is_an_error(aws):
    _push(aws["ecr"], tag="0.33.0")
    _bucket(aws["s3"], "qwen3/config.json")
    findings = check_artifacts(resolve(single_model_config(image=f"{REPO_URI}:0.34.0", model_data="s3://demo-models/qwen3/")), clients=aws)
    assert codes(findings) == [("FS900", "error", "endpoints[0].model.image")]
    assert ":0.34.0 does not exist in repository djl-inference" in findings[0].message


def test_missing_repository_is_an_error(aws):
    _bucket(aws["s3"], "qwen3/config.json")
    findings = check_artifacts(resolve(single_model_config(image=f"{REPO_URI}:0.33.0", model_data="s3://demo-models/qwen3/")), clients=aws)
    assert codes(findings) == [("FS900", "error", "endpoints[0].model.image")]
    assert "does not exist" in findings[0].message


def test_image_by_digest(aws):
    digest = _push(aws["ecr"])
    _bucket(aws["s3"], "qwen3/config.json")
    ok = single_model_config(image=f"{REPO_URI}@{digest}", model_data="s3://demo-models/qwen3/")
    assert check_artifacts(resolve(ok), clients=aws) == []
    wrong = single_model_config(image=f"{REPO_URI}@sha256:{'0' * 64}", model_data="s3://demo-models/qwen3/")
    assert codes(check_artifacts(resolve(wrong), clients=aws)) == [("FS900", "error", "endpoints[0].model.image")]


def test_empty_prefix_is_an_error(aws):
    _push(aws["ecr"])
    _bucket(aws["s3"], "other/config.json", "qwen3-old/config.json")
    findings = check_artifacts(resolve(single_model_config(image=f"{REPO_URI}:0.33.0", model_data="s3://demo-models/qwen3/")), clients=aws)
    assert codes(findings) == [("FS901", "error", "endpoints[0].model.model_data")]
    assert "no objects under s3://demo-models/qwen3/" in findings[0].message


def test_object_present_and_missing(aws):
    _push(aws["ecr"])
    _bucket(aws["s3"], "qwen3/model.tar.gz")
    image = f"{REPO_URI}:0.33.0"
    assert check_artifacts(resolve(single_model_config(image=image, model_data="s3://demo-models/qwen3/model.tar.gz")), clients=aws) == []
    findings = check_artifacts(resolve(single_model_config(image=image, model_data="s3://demo-models/qwen3/other.tar.gz")), clients=aws)
    assert codes(findings) == [("FS901", "error", "endpoints[0].model.model_data")]


def test_prefix_without_trailing_slash_gets_a_hint(aws):
    _push(aws["ecr"])
    _bucket(aws["s3"], "qwen3/config.json")
    findings = check_artifacts(resolve(single_model_config(image=f"{REPO_URI}:0.33.0", model_data="s3://demo-models/qwen3")), clients=aws)
    assert codes(findings) == [("FS901", "error", "endpoints[0].model.model_data")]
    assert "s3://demo-models/qwen3/" in findings[0].hint


def test_missing_bucket_is_an_error(aws):
    _push(aws["ecr"])
    findings = check_artifacts(resolve(single_model_config(image=f"{REPO_URI}:0.33.0", model_data="s3://demo-models/qwen3/")), clients=aws)
    assert codes(findings) == [("FS901", "error", "endpoints[0].model.model_data")]
    assert "bucket demo-models does not exist" in findings[0].message


def test_each_artifact_is_checked_once_and_reported_at_its_first_use(aws):
    # Both components share the image; neither model location exists.
    _push(aws["ecr"])
    aws["s3"].create_bucket(Bucket="demo-models")
    findings = check_artifacts(resolve(component_config()), clients=aws)
    assert codes(findings) == [
        ("FS901", "error", "endpoints[0].inference_components[0].model_data"),
        ("FS901", "error", "endpoints[0].inference_components[1].model_data"),
    ]


def test_other_accounts_registry_is_checked_with_batch_get_image():
    # AWS Deep Learning Containers allow pulls but not DescribeImages.
    uri = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
    ecr, stub = stubbed("ecr")
    s3, s3_stub = stubbed("s3")
    params = {"registryId": "763104351884", "repositoryName": "djl-inference", "imageIds": [{"imageTag": "0.33.0-lmi15.0.0-cu128"}]}
    stub.add_client_error("describe_images", "AccessDeniedException", "not authorized to perform ecr:DescribeImages", 400, params)
    stub.add_response("batch_get_image", {"images": [{"imageId": params["imageIds"][0], "imageManifest": "{}"}], "failures": []})
    s3_stub.add_response("list_objects_v2", {"KeyCount": 1, "Contents": [{"Key": "qwen3/config.json"}]})
    config = single_model_config(image=uri, model_data="s3://demo-models/qwen3/")
    assert check_artifacts(resolve(config), clients={"ecr": ecr, "s3": s3}) == []
    stub.assert_no_pending_responses()

    stub.add_client_error("describe_images", "AccessDeniedException", "denied", 400)
    stub.add_response(
        "batch_get_image",
        {"images": [], "failures": [{"imageId": params["imageIds"][0], "failureCode": "ImageNotFound", "failureReason": "Requested image not found"}]},
    )
    s3_stub.add_response("list_objects_v2", {"KeyCount": 1, "Contents": [{"Key": "qwen3/config.json"}]})
    findings = check_artifacts(resolve(config), clients={"ecr": ecr, "s3": s3})
    assert codes(findings) == [("FS900", "error", "endpoints[0].model.image")]
    assert "ImageNotFound" in findings[0].message


def test_no_permission_to_look_is_a_warning_not_an_error():
    ecr, stub = stubbed("ecr")
    s3, s3_stub = stubbed("s3")
    stub.add_client_error("describe_images", "AccessDeniedException", "denied", 400)
    stub.add_client_error("batch_get_image", "AccessDeniedException", "denied", 400)
    s3_stub.add_client_error("list_objects_v2", "AccessDenied", "Access Denied", 403)
    findings = check_artifacts(resolve(single_model_config(image=f"{REPO_URI}:1", model_data="s3://demo-models/qwen3/")), clients={"ecr": ecr, "s3": s3})
    assert [(f.code, f.severity) for f in findings] == [("FS900", Severity.WARNING), ("FS901", Severity.WARNING)]
    assert all("could not check" in f.message for f in findings)


def test_images_outside_ecr_and_non_s3_data_are_left_to_the_rules():
    ecr, stub = stubbed("ecr")  # any call would fail: nothing is queued
    config = single_model_config(image="ghcr.io/vllm/vllm-openai:v0.6.0", model_data=None)
    assert check_artifacts(resolve(config), clients={"ecr": ecr}) == []


@pytest.mark.parametrize(
    "uri,expected",
    [
        (f"{REPO_URI}:1.0", ("djl-inference", "1.0", None)),
        (f"{REPO_URI}", ("djl-inference", None, None)),
        (f"{REPO_URI}@{DIGEST}", ("djl-inference", None, DIGEST)),
        (f"{ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com/team/model-server:v2", ("team/model-server", "v2", None)),
    ],
)
def test_parse_ecr_image(uri, expected):
    image = parse_image(uri)
    assert image.is_ecr
    assert (image.repository, image.tag, image.digest) == expected
    # an untagged reference is pulled as 'latest'; a digest wins over any tag
    assert image.image_id == ({"imageDigest": DIGEST} if image.digest else {"imageTag": image.tag or "latest"})


def test_parse_ecr_image_rejects_other_registries():
    assert not parse_image("docker.io/library/python:3.11").is_ecr


def test_without_credentials_the_check_says_what_to_do_instead_of_a_botocore_error(no_credentials):
    from fastscale.infra.aws.clients import AwsError

    with pytest.raises(AwsError, match="no usable AWS credentials.*AWS_PROFILE"):
        check_artifacts(resolve(single_model_config()))
