"""What an endpoint serves: models and inference components (image, weights, serving settings, secrets),
and the live names of adopted resources."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StringConstraints,
)

from fastscale.infra.base.limits import ApiInt, Number
from fastscale.infra.config.common import _OVERRIDES_HELP, EnvName, EnvValue, Overrides, TagKey, TagValue, _Strict
from fastscale.infra.config.scaling import Autoscaling, Capacity, ComponentDeployment
from fastscale.infra.config.secrets import parse_kms_key_arn

# --------------------------------------------------------------------------------------------- adopted


def _live_name(value: str) -> str:
    if not _SAGEMAKER_NAME_RE.fullmatch(value):
        raise ValueError(
            f"{value[:80]!r} is not a SageMaker resource name: letters, digits and hyphens, starting and ending "
            "with a letter or digit, at most 63 characters (copy it from the AWS console or `fastscale adopt`)"
        )
    return value


def _policy_name(value: str) -> str:
    if "${" in value or "%{" in value:
        raise ValueError(f"{value[:80]!r}: a scaling policy name fastscale adopts may not contain '${{' or '%{{'")
    if "/" in value:
        # hashicorp/aws imports a policy as <namespace>/<resource id>/<dimension>/<name> and takes the part
        # after the last '/' as the name (validPolicyImportInput in its appautoscaling package).
        raise ValueError(
            f"{value[:80]!r}: hashicorp/aws imports a scaling policy by an ID it splits on '/', taking the last "
            "part as the name, so a name with '/' cannot be imported; rename the live policy (or leave "
            "`scaling_policy` unset: the deploy then creates fastscale's own policy, and the live one stays "
            "unmanaged until you delete it)"
        )
    return value


def _kms_key_arn(value: str) -> str:
    if parse_kms_key_arn(value) is None:
        raise ValueError(
            f"{value[:120]!r} is not a KMS key ARN (arn:<partition>:kms:<region>:<account>:key/<key id>): IAM "
            "grants kms:Decrypt on a key by its key ARN, not by an alias or a bare key id"
        )
    return value


_SAGEMAKER_NAME_RE = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")
#: The name of a live SageMaker resource (model, endpoint configuration, endpoint, variant, component).
LiveName = Annotated[str, AfterValidator(_live_name)]
#: The name of a live Application Auto Scaling policy (1-256 printable characters).
#: The ARN of a KMS key (not an alias).
KmsKeyArn = Annotated[str, AfterValidator(_kms_key_arn)]
PolicyName = Annotated[str, StringConstraints(min_length=1, max_length=256, pattern=r"^[\x20-\x7e]+$"),
                       AfterValidator(_policy_name)]


#: Tags a live resource carried that fastscale does not write.
LiveTagMap = Annotated[dict[TagKey, TagValue], Field(max_length=50)]
_LIVE_TAGS = (
    "The live {kind}'s own tags (fastscale adopt copies them): kept on it by every deploy, under the config's "
    "`tags` and fastscale's ownership tags, which win on the same key. Also put on the {kind} that replaces it."
)


class AdoptedEndpointTags(_Strict):
    """Tags the adopted endpoint's live resources carried, kept so that the first deploy removes none."""

    endpoint: LiveTagMap = Field(default_factory=dict, description=_LIVE_TAGS.format(kind="endpoint"))
    endpoint_config: LiveTagMap = Field(
        default_factory=dict, description=_LIVE_TAGS.format(kind="endpoint configuration")
    )
    model: LiveTagMap = Field(default_factory=dict, description=_LIVE_TAGS.format(kind="model"))


class AdoptedComponentTags(_Strict):
    """Tags the adopted component's live resources carried, kept so that the first deploy removes none."""

    component: LiveTagMap = Field(default_factory=dict, description=_LIVE_TAGS.format(kind="inference component"))
    model: LiveTagMap = Field(default_factory=dict, description=_LIVE_TAGS.format(kind="model"))


class Adopted(_Strict):
    """What an endpoint and a component adopt alike: the live model, its data form, its auto scaling."""

    model: LiveName | None = Field(
        None,
        description="Name of the live SageMaker model to keep. A model cannot be changed: remove this key in the "
        "same change as a new image, model data or environment, so the new model gets a fresh name.",
    )
    model_data_url: bool = Field(
        False,
        description="The live model names its data as ModelDataUrl (as the SageMaker Python SDK creates models) "
        "instead of ModelDataSource: keep that form, since changing it would replace the model.",
    )
    scalable_target: bool = Field(
        False, description="The live resource has an Application Auto Scaling scalable target: import it."
    )
    scaling_policy: PolicyName | None = Field(
        None, description="Name of the live target-tracking policy to keep (and import) instead of fastscale's own name."
    )


