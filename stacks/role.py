"""The least-privilege execution role SageMaker assumes to run an endpoint's models.

The role can do exactly what serving needs and nothing else:

- pull the endpoint's images: `ecr:GetAuthorizationToken` (account-wide by nature, see below) and the
  layer/manifest reads on the image repositories actually used;
- read the model data: `s3:GetObject` under each model prefix (or on each model object) and `s3:ListBucket`
  on each bucket, limited by an `s3:prefix` condition to those prefixes;
- write the endpoint's (and its inference components') CloudWatch Logs;
- publish the endpoint's instance metrics to the SageMaker CloudWatch namespaces;
- read exactly the Secrets Manager secrets listed in the workloads' `secrets` (and decrypt them through
  Secrets Manager with their KMS key, when one is given);
- decrypt the model data through S3 with the customer managed KMS key a workload names
  (`model_data_kms_key_arn`: `kms:Decrypt` on that key with `kms:ViaService` `s3.<region>.amazonaws.com`);
- use the endpoint's KMS key, only when one is configured, and create grants on it only for AWS
  resources (`kms:GrantIsForAWSResource`);
- manage the network interfaces of a VPC endpoint, only when a VPC is configured, and only interfaces in
  the endpoint's subnets (`ec2:Subnet`).

Only SageMaker, acting for a resource of this account in this region, may assume the role: the trust
policy is AWS's documented form for SageMaker AI inference (real-time, serverless, asynchronous), one
`ArnLike aws:SourceArn arn:<partition>:sagemaker:<region>:<account>:*` condition, with the account read at
deploy time from `data.aws_caller_identity`. See :data:`CONFUSED_DEPUTY_DOC`.

No AWS managed policy is attached (the usual `AmazonSageMakerFullAccess` would let the model container
create and delete any SageMaker resource). The account id is not known at synthesis time; where an ARN
needs one it is `*`, which only widens to other accounts' resources that IAM would not let this role
touch without their own resource policies anyway.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from fastscale.infra.base.artifacts import parse_image, parse_s3_uri
from fastscale.infra.base.aws_facts import NS_INVOCATIONS
from fastscale.infra.base.regions import partition_of
from fastscale.infra.config import EndpointSpec, FastscaleConfig
from fastscale.infra.config.secrets import parse_kms_key_arn, policy_resource
from fastscale.infra.model import capacity
from fastscale.infra.model.naming import EndpointNames, tags
from fastscale.stacks.resources.base import Group, Ref, Scope, json_text, resource_stack, tf_format
from fastscale.stacks.resources.generated.aws import IamRolePolicyProps, IamRoleProps
from fastscale.stacks.resources.iam import CALLER_IDENTITY_ID, CallerIdentity, IamRole, IamRolePolicy

SAGEMAKER_PRINCIPAL = "sagemaker.amazonaws.com"
POLICY_VERSION = "2012-10-17"

ECR_PULL_ACTIONS = ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"]
LOG_ACTIONS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
KMS_ACTIONS = ["kms:Decrypt", "kms:DescribeKey", "kms:GenerateDataKey"]
#: Namespaces SageMaker publishes an endpoint's instance and container metrics to with this role.
METRIC_NAMESPACES = ["/aws/sagemaker/*", NS_INVOCATIONS]


def partition(region: str) -> str:
    """The region's partition (aws, aws-cn, aws-us-gov), from botocore's endpoint data like the rules'."""
    return partition_of(region)


#: AWS's cross-service confused-deputy guidance for SageMaker AI inference. Its example trust policy has
#: `ArnLike aws:SourceArn arn:aws:sagemaker:<region>:<account>:*` alone: "because the account number is part
#: of the aws:SourceArn value, you do not need to specify an aws:SourceAccount value", and the ARN must not
#: be narrowed to one model's or endpoint's. No AWS text says SageMaker sets aws:SourceAccount when it
#: assumes an endpoint's role; a StringEquals on a key the service does not send denies the AssumeRole, so
#: the documented form is kept exactly.
CONFUSED_DEPUTY_DOC = (
    "https://docs.aws.amazon.com/sagemaker/latest/dg/security-confused-deputy-prevention.html"
    "#security-confused-deputy-inference"
)


