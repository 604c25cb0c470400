"""Number types of the config: what the AWS APIs can carry, so what validates is exactly what synth writes.

- Every integer (counts, seconds, minutes, MB, thresholds) is a 32-bit signed integer: the type of every
  such member in the SageMaker, Application Auto Scaling and CloudWatch service models (botocore's
  ``integer`` shapes). Values beyond it would be rounded on their way through jsii (JavaScript numbers
  hold integers exactly only up to 2^53), so ``99999999999999999999`` would be synthesized as another number.
  ``true`` / ``false`` are not integers here (YAML's ``yes`` would otherwise become 1).
- Every float is finite: ``.nan`` and ``.inf`` are refused (JSON has no such values, and no limit compares
  meaningfully with them).

Tighter limits that depend on the setting (timeouts 60-3600 s, instance storage, alarm thresholds, ...)
are rules, each with its own code, in ``infra.rules``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, Strict

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

#: Largest ML storage volume SageMaker attaches to an endpoint instance (ProductionVariant.VolumeSizeInGB max).
MAX_VOLUME_GB = 512
#: InvokeEndpoint: a model container must respond within 60 seconds.
MAX_MODEL_LATENCY_MS = 60_000
#: Application Auto Scaling TargetTrackingScalingPolicyConfiguration.TargetValue: "in the range of -2^360 to 2^360".
MAX_TARGET_VALUE = 2.0**360
#: Most prompt tokens, and most output tokens, one request of a trace may have (``simulate --requests``,
#: ``recommend``): fastscale's choice, far beyond what a model reads or writes in one request. A larger count
#: is a typo or a hostile file, which the request-level model would turn into times no float holds.
MAX_REQUEST_TOKENS = 100_000_000


def _int32(value: int) -> int:
    if not INT32_MIN <= value <= INT32_MAX:
        digits = len(str(abs(value)))
        raise ValueError(
            f"a {digits}-digit number is more than AWS APIs accept: counts, sizes and times are 32-bit integers "
            f"(at most {INT32_MAX})"
        )
    return value


def _not_bool(value: object) -> object:
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean (true/false/yes/no)")
    return value


#: An integer the AWS APIs can carry exactly.
ApiInt = Annotated[int, BeforeValidator(_not_bool), Strict(), AfterValidator(_int32), Field(json_schema_extra={"minimum": INT32_MIN, "maximum": INT32_MAX})]
#: A finite float (NaN / infinity are refused by the models' `allow_inf_nan=False`); never a boolean.
Number = Annotated[float, BeforeValidator(_not_bool)]