class AdoptedEndpoint(Adopted):
    """Live resources this endpoint takes over (written by `fastscale adopt`, docs/adopt.md): their names are
    kept instead of fastscale's naming, and the next deploy imports them into the Terraform state (import
    blocks) instead of creating new ones. Once imported, the import blocks change nothing."""

    endpoint: LiveName = Field(..., description="Name of the live endpoint; replaces `<project>-<name>`.")
    endpoint_config: LiveName | None = Field(
        None,
        description="Name of the live endpoint configuration to keep. A configuration cannot be changed: remove "
        "this key in the same change as any setting of the variant (instance type, counts, routing, model), so "
        "the new configuration gets a fresh name and the endpoint switches to it.",
    )
    variant: LiveName = Field("AllTraffic", description="Name of the live production variant.")
    tags: AdoptedEndpointTags = Field(
        default_factory=AdoptedEndpointTags,
        description="The live endpoint's, configuration's and model's own tags, kept on them (see each key).",
    )


class AdoptedComponent(Adopted):
    """A live inference component this component takes over (see `AdoptedEndpoint`)."""

    name: LiveName = Field(..., description="Name of the live inference component; replaces `<project>-<name>`.")
    arn: str = Field(
        ...,
        pattern=r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:\d{12}:inference-component/[a-zA-Z0-9-]{1,63}$",
        description="ARN of the live inference component (hashicorp/awscc imports it by ARN).",
    )
    tags: AdoptedComponentTags = Field(
        default_factory=AdoptedComponentTags,
        description="The live component's and its model's own tags, kept on them (see each key).",
    )


# --------------------------------------------------------------------------------------------- workloads


class Resources(_Strict):
    """Compute reserved for one copy of an inference component on an instance."""

    accelerators: ApiInt | None = Field(None, description="Accelerator devices per copy (GPUs / Neuron devices).")
    memory_mb: ApiInt = Field(..., description="Minimum host memory per copy in MB (required by the API).")
    max_memory_mb: ApiInt | None = Field(None, description="Optional memory ceiling per copy in MB.")
    cpus: Number | None = Field(None, description="CPU cores per copy.")


class SecretRef(_Strict):
    """An AWS Secrets Manager secret the container reads at start (see docs/secrets.md)."""

    arn: str = Field(
        ...,
        description="Secret ARN, arn:<partition>:secretsmanager:<region>:<account>:secret:<name>, in the "
        "project's region. The execution role may read exactly this secret.",
    )
    kms_key_arn: str | None = Field(
        None,
        description="Customer managed KMS key that encrypts the secret, if any: the role may use it to decrypt "
        "only through Secrets Manager.",
    )


def _secret_shorthand(value: Any) -> Any:
    return {"arn": value} if isinstance(value, str) else value


class ModelShape(_Strict):
    """The model's attention shape, from its config.json: it sets how many bytes of KV cache one token takes
    (layers x KV heads x head dimension x 2 for keys and values x the cache's bytes per value)."""

    layers: ApiInt = Field(..., ge=1, description="Transformer layers (config.json num_hidden_layers).")
    kv_heads: ApiInt = Field(
        ..., ge=1, description="Key/value heads per layer (config.json num_key_value_heads; num_attention_heads without GQA)."
    )
    head_dim: ApiInt = Field(..., ge=1, description="Dimension of one attention head (config.json head_dim, or hidden_size / num_attention_heads).")
    kv_cache_dtype: Literal["auto", "float16", "bfloat16", "fp8"] = Field(
        "auto",
        description="Data type of the KV cache (vLLM --kv-cache-dtype): auto follows the 16-bit weights (2 bytes), fp8 takes 1 byte.",
    )

    @property
    def kv_bytes_per_token(self) -> int:
        return self.layers * self.kv_heads * self.head_dim * 2 * (1 if self.kv_cache_dtype == "fp8" else 2)


class Serving(_Strict):
    """What one copy (one instance of a single-model endpoint) serves: its capacity, separate from the scaling
    target. Used by `fastscale estimate`, `simulate` and `recommend`; nothing here reaches AWS."""

    max_concurrency: Number | None = Field(
        None,
        gt=0,
        description="Concurrent requests one copy runs at once (the model server's batch limit, vLLM's --max-num-seqs); "
        "beyond it requests queue. Default: what the accelerator memory left after the weights holds as KV cache, for "
        "requests of the trace's mean length (a stated default length without a trace), at most the model server's "
        "default batch limit (docs/simulate.md). Measure it with a load test of one copy.",
    )
    gpu_memory_utilization: Number | None = Field(
        None,
        gt=0,
        le=1,
        description="Share of each accelerator's memory the model server takes for weights, activations and KV cache "
        "(vLLM --gpu-memory-utilization, LMI OPTION_GPU_MEMORY_UTILIZATION). Default 0.9, vLLM's. Used by `simulate` "
        "and `recommend` for the KV-cache capacity.",
    )
    max_batched_tokens: ApiInt | None = Field(
        None,
        ge=1,
        description="Tokens one model-server step processes at most, decode and prefill chunks together (vLLM "
        "--max-num-batched-tokens, LMI OPTION_MAX_NUM_BATCHED_TOKENS). Default as vLLM: 8192 on accelerators with 70 "
        "GiB or more (except A100), else 2048. Used by `simulate --requests` and `recommend`.",
    )
    model_shape: ModelShape | None = Field(
        None,
        description="The model's layers, KV heads and head dimension (from its config.json), for the KV cache a token "
        "takes. Default: a stated figure by model_size_gb (docs/simulate.md).",
    )
    prefill_tokens_per_second: Number | None = Field(
        None,
        gt=0,
        description="Prompt tokens one copy prefills per second, measured (`simulate --requests`, `recommend`). Unset: "
        "estimated from the accelerator's FP16 throughput and model_size_gb (infra/analysis/simulate_params.json).",
    )
    decode_tokens_per_second: Number | None = Field(
        None,
        gt=0,
        description="Tokens per second one request generates when it runs alone on a copy, measured (`simulate "
        "--requests`, `recommend`). Unset: estimated from the accelerator's memory bandwidth and model_size_gb.",
    )
    fast_model_loader: bool = Field(
        False,
        description="The model data was prepared for SageMaker Fast Model Loader (pre-sharded, streamed from S3 "
        "straight to the accelerators): `fastscale estimate` uses AWS's published load figures. The stack sets "
        "nothing for it; the artifact decides.",
    )


