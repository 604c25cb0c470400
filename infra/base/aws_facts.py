"""What AWS fixes and fastscale relies on, spelled once: the stacks build with these values, the rules check
configs against them, and the live verification compares with them.

Plain constants only (no boto3, no cdktf), so any layer may import this module at no cost.
"""

from __future__ import annotations

from dataclasses import dataclass

# --------------------------------------------------------------------------------------------- auto scaling

#: Application Auto Scaling `ServiceNamespace` of SageMaker AI endpoints and inference components.
SERVICE_NAMESPACE = "sagemaker"
#: Scalable dimensions (`ScalableDimension`): instances of a production variant, copies of a component.
VARIANT_INSTANCES = "sagemaker:variant:DesiredInstanceCount"
COMPONENT_COPIES = "sagemaker:inference-component:DesiredCopyCount"
#: Policy types (`PolicyType`).
TARGET_TRACKING = "TargetTrackingScaling"
STEP_SCALING = "StepScaling"

#: Predefined metric types (`PredefinedMetricType`) target tracking follows, and the CloudWatch metric
#: behind each. The HighResolution ones are the 10-second concurrency metrics.
VARIANT_HIGH_RESOLUTION = "SageMakerVariantConcurrentRequestsPerModelHighResolution"
VARIANT_INVOCATIONS = "SageMakerVariantInvocationsPerInstance"
COMPONENT_HIGH_RESOLUTION = "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"
COMPONENT_INVOCATIONS = "SageMakerInferenceComponentInvocationsPerCopy"
METRIC_OF_PREDEFINED_TYPE = {
    VARIANT_HIGH_RESOLUTION: "ConcurrentRequestsPerModel",
    VARIANT_INVOCATIONS: "InvocationsPerInstance",
    COMPONENT_HIGH_RESOLUTION: "ConcurrentRequestsPerCopy",
    COMPONENT_INVOCATIONS: "InvocationsPerCopy",
}

# How fast target tracking reacts. The ConcurrentRequestsPer* metrics emit data every 10 seconds, the
# standard Invocations* ones once a minute, and scale-in keeps the standard metrics' pace (SageMaker AI
# developer guide, "Define a scaling policy"); AWS says they detect the need to scale out up to 6x faster
# ("Amazon SageMaker inference launches faster auto scaling for generative AI models", AWS Machine Learning
# Blog, July 2024). fastscale's model has the scale-out alarm target tracking manages fire after 3 breaching
# datapoints, so scale-out starts ~30 s after a load change instead of ~3 minutes; scale-in after 15 low
# one-minute datapoints.
HIGH_RESOLUTION_PERIOD_S = 10
STANDARD_PERIOD_S = 60
SCALE_OUT_DATAPOINTS = 3
SCALE_IN_DATAPOINTS = 15
SCALE_IN_PERIOD_S = 60


@dataclass(frozen=True)
class StepPolicyShape:
    """The scale-from-zero step policy: add exactly one copy whenever its alarm is in ALARM (the metric
    at or above 0 over the threshold); target tracking takes over from one copy."""

    adjustment_type: str = "ChangeInCapacity"
    metric_aggregation_type: str = "Maximum"
    lower_bound: int = 0
    scaling_adjustment: int = 1

    def describe(self, cooldown: int) -> str:
        """As the verification report prints a step policy."""
        return (
            f"{STEP_SCALING} {self.adjustment_type} {self.scaling_adjustment:+d} at >= {self.lower_bound}, "
            f"{self.metric_aggregation_type}, cooldown {cooldown} s"
        )


SCALE_FROM_ZERO_STEP = StepPolicyShape()

# --------------------------------------------------------------------------------------------- CloudWatch

#: Namespaces SageMaker AI publishes endpoint metrics to.
NS_INVOCATIONS = "AWS/SageMaker"  # invocation metrics: latency, errors, concurrency, NoCapacityInvocationFailures
NS_ENDPOINT_INSTANCES = "/aws/sagemaker/Endpoints"  # per-instance utilization (CPU, memory, GPU)
NS_COMPONENT_COPIES = "/aws/sagemaker/InferenceComponents"  # per-copy utilization of inference components

