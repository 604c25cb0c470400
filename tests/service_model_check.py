"""An answer checked against botocore's service model, as a client no one here wrote would read it.

botocore validates what a client sends (``ParamValidator``) but parses whatever it receives, dropping members its
model does not know; SDKs generated from the same models (the SageMaker Python SDK 3.x among them) are stricter
and fail on a structure that lacks a required member. :func:`answer_problems` reports, for one call:

- members of the raw JSON body that the operation's output shape does not have, at any depth;
- members that are ``null`` (AWS never answers one), ``{}`` where the shape does not require the member (an
  empty structure with required members is not a valid answer at all), and, in SageMaker's ``Describe*``
  answers, ``[]`` where the shape does not require the member (SageMaker leaves out a list that was never set;
  other services, CloudWatch's alarm actions say, answer empty lists, and so do list calls);
- what botocore's own ``ParamValidator`` finds in the parsed answer against the output shape: a missing
  required member, a value of the wrong type.

:func:`recording` gives a client whose raw JSON bodies are kept for that check.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
from botocore.validate import ParamValidator

REGION = "us-east-1"


def recording(url: str | None, service: str) -> Any:
    """A client of ``service`` at ``url`` (None: moto in-process) that keeps each call's raw JSON body in
    ``client.raw[operation name]``."""
    kwargs = {"endpoint_url": url} if url else {}
    api = boto3.client(service, region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing",
                       **kwargs)
    api.raw = {}

    def keep(operation_model: Any, response_dict: dict[str, Any], **_: Any) -> None:
        body = response_dict.get("body") or b""
        try:
            api.raw[operation_model.name] = json.loads(body) if body else {}
        except (ValueError, UnicodeDecodeError):  # XML or CBOR: only the parsed answer is checked
            api.raw[operation_model.name] = None

    api.meta.events.register("before-parse.*.*", keep)
    return api


def _walk(value: Any, shape: Any, path: str, problems: list[str], lists_left_out: bool, required: bool = False) -> None:
    if value is None or (value == {} and not required) or (value == [] and lists_left_out and not required):
        problems.append(f"{path}: {json.dumps(value)} where AWS leaves the member out")
        return
    if shape.type_name == "structure" and isinstance(value, dict):
        for key, member in value.items():
            if key not in shape.members:
                problems.append(f"{path}.{key}: not a member of {shape.name}")
                continue
            _walk(member, shape.members[key], f"{path}.{key}", problems, lists_left_out,
                  key in shape.required_members)
    elif shape.type_name == "list" and isinstance(value, list):
        for i, item in enumerate(value):
            _walk(item, shape.member, f"{path}[{i}]", problems, lists_left_out, required=True)
    elif shape.type_name == "map" and isinstance(value, dict):
        for key, item in value.items():
            _walk(item, shape.value, f"{path}.{key}", problems, lists_left_out, required=True)


def answer_problems(api: Any, operation: str, parsed: dict[str, Any]) -> list[str]:
    """What is wrong with ``parsed``, the answer to ``operation`` (and with its raw body, when it was JSON)."""
    shape = api.meta.service_model.operation_model(operation).output_shape
    problems: list[str] = []
    raw = getattr(api, "raw", {}).get(operation)
    lists_left_out = api.meta.service_model.service_name == "sagemaker" and operation.startswith("Describe")
    if raw is not None:
        _walk(raw, shape, operation, problems, lists_left_out, required=True)
    answer = {k: v for k, v in parsed.items() if k != "ResponseMetadata"}
    report = ParamValidator().validate(answer, shape)
    if report.has_errors():
        problems += [f"{operation}: {line.strip()}" for line in report.generate_report().splitlines()[1:]
                     if line.strip()]
    return problems