class _Workload(_Strict):
    """What runs: a container image from ECR and the model data it loads."""

    image: str = Field(..., min_length=1, description="Container image URI; use Amazon ECR in the endpoint's region so image caching applies.")
    model_data: str | None = Field(
        None, description="S3 URI of the model: a prefix ending in '/' (uncompressed) or an object (.tar.gz)."
    )
    model_data_kms_key_arn: KmsKeyArn | None = Field(
        None,
        description="ARN of the customer managed KMS key that encrypts the model data in S3 (SSE-KMS), if any: "
        "reading such objects needs kms:Decrypt on the key (Amazon S3 user guide, \"Using server-side encryption "
        "with AWS KMS keys\"), so the execution role gets kms:Decrypt on exactly this key, and only through S3 "
        "(kms:ViaService s3.<the key's region>.amazonaws.com). Unset: the model data is not under a customer key.",
    )
    accept_eula: bool = Field(
        False,
        description="Accept the end-user license agreement of the model in `model_data` (ModelAccessConfig."
        "AcceptEula on its S3 data source), as gated JumpStart models require; needs `model_data`. Set it only "
        "after reading the model's license.",
    )
    model_size_gb: Number | None = Field(None, ge=0, description="Model weights in GB; checked against accelerator memory.")
    image_size_gb: Number | None = Field(
        None, gt=0, description="Compressed image size in GB; used by `fastscale estimate` (default from the estimate data)."
    )
    environment: dict[EnvName, EnvValue] = Field(
        default_factory=dict,
        max_length=100,
        description="Container environment (at most 100 variables). Values are stored in plain text in the "
        "Terraform state and the SageMaker description: never put secrets here, use `secrets`.",
    )
    secrets: dict[EnvName, Annotated[SecretRef, BeforeValidator(_secret_shorthand)]] = Field(
        default_factory=dict,
        max_length=100,
        description="Environment variable name -> Secrets Manager secret ARN (or {arn, kms_key_arn}). The "
        "container gets <NAME>_SECRET_ARN and must read the value itself at start; the value never "
        "reaches the config, the synthesized stack or the Terraform state.",
    )
    autoscaling: Autoscaling = Field(default_factory=Autoscaling, description="How this workload scales.")
    serving: Serving = Field(
        default_factory=Serving, description="What one copy serves (capacity, token rates), for estimate, simulate and recommend."
    )
    model_download_timeout: ApiInt | None = Field(None, description="Seconds allowed to download the model (60-3600).")
    startup_health_check_timeout: ApiInt | None = Field(
        None, description="Seconds allowed for the container to pass its health check (60-3600)."
    )


class ModelSpec(_Workload):
    """The single model of a single-model endpoint (scales by instances)."""


class InferenceComponentSpec(_Workload):
    """One model hosted as an inference component (scales by copies; several per endpoint)."""

    name: str = Field(..., description="Component name, unique within the file.")
    resources: Resources = Field(..., description="Compute reserved per copy.")
    copies: Capacity = Field(default_factory=Capacity, description="Copy counts; min 0 enables scale to zero.")
    data_cache: bool | None = Field(
        True,
        description="DataCacheConfig.EnableCaching: cache image and model on each instance so later copies start faster. "
        "null: no DataCacheConfig is sent (SageMaker's undocumented default), as on a component made without one "
        "(`fastscale adopt` keeps it so).",
    )
    deployment: ComponentDeployment | None = Field(
        None, description="This component's update settings, over the endpoint's `deployment`."
    )
    adopted: AdoptedComponent | None = Field(
        None, description="The live inference component this one takes over (written by `fastscale adopt`)."
    )
    overrides: Overrides = Field(default_factory=dict, description=_OVERRIDES_HELP)