#: Requests that found no copy to serve them: the signal to scale a component up from zero.
NO_CAPACITY_METRIC = "NoCapacityInvocationFailures"
#: Invocation metrics the operational alarms watch (per variant, or per component on component endpoints).
MODEL_LATENCY_METRIC = "ModelLatency"  # published in microseconds
ERRORS_5XX_METRIC = "Invocation5XXErrors"
MICROSECONDS_PER_MS = 1000
#: GPU memory per instance: summed over the instance's GPUs (up to 100 % each), or normalized to 0-100 %.
GPU_MEMORY_METRIC = "GPUMemoryUtilization"
GPU_MEMORY_NORMALIZED_METRIC = "GPUMemoryUtilizationNormalized"

#: Alarm periods CloudWatch accepts: 10, 20, 30 (high resolution) or any multiple of 60.
HIGH_RESOLUTION_ALARM_PERIODS = (10, 20, 30)


def valid_alarm_period(seconds: int) -> bool:
    return seconds in HIGH_RESOLUTION_ALARM_PERIODS or (seconds > 0 and seconds % 60 == 0)


#: CloudWatch's limit on metrics in one metric math alarm.
MAX_METRICS_PER_MATH_ALARM = 10

# --------------------------------------------------------------------------------------------- SageMaker

#: `MetricsConfig.MetricPublishFrequencyInSeconds` values the endpoint configuration accepts.
METRICS_PUBLISH_FREQUENCIES = (10, 30, 60, 120, 180, 240, 300)

#: `ProductionVariantRoutingConfig.RoutingStrategy` (botocore 1.44.8) by fastscale's `routing` value.
ROUTING_STRATEGIES = {"least_outstanding_requests": "LEAST_OUTSTANDING_REQUESTS", "random": "RANDOM",
                      "prefix_aware": "PREFIX_AWARE", "kv_aware": "KV_AWARE"}
#: `PrefixAwareRoutingConfig`: `PrefixLength` 1024-65536 (bytes of the body for InvokeEndpoint, characters of
#: the messages' text for the OpenAI-compatible API), `ConcurrencyThreshold` 1-1024; both required with
#: PREFIX_AWARE, and the block only allowed with it.
PREFIX_LENGTH_RANGE = (1024, 65536)
CONCURRENCY_THRESHOLD_RANGE = (1, 1024)
@dataclass(frozen=True)
class InferenceAmi:
    """One `ProductionVariant.InferenceAmiVersion`: its accelerators and the instance families it serves."""

    accelerators: tuple[str, ...]  # fastscale's catalog kinds: nvidia-gpu, inferentia, trainium
    families: tuple[str, ...]  # instance families without `ml.` and `.*`
    aws_lists_families: bool  # True: AWS's own list; False: fastscale's choice from the AMI's driver


