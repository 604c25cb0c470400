"""The words a plan's classification is written in: the Terraform resource types it knows (which serve
traffic, which roll out, under which name attribute) and the classes of change (:class:`ChangeKind`).

Data only; :mod:`.strategy`, :mod:`.serving` and :mod:`.classify` read it. A new resource
type that serves traffic or rolls out is added here (docs/extending.md).
"""

from __future__ import annotations

from enum import Enum

#: Terraform resource types that serve traffic: replacing one of them is downtime.
ENDPOINT_TYPE = "aws_sagemaker_endpoint"
COMPONENT_TYPE = "awscc_sagemaker_inference_component"
SERVING_TYPES = (ENDPOINT_TYPE, COMPONENT_TYPE)

#: The resources a new endpoint configuration is planned as (hashicorp/aws and awscc).
CONFIG_TYPES = ("aws_sagemaker_endpoint_configuration", "awscc_sagemaker_endpoint_config")
#: The attribute holding each endpoint configuration type's SageMaker name (hashicorp/aws may plan a name from
#: ``name_prefix`` instead, known only after apply).
CONFIG_NAME_ATTRIBUTE = {"aws_sagemaker_endpoint_configuration": "name", "awscc_sagemaker_endpoint_config": "endpoint_config_name"}
#: An Application Auto Scaling target (a variant's instance count or a component's copy count).
SCALING_TARGET_TYPE = "aws_appautoscaling_target"

#: What a person calls each serving type.
TYPE_LABELS = {ENDPOINT_TYPE: "endpoint", COMPONENT_TYPE: "inference component"}

#: Attributes whose change makes SageMaker roll out a new version (the rest of an update is in place).
#: An endpoint rolls when it switches to another endpoint configuration; a component when its
#: specification (model, container, resources, start-up) changes. A component's ``runtime_config`` is its
#: copy count, which auto scaling owns: changing it adds or removes copies of the same version.
ROLLOUT_ATTRIBUTES = {
    ENDPOINT_TYPE: ("endpoint_config_name",),
    COMPONENT_TYPE: ("specification", "specifications"),
}

#: The attribute holding each serving type's SageMaker name.
NAME_ATTRIBUTE = {ENDPOINT_TYPE: "name", COMPONENT_TYPE: "inference_component_name"}

#: Resources whose name AWS allows once per account and Region (and IAM roles: once per account), with their
#: name attribute. Replaced create-before-destroy under an unchanged name, the create fails (SageMaker
#: "Cannot create already existing model", IAM EntityAlreadyExists) after the plan was accepted.
UNIQUE_NAME_ATTRIBUTE = {"aws_sagemaker_model": "name", "aws_iam_role": "name",
                         "aws_sagemaker_endpoint_configuration": "name"}

#: The execution role fastscale creates: a new name (it carries the region since the role became one per
#: region) replaces it, and with it everything that names its ARN.
ROLE_TYPE = "aws_iam_role"


class ChangeKind(str, Enum):
    CREATE = "create"
    DELETE = "delete"
    IN_PLACE = "in_place"
    ROLLING = "rolling"
    BLUE_GREEN = "blue_green"
    REPLACE = "replace"
    DOWNTIME = "replace_with_downtime"
    FORGET = "forget"

    @property
    def label(self) -> str:
        return _KIND_LABELS[self]


_KIND_LABELS = {
    ChangeKind.CREATE: "create",
    ChangeKind.DELETE: "delete",
    ChangeKind.IN_PLACE: "in place",
    ChangeKind.ROLLING: "rolling",
    ChangeKind.BLUE_GREEN: "blue/green",
    ChangeKind.REPLACE: "replace",
    ChangeKind.DOWNTIME: "replace, downtime",
    ChangeKind.FORGET: "forget",
}
