"""The execution role: least privilege, scoped to what the config actually uses."""

from __future__ import annotations

import json

import pytest

from fastscale.infra.config import parse_config
from fastscale.infra.model.naming import all_endpoint_names
from fastscale.stacks.role import execution_policy, trust_policy
from fastscale.stacks.testing import Match
from tests.stacks.conftest import component_config


def policy_of(data: dict) -> dict:
    config = parse_config(data)
    return execution_policy(config, all_endpoint_names(config)[0])


def statements(policy: dict, action: str) -> list[dict]:
    def actions(s):
        a = s["Action"]
        return [a] if isinstance(a, str) else a

    return [s for s in policy["Statement"] if action in actions(s)]


def resources(statement: dict) -> list[str]:
    r = statement["Resource"]
    return [r] if isinstance(r, str) else r


def test_only_ecr_login_has_an_unconditioned_wildcard_resource(examples):
    for stack in examples.values():
        policy = stack.policy()
        for s in policy["Statement"]:
            assert s["Effect"] == "Allow"
            if "*" in resources(s):
                assert s["Action"] == "ecr:GetAuthorizationToken" or "Condition" in s, s
        (login,) = statements(policy, "ecr:GetAuthorizationToken")
        assert login["Resource"] == "*" and login["Action"] == "ecr:GetAuthorizationToken"
        # the metric statement is the other "*", held to SageMaker's namespaces
        (metrics,) = statements(policy, "cloudwatch:PutMetricData")
        assert set(metrics["Condition"]["StringLike"]["cloudwatch:namespace"]) <= {"/aws/sagemaker/*", "AWS/SageMaker"}


def test_ecr_pull_is_scoped_to_the_image_repositories():
    data = component_config()
    other = "111122223333.dkr.ecr.eu-west-1.amazonaws.com/team/vllm@sha256:" + "a" * 64
    data["endpoints"][0]["inference_components"].append(
        {"name": "other", "image": other, "resources": {"memory_mb": 1024}}
    )
    (pull,) = statements(policy_of(data), "ecr:BatchGetImage")
    assert sorted(resources(pull)) == [
        "arn:aws:ecr:eu-west-1:111122223333:repository/team/vllm",
        "arn:aws:ecr:us-east-1:763104351884:repository/djl-inference",
    ]
    assert set(pull["Action"]) == {"ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"}


def test_s3_read_is_scoped_to_the_model_prefixes(examples):
    policy = examples["multi-model"].policy()
    (read,) = statements(policy, "s3:GetObject")
    assert sorted(resources(read)) == [
        "arn:aws:s3:::assist-models/llama-3-8b-instruct/*",
        "arn:aws:s3:::assist-models/mistral-7b-instruct/*",
        "arn:aws:s3:::assist-models/qwen3-8b/*",
    ]
    (listing,) = statements(policy, "s3:ListBucket")
    assert listing["Resource"] == "arn:aws:s3:::assist-models"
    prefixes = listing["Condition"]["StringLike"]["s3:prefix"]
    assert "qwen3-8b/*" in prefixes and "qwen3-8b/" in prefixes and "*" not in prefixes


def test_s3_object_model_reads_only_that_object():
    policy = policy_of(component_config(model_data="s3://bucket/models/qwen.tar.gz"))
    (read,) = statements(policy, "s3:GetObject")
    assert resources(read) == ["arn:aws:s3:::bucket/models/qwen.tar.gz"]
    assert not statements(policy, "s3:ListBucket")


def test_logs_are_scoped_to_the_endpoint_and_components():
    (logs,) = statements(policy_of(component_config()), "logs:PutLogEvents")
    groups = {r.split(":log-group:")[1].split(":log-stream:")[0] for r in resources(logs)}
    assert groups == {"/aws/sagemaker/Endpoints/demo-chat", "/aws/sagemaker/InferenceComponents/demo-qwen"}


def test_kms_only_when_a_key_is_set():
    assert not statements(policy_of(component_config()), "kms:Decrypt")
    data = component_config()
    key = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
    data["endpoints"][0]["kms_key_arn"] = key
    (kms,) = statements(policy_of(data), "kms:Decrypt")
    assert resources(kms) == [key]
    assert "kms:CreateGrant" not in kms["Action"]
    (grant,) = statements(policy_of(data), "kms:CreateGrant")
    assert resources(grant) == [key]
    assert grant["Condition"] == {"Bool": {"kms:GrantIsForAWSResource": "true"}}


def test_vpc_permissions_only_with_a_vpc():
    assert not statements(policy_of(component_config()), "ec2:CreateNetworkInterface")
    data = component_config()
    data["endpoints"][0]["vpc"] = {"subnets": ["subnet-1"], "security_groups": ["sg-1"]}
    policy = policy_of(data)
    eni = "arn:aws:ec2:us-east-1:*:network-interface/*"
    in_subnet = {"ArnLike": {"ec2:Subnet": ["arn:aws:ec2:us-east-1:*:subnet/subnet-1"]}}
    interface, placement = statements(policy, "ec2:CreateNetworkInterface")
    # Interfaces only in the endpoint's subnets; the subnet and security group themselves by ARN.
    assert (resources(interface), interface["Condition"]) == ([eni], in_subnet)
    assert resources(placement) == ["arn:aws:ec2:us-east-1:*:subnet/subnet-1", "arn:aws:ec2:us-east-1:*:security-group/sg-1"]
    assert "Condition" not in placement
    for action in ("ec2:DeleteNetworkInterface", "ec2:CreateNetworkInterfacePermission"):
        (manage,) = statements(policy, action)
        assert (resources(manage), manage["Condition"]) == ([eni], in_subnet)
    (describe,) = statements(policy, "ec2:DescribeSubnets")
    assert describe["Condition"] == {"StringEquals": {"aws:RequestedRegion": "us-east-1"}}