def trust_policy(region: str, account: str) -> dict[str, Any]:
    """SageMaker may assume the role only on behalf of a SageMaker resource of ``account`` in ``region``
    (AWS's documented inference form, :data:`CONFUSED_DEPUTY_DOC`)."""
    return {
        "Version": POLICY_VERSION,
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": SAGEMAKER_PRINCIPAL},
                "Action": "sts:AssumeRole",
                "Condition": {
                    # The account is a reference: tf_format keeps it one (an f-string would make it literal text).
                    "ArnLike": {"aws:SourceArn": tf_format("arn:{}:sagemaker:{}:{}:*", partition(region), region, account)},
                },
            }
        ],
    }


def deploying_account(scope: Scope) -> Ref:
    """A reference to the account id, from the one caller-identity data source of the stack."""
    return resource_stack(scope).shared(CALLER_IDENTITY_ID, CallerIdentity.of_stack).attr("account_id")


def execution_policy(config: FastscaleConfig, names: EndpointNames) -> dict[str, Any]:
    """The inline policy document of one endpoint's execution role (a pure function of the config)."""
    ep: EndpointSpec = names.spec
    part, region = partition(config.region), config.region
    # Every pool's workloads: a fallback type may run another image or model data.
    workloads = capacity.every_workload(ep)
    statements: list[dict[str, Any]] = []

    # GetAuthorizationToken has no resource-level permissions: IAM only accepts "*" for it. The token alone
    # grants nothing; every pull is still checked against the repository statement below. This is the
    # only statement with "*" as its resource and no condition.
    statements.append({"Sid": "EcrLogin", "Effect": "Allow", "Action": "ecr:GetAuthorizationToken", "Resource": "*"})

    repositories = set()
    for w in workloads:
        ref = parse_image(w.image)
        if ref.ecr_region is not None:  # an ECR image
            repositories.add(f"arn:{partition(ref.ecr_region)}:ecr:{ref.ecr_region}:{ref.ecr_account}:repository/{ref.repository}")
    if repositories:
        statements.append({"Sid": "EcrPullModelImages", "Effect": "Allow", "Action": ECR_PULL_ACTIONS,
                           "Resource": sorted(repositories)})

    objects: set[str] = set()
    listed_prefixes: dict[str, set[str]] = defaultdict(set)
    for w in workloads:
        loc = parse_s3_uri(w.model_data) if w.model_data else None
        if loc is None:
            continue
        if loc.is_prefix:
            objects.add(f"arn:{part}:s3:::{loc.bucket}/{loc.key}*")
            listed_prefixes[loc.bucket].update({loc.key, f"{loc.key}*"} if loc.key else {"*"})
        else:
            objects.add(f"arn:{part}:s3:::{loc.bucket}/{loc.key}")
    if objects:
        statements.append({"Sid": "ReadModelData", "Effect": "Allow", "Action": "s3:GetObject", "Resource": sorted(objects)})
    for i, bucket in enumerate(sorted(listed_prefixes)):
        statements.append({
            "Sid": f"ListModelPrefixes{i}",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": f"arn:{part}:s3:::{bucket}",
            "Condition": {"StringLike": {"s3:prefix": sorted(listed_prefixes[bucket])}},
        })

    log_groups = [f"/aws/sagemaker/Endpoints/{names.endpoint}"]
    log_groups += [f"/aws/sagemaker/InferenceComponents/{c.name}" for c in names.components]
    log_resources = []
    for group in log_groups:
        arn = f"arn:{part}:logs:{region}:*:log-group:{group}"
        log_resources += [arn, f"{arn}:log-stream:*"]
    statements.append({"Sid": "WriteEndpointLogs", "Effect": "Allow", "Action": LOG_ACTIONS, "Resource": log_resources})

    # PutMetricData has no resource-level permissions either; the namespace condition is what limits it.
    statements.append({
        "Sid": "PublishEndpointMetrics",
        "Effect": "Allow",
        "Action": "cloudwatch:PutMetricData",
        "Resource": "*",
        "Condition": {"StringLike": {"cloudwatch:namespace": METRIC_NAMESPACES}},
    })

    secrets = {ref.arn: ref for w in workloads for ref in w.secrets.values()}
    if secrets:
        # Exactly the secrets the containers are told about; their values never pass through Terraform.
        statements.append({"Sid": "ReadContainerSecrets", "Effect": "Allow", "Action": "secretsmanager:GetSecretValue",
                           "Resource": sorted({policy_resource(arn) for arn in secrets})})
        secret_keys = sorted({ref.kms_key_arn for ref in secrets.values() if ref.kms_key_arn})
        if secret_keys:
            statements.append({"Sid": "DecryptContainerSecrets", "Effect": "Allow", "Action": "kms:Decrypt",
                               "Resource": secret_keys,
                               "Condition": {"StringEquals": {"kms:ViaService": f"secretsmanager.{region}.amazonaws.com"}}})

    # Model data under a customer managed key (SSE-KMS): S3 decrypts it for the role, so the role may use the key
    # only through S3, in the key's region (an SSE-KMS key is in its bucket's region).
    data_keys = sorted({w.model_data_kms_key_arn for w in workloads if w.model_data_kms_key_arn})
    for i, key in enumerate(data_keys):
        parsed = parse_kms_key_arn(key)
        assert parsed is not None  # the config checked the form
        statements.append({"Sid": f"DecryptModelData{i}", "Effect": "Allow", "Action": "kms:Decrypt", "Resource": key,
                           "Condition": {"StringEquals": {"kms:ViaService": f"s3.{parsed.region}.amazonaws.com"}}})

    if ep.kms_key_arn:
        statements.append({"Sid": "UseVolumeKey", "Effect": "Allow", "Action": KMS_ACTIONS, "Resource": ep.kms_key_arn})
        # SageMaker attaches the key to the instances' volumes through a grant; no grant for anyone else.
        statements.append({"Sid": "GrantVolumeKeyToAwsResources", "Effect": "Allow", "Action": "kms:CreateGrant",
                           "Resource": ep.kms_key_arn,
                           "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}}})

    if ep.vpc is not None:
        eni = f"arn:{part}:ec2:{region}:*:network-interface/*"
        subnets = [f"arn:{part}:ec2:{region}:*:subnet/{s}" for s in sorted(ep.vpc.subnets)]
        groups = [f"arn:{part}:ec2:{region}:*:security-group/{g}" for g in sorted(ep.vpc.security_groups)]
        # Interfaces only in the endpoint's own subnets: `ec2:Subnet` (the subnet's ARN) is a condition key
        # of the network-interface resource for these actions. It is not one of the subnet or security-group
        # resources, so those are allowed in their own statement, by ARN.
        in_subnets = {"ArnLike": {"ec2:Subnet": subnets}}
        statements += [
            {"Sid": "CreateVpcInterfaces", "Effect": "Allow", "Action": "ec2:CreateNetworkInterface",
             "Resource": eni, "Condition": in_subnets},
            {"Sid": "CreateVpcInterfacesIn", "Effect": "Allow", "Action": "ec2:CreateNetworkInterface",
             "Resource": [*subnets, *groups]},
            {"Sid": "ManageVpcInterfaces", "Effect": "Allow",
             "Action": ["ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterface",
                        "ec2:DeleteNetworkInterfacePermission"],
             "Resource": eni, "Condition": in_subnets},
            # EC2 Describe* calls have no resource-level permissions; limit them to the endpoint's region.
            {"Sid": "DescribeVpc", "Effect": "Allow",
             "Action": ["ec2:DescribeDhcpOptions", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSecurityGroups",
                        "ec2:DescribeSubnets", "ec2:DescribeVpcs"],
             "Resource": "*",
             "Condition": {"StringEquals": {"aws:RequestedRegion": region}}},
        ]
    return {"Version": POLICY_VERSION, "Statement": statements}


def policy_json(document: dict[str, Any]) -> str:
    """Compact, key-ordered JSON: inline role policies are limited to 10,240 characters. References in the
    document stay references (`json_text`); everything else in it is literal text."""
    return json_text(document, separators=(",", ":"), sort_keys=True)


class ExecutionRole(Group):
    """The role and its inline policy. `arn` is what models and endpoint configurations reference; depend
    on `policy` so SageMaker never uses the role before it may pull images and read model data."""

    def __init__(self, scope: Scope, id_: str, *, config: FastscaleConfig, names: EndpointNames) -> None:
        super().__init__(scope, id_)
        if names.execution_role is None:
            raise ValueError(f"endpoint {names.endpoint} brings its own role; no execution role is created")
        self.role = IamRole(
            self,
            "role",
            IamRoleProps(
                name=names.execution_role,
                assume_role_policy=policy_json(trust_policy(config.region, deploying_account(self))),
                description=f"SageMaker execution role of endpoint {names.endpoint} (fastscale)",
                force_detach_policies=True,
                tags=tags(config, names.spec, global_resource=True),
            ),
        )
        self.policy = IamRolePolicy(
            self,
            "policy",
            IamRolePolicyProps(
                name="sagemaker-serving",
                role=self.role.attr("name"),
                policy=policy_json(execution_policy(config, names)),
            ),
        )

    @property
    def arn(self) -> str:
        return self.role.arn