#: The inference AMIs (`ProductionVariantInferenceAmiVersion`, botocore 1.44.8) and the instance families each
#: serves: the one table FS105 reads. Sources:
#: - what each AMI is (accelerator, driver): the SageMaker API reference, ProductionVariant.InferenceAmiVersion,
#:   https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html
#: - families: AWS's table "Current versions and supported instance families",
#:   https://docs.aws.amazon.com/sagemaker/latest/dg/inference-gpu-drivers.html, and the same API reference as
#:   published with botocore 1.34.159 to 1.36.19 (Aug 2024 to Feb 2025), whose gpu-2 entry read "Supported
#:   instance types: ml.g4dn.*, ml.g5.*, ml.g6.*, ml.p3.*, ml.p4d.*, ml.p4de.*, ml.p5.*".
#: Per AMI:
#: - gpu-2, gpu-2-1 (NVIDIA 535): AWS's list above; the GPU-driver table puts both on its driver-535 row.
#: - neuron-2 (Neuron 2.19): "Inferentia2 and Trainium" (API reference): ml.inf2, ml.trn1, ml.trn1n, ml.trn2, and
#:   not ml.inf1 (first-generation Inferentia).
#: - gpu-3-1 (NVIDIA 550) and gpu-4-1 (NVIDIA 580): the API reference says only "Accelerator: GPU". fastscale's
#:   choice: the NVIDIA families whose GPUs the AMI's driver runs (NVIDIA: Kepler, the K80 of ml.p2, ended with
#:   driver branch 470; Blackwell needs 570 or newer, https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/),
#:   so every catalog GPU family but ml.p2 for gpu-4-1, and for gpu-3-1 also none of the Blackwell families
#:   (ml.g7, ml.g7e, ml.p6-b200, ml.p6-b300, ml.p6e-gb200). A family the driver runs but AWS has not put in
#:   its table passes here and, if SageMaker refuses it, fails at CreateEndpointConfig.
_DRIVER_535_FAMILIES = ("g4dn", "g5", "g6", "p3", "p4d", "p4de", "p5")
_PRE_BLACKWELL_FAMILIES = ("g4dn", "g5", "g6", "g6e", "p3", "p4d", "p4de", "p5", "p5e", "p5en")
_BLACKWELL_FAMILIES = ("g7", "g7e", "p6-b200", "p6-b300", "p6e-gb200")
INFERENCE_AMIS = {
    "al2-ami-sagemaker-inference-gpu-2": InferenceAmi(("nvidia-gpu",), _DRIVER_535_FAMILIES, True),
    "al2-ami-sagemaker-inference-gpu-2-1": InferenceAmi(("nvidia-gpu",), _DRIVER_535_FAMILIES, True),
    "al2-ami-sagemaker-inference-gpu-3-1": InferenceAmi(("nvidia-gpu",), _PRE_BLACKWELL_FAMILIES, False),
    "al2023-ami-sagemaker-inference-gpu-4-1": InferenceAmi(("nvidia-gpu",),
                                                           _PRE_BLACKWELL_FAMILIES + _BLACKWELL_FAMILIES, False),
    "al2-ami-sagemaker-inference-neuron-2": InferenceAmi(("inferentia", "trainium"),
                                                         ("inf2", "trn1", "trn1n", "trn2"), True),
}

# --------------------------------------------------------------------------------------------- names AWS gives

#: Application Auto Scaling names the alarms of a target-tracking policy `TargetTracking-<resource id>-...`;
#: they go with their policy.
TARGET_TRACKING_ALARM_PREFIX = "TargetTracking-"
#: The CloudWatch Logs log groups SageMaker writes an endpoint's and an inference component's logs to.
ENDPOINT_LOG_GROUP = "/aws/sagemaker/Endpoints/{}"
COMPONENT_LOG_GROUP = "/aws/sagemaker/InferenceComponents/{}"

# --------------------------------------------------------------------------------------------- updates

#: `DeploymentConfig` of UpdateEndpoint / UpdateInferenceComponent (botocore 1.44.8 service model):
#: `WaitIntervalInSeconds` (the bake time) and `TerminationWaitInSeconds` 0-3600,
#: `MaximumExecutionTimeoutInSeconds` 600-28800, `CapacitySizeValue` at least 1, 1-10 rollback alarms.
BAKE_TIME_MAX_S = 3600
#: hashicorp/aws validates `maximum_execution_timeout_in_seconds` of `aws_sagemaker_endpoint` to 600-14400
#: (`validation.IntBetween(600, 14400)` in its schema), tighter than the API; awscc passes the API's range.
ENDPOINT_DEPLOYMENT_TIMEOUT_MAX_S = 14400
#: The API reference: a rolling batch, a linear step and a canary are 5-50 % of the fleet (instances of the
#: variant, or copies of the component).
STEP_PERCENT_MIN = 5
STEP_PERCENT_MAX = 50

# --------------------------------------------------------------------------------------------- values AWS accepts