def test_china_region_uses_its_partition():
    data = component_config()
    data["region"] = "cn-north-1"
    data["endpoints"][0]["inference_components"][0]["image"] = "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/llm:1"
    policy = policy_of(data)
    arns = [r for s in policy["Statement"] for r in resources(s) if r != "*"]
    assert arns and all(a.startswith("arn:aws-cn:") for a in arns)


def test_role_trusts_sagemaker_only_and_has_no_managed_policy(examples):
    account = "${data.aws_caller_identity.caller.account_id}"
    assert trust_policy("eu-west-1", "111122223333")["Statement"] == [
        {"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole",
         "Condition": {"ArnLike": {"aws:SourceArn": "arn:aws:sagemaker:eu-west-1:111122223333:*"}}}
    ]
    for stack in examples.values():
        role = stack.one("aws_iam_role")
        # The account is the one Terraform deploys into, read by the stack's one caller-identity data source.
        stack.template.has_resource_properties("aws_iam_role", {
            "assume_role_policy": Match.serialized_json(trust_policy(stack.config.region, account)),
            "managed_policy_arns": Match.absent(),
        })
        assert list(stack.doc["data"]) == ["aws_caller_identity"] and list(stack.doc["data"]["aws_caller_identity"]) == ["caller"]
        assert not stack.of_type("aws_iam_role_policy_attachment")
        assert "FullAccess" not in json.dumps(stack.doc)
        assert role["name"] == all_endpoint_names(stack.config)[0].execution_role
        policy = stack.one("aws_iam_role_policy")
        assert policy["role"] == "${{aws_iam_role.{}.name}}".format(next(iter(stack.of_type("aws_iam_role"))))


@pytest.mark.parametrize("example", ["qwen3-8b", "multi-model", "inferentia"])
def test_inline_policy_fits_iam_limit(examples, example):
    assert len(examples[example].one("aws_iam_role_policy")["policy"]) < 10240




def test_secrets_are_readable_exactly_and_decryptable_only_through_secrets_manager():
    full = "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token-AbCdEf"
    partial = "arn:aws:secretsmanager:us-east-1:123456789012:secret:db"
    key = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
    data = component_config(secrets={"HF_TOKEN": full, "DB_PASS": {"arn": partial, "kms_key_arn": key}})
    policy = policy_of(data)
    (read,) = statements(policy, "secretsmanager:GetSecretValue")
    assert read["Action"] == "secretsmanager:GetSecretValue"  # nothing else of Secrets Manager
    assert resources(read) == [f"{partial}-??????", full]
    (decrypt,) = statements(policy, "kms:Decrypt")
    assert decrypt["Action"] == "kms:Decrypt" and resources(decrypt) == [key]
    assert decrypt["Condition"] == {"StringEquals": {"kms:ViaService": "secretsmanager.us-east-1.amazonaws.com"}}


def test_model_data_under_a_customer_key_is_decryptable_only_through_s3_in_the_keys_region():
    key = "arn:aws:kms:eu-west-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
    policy = policy_of(component_config(model_data_kms_key_arn=key))
    (decrypt,) = statements(policy, "kms:Decrypt")
    assert decrypt["Action"] == "kms:Decrypt" and resources(decrypt) == [key]  # nothing else of KMS
    assert decrypt["Condition"] == {"StringEquals": {"kms:ViaService": "s3.eu-west-1.amazonaws.com"}}


def test_no_model_data_key_statement_without_the_setting():
    assert statements(policy_of(component_config()), "kms:Decrypt") == []


@pytest.mark.parametrize("value", ["alias/models", "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d",
                                   "arn:aws:kms:us-east-1:123456789012:alias/models"])
def test_a_model_data_key_must_be_a_key_arn(value):
    from fastscale.infra.config import ConfigError

    with pytest.raises(ConfigError, match=r"inference_components\[0\]\.model_data_kms_key_arn: .* is not a KMS key ARN"):
        parse_config(component_config(model_data_kms_key_arn=value))


def test_no_secret_statements_without_secrets():
    policy = policy_of(component_config())
    assert statements(policy, "secretsmanager:GetSecretValue") == [] and statements(policy, "kms:Decrypt") == []


def test_roles_of_several_endpoints_share_one_caller_identity(base_config, synth_dict):
    second = json.loads(json.dumps(base_config["endpoints"][0]))
    second["name"] = "chat2"
    base_config["endpoints"].append(second)
    stack = synth_dict(base_config)
    assert list(stack.doc["data"]["aws_caller_identity"]) == ["caller"]
    roles = stack.of_type("aws_iam_role").values()
    assert len(roles) == 2
    for role in roles:
        condition = json.loads(role["assume_role_policy"])["Statement"][0]["Condition"]
        # AWS's inference form: the account is in the source ARN, and no aws:SourceAccount condition that
        # SageMaker might not send (security-confused-deputy-prevention.html#security-confused-deputy-inference)
        assert condition == {"ArnLike": {"aws:SourceArn": "arn:aws:sagemaker:us-east-1:${data.aws_caller_identity.caller.account_id}:*"}}
