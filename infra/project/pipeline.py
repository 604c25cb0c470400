"""What the pipelines of `fastscale init --ci github|gitlab` stand on: the GitHub Actions they use, each pinned by
commit; the Terraform download and its checksum; the lock file their AWS jobs install fastscale from; and the
IAM policies of the two roles they assume, which the project's README prints filled in for the project.

The split the pipelines keep (docs/ci-cd.md, "What a pull request controls"):

- a job that runs the repository's code (``pip install -r``, ``make``, the project's tests) gets no cloud
  credentials and no OIDC token;
- ``plan`` on a pull request runs only fastscale, installed from the lock file of the main branch with every
  hash checked, on the pull request's config read from git as data, with a read-only *plan* role;
- ``deploy`` and ``teardown`` run only on the protected main branch (GitHub: in the ``production``
  environment), with the *deploy* role.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ActionPin:
    """A GitHub Action at one commit: a tag can be moved to other code, a commit cannot."""

    repository: str  # owner/name
    commit: str  # the full 40-hex commit the release tag points at
    version: str  # that tag, for people (written as a comment beside the commit)

    @property
    def uses(self) -> str:
        """The value of a step's ``uses:``, with the version as a YAML comment after it."""
        return f"{self.repository}@{self.commit} # {self.version}"


#: Every action the GitHub workflow uses. Each commit was read from the action's own repository: the commit
#: its release tag (and the major tag) points at. To move to a newer release, take the commit of its tag.
ACTIONS = {
    "checkout": ActionPin("actions/checkout", "3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "setup_python": ActionPin("actions/setup-python", "5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "upload_artifact": ActionPin("actions/upload-artifact", "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", "v7.0.0"),
    "download_artifact": ActionPin(
        "actions/download-artifact", "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c", "v8.0.1"
    ),
    "aws_credentials": ActionPin(
        "aws-actions/configure-aws-credentials", "e6de054238d6b7531b4efff3b6587d9aade6a06c", "v6.2.3"
    ),
}

#: The Python the pipelines run fastscale on, and the one `make lock` resolves the lock for.
CI_PYTHON = "3.11"
#: Terraform as the pipelines download it, and the SHA-256 of that zip as HashiCorp's
#: terraform_1.11.4_SHA256SUMS lists it: the download is refused unless it matches.
TERRAFORM_VERSION = "1.11.4"
TERRAFORM_PLATFORM = "linux_amd64"
TERRAFORM_SHA256 = "1ce994251c00281d6845f0f268637ba50c0005657eb3cf096b92f753b42ef4dc"
#: fastscale and every package it needs, each pinned with its hashes (`make lock` writes it from
#: requirements.txt); the AWS jobs install it with `pip --require-hashes`, from the main branch only.
LOCK_FILE = "requirements.lock"
#: uv resolves the lock for the pipeline's Python and platform, whatever machine runs `make lock`.
UV_VERSION = "0.13.8"

#: The GitHub environment (and so the OIDC subject) of the jobs that hold the deploy role.
GITHUB_ENVIRONMENT = "production"
#: The protected branch that deploys.
MAIN_BRANCH = "main"
#: Placeholders the user replaces in the policies the README prints.
ACCOUNT = "ACCOUNT_ID"
GITHUB_REPO = "OWNER/REPO"
GITLAB_PROJECT = "GROUP/PROJECT"
GITLAB_HOST = "gitlab.com"
#: The audience both pipelines ask their OIDC token for.
AUDIENCE = "sts.amazonaws.com"

#: What `fastscale plan` reads in the account, besides the state: fastscale's own checks before Terraform runs
#: (quotas, name clashes through the tagging API and the per-kind listings, the live instance counts) and
#: Terraform's refresh of each resource type the stack creates (the awscc inference component through the
#: Cloud Control API, whose IAM actions carry the `cloudformation` prefix). Read and list actions only.
PLAN_READ_ACTIONS = (
    "application-autoscaling:DescribeScalableTargets",
    "application-autoscaling:DescribeScalingPolicies",
    "application-autoscaling:ListTagsForResource",
    "cloudformation:GetResource",
    "cloudwatch:DescribeAlarms",
    "cloudwatch:GetDashboard",
    "cloudwatch:ListDashboards",
    "cloudwatch:ListTagsForResource",
    "logs:DescribeLogGroups",
    "sagemaker:DescribeEndpoint",
    "sagemaker:DescribeEndpointConfig",
    "sagemaker:DescribeInferenceComponent",
    "sagemaker:DescribeModel",
    "sagemaker:ListEndpointConfigs",
    "sagemaker:ListEndpoints",
    "sagemaker:ListInferenceComponents",
    "sagemaker:ListModels",
    "sagemaker:ListTags",
    "servicequotas:ListAWSDefaultServiceQuotas",
    "servicequotas:ListServiceQuotas",
    "tag:GetResources",
)
#: The execution roles the stack creates (``<project>-<endpoint>-sagemaker-<region>``): read only.
PLAN_ROLE_READ_ACTIONS = ("iam:GetRole", "iam:GetRolePolicy", "iam:ListAttachedRolePolicies", "iam:ListRolePolicies")


def plan_role_policy(project: str, state_bucket: str, state_key: str) -> dict[str, Any]:
    """The permissions of the read-only plan role: what `plan` reads, the state, and the state's lock object
    (Terraform's S3-native lock is an object it creates and deletes beside the state while it plans)."""
    state = f"arn:aws:s3:::{state_bucket}/{state_key}"
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "ReadTheStack", "Effect": "Allow", "Action": list(PLAN_READ_ACTIONS), "Resource": "*"},
            {
                "Sid": "ReadTheExecutionRoles",
                "Effect": "Allow",
                "Action": list(PLAN_ROLE_READ_ACTIONS),
                "Resource": f"arn:aws:iam::{ACCOUNT}:role/{project}-*",
            },
            {"Sid": "ListTheStateBucket", "Effect": "Allow", "Action": "s3:ListBucket",
             "Resource": f"arn:aws:s3:::{state_bucket}"},
            {"Sid": "ReadTheState", "Effect": "Allow", "Action": "s3:GetObject", "Resource": state},
            {"Sid": "TakeTheStateLock", "Effect": "Allow",
             "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"], "Resource": f"{state}.tflock"},
        ],
    }