#: Where SageMaker puts a model's `ModelDataUrl` / `ModelDataSource` / `ArtifactUrl` in the container.
MODEL_DIR = "/opt/ml/model"
#: `ContainerImage` (botocore 1.44.8): at most 255 characters, no whitespace.
IMAGE_MAX_LEN = 255
#: `Url` / `S3ModelUri` (model data): at most 1024 characters.
MODEL_DATA_MAX_LEN = 1024
#: Tag keys beginning with this (in any case) are reserved for AWS ("User-defined tag restrictions",
#: AWS Billing user guide, https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/allocation-tag-restrictions.html); AWS refuses them in a tagging request.
RESERVED_TAG_PREFIX = "aws:"
#: Most user tags one resource may carry (SageMaker, IAM, CloudWatch alike).
MAX_TAGS_PER_RESOURCE = 50

# --------------------------------------------------------------------------------------------- hashicorp/aws

# What hashicorp/aws's `aws_sagemaker_endpoint_configuration` checks in a production variant itself, at
# `terraform validate`/`plan`, before any AWS call. Measured on 5.100.0 (the release of this project's provider
# mirror and fastscale's floor, AWS_FLOOR: terraform validate with literal values). 6.25.0 is taken to check no
# less: the provider takes these enums from the AWS SDK for Go v2 it is built with, 6.25.0 came out on
# 2025-12-04, and AWS's SageMaker service model of 2025-12-03 still had RoutingStrategy
# LEAST_OUTSTANDING_REQUESTS | RANDOM and no al2023 gpu-4-1 AMI. A value outside these is refused by the
# provider, so fastscale writes it into awscc's endpoint configuration (a setting such as `routing: prefix_aware`,
# an AMI or instance type the list lacks) or reports it (an override, rule FS106).

#: `routing_config.routing_strategy`.
AWS_PROVIDER_ROUTING_STRATEGIES = ("LEAST_OUTSTANDING_REQUESTS", "RANDOM")
#: `inference_ami_version`.
AWS_PROVIDER_AMI_VERSIONS = (
    "al2-ami-sagemaker-inference-gpu-2", "al2-ami-sagemaker-inference-gpu-2-1",
    "al2-ami-sagemaker-inference-gpu-3-1", "al2-ami-sagemaker-inference-neuron-2",
)
#: `instance_type`: hashicorp/aws checks it against a list fixed per release. The accelerator types of
#: fastscale's catalog that 5.100.0 does not list (tests/contract/test_terraform_validate.py measures every
#: catalog type against the mirror); every other catalog type it accepts.
AWS_PROVIDER_UNKNOWN_INSTANCE_TYPES = (
    "ml.g7.12xlarge", "ml.g7.24xlarge", "ml.g7.2xlarge", "ml.g7.48xlarge", "ml.g7.4xlarge", "ml.g7.8xlarge",
    "ml.g7e.12xlarge", "ml.g7e.24xlarge", "ml.g7e.2xlarge", "ml.g7e.48xlarge", "ml.g7e.4xlarge", "ml.g7e.8xlarge",
    "ml.p5.4xlarge", "ml.p6-b200.48xlarge", "ml.p6-b300.48xlarge", "ml.p6e-gb200.36xlarge",
)
#: `volume_size_in_gb`, `container_startup_health_check_timeout_in_seconds`,
#: `model_data_download_timeout_in_seconds` and `initial_instance_count`: (least, most); None is unbounded.
AWS_PROVIDER_VARIANT_RANGES: dict[str, tuple[int, int | None]] = {
    "volume_size_in_gb": (1, 512),
    "container_startup_health_check_timeout_in_seconds": (60, 3600),
    "model_data_download_timeout_in_seconds": (60, 3600),
    "initial_instance_count": (1, None),
}
#: The enums of a production variant, by attribute (`instance_type`: AWS_PROVIDER_UNKNOWN_INSTANCE_TYPES).
AWS_PROVIDER_VARIANT_ENUMS: dict[str, tuple[str, ...]] = {
    "routing_strategy": AWS_PROVIDER_ROUTING_STRATEGIES,
    "inference_ami_version": AWS_PROVIDER_AMI_VERSIONS,
}