def oidc_subjects(ci: str) -> dict[str, tuple[str, str]]:
    """Role -> (IAM condition operator, OIDC ``sub`` it admits) for each role of a pipeline."""
    if ci == "github":
        return {
            "plan": ("StringEquals", f"repo:{GITHUB_REPO}:pull_request"),
            "deploy": ("StringEquals", f"repo:{GITHUB_REPO}:environment:{GITHUB_ENVIRONMENT}"),
        }
    if ci == "gitlab":
        # A merge request pipeline runs on its source branch: the plan role admits any branch of the project,
        # the deploy role only the protected main branch.
        return {
            "plan": ("StringLike", f"project_path:{GITLAB_PROJECT}:ref_type:branch:ref:*"),
            "deploy": ("StringEquals", f"project_path:{GITLAB_PROJECT}:ref_type:branch:ref:{MAIN_BRANCH}"),
        }
    raise ValueError(f"no pipeline for {ci!r}")


def trust_policy(ci: str, role: str) -> dict[str, Any]:
    """The trust policy of the plan or deploy role: the CI's OIDC provider, the audience the pipeline asks
    for, and the one subject (pull request / protected environment or branch) that may assume it."""
    issuer = "token.actions.githubusercontent.com" if ci == "github" else GITLAB_HOST
    operator, subject = oidc_subjects(ci)[role]
    conditions: dict[str, dict[str, str]] = {"StringEquals": {f"{issuer}:aud": AUDIENCE}}
    conditions.setdefault(operator, {})[f"{issuer}:sub"] = subject
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Federated": f"arn:aws:iam::{ACCOUNT}:oidc-provider/{issuer}"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": conditions,
        }],
    }


def context() -> dict[str, Any]:
    """What the CI templates and the README need from this module."""
    return {
        "actions": {name: pin.uses for name, pin in ACTIONS.items()},
        "ci_python": CI_PYTHON,
        "terraform_version": TERRAFORM_VERSION,
        "terraform_platform": TERRAFORM_PLATFORM,
        "terraform_sha256": TERRAFORM_SHA256,
        "lock_file": LOCK_FILE,
        "uv_version": UV_VERSION,
        "github_environment": GITHUB_ENVIRONMENT,
        "main_branch": MAIN_BRANCH,
        "audience": AUDIENCE,
    }
