"""A live endpoint's traffic in moto, for the ``--from-endpoint`` tests: an endpoint with SageMaker data capture,
capture files in AWS's documented layout and record format ("Capture data from real-time endpoint", SageMaker
developer guide: ``s3://<destination>/<endpoint>/<variant>/yyyy/mm/dd/hh/<file>.jsonl``, one JSON record per
request), CloudWatch datapoints sent with ``put_metric_data``, and a log of every call a reader makes."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

#: "Now" for every test that reads traffic: half a minute into 12:00 UTC, so the window ends at 12:00.
NOW = dt.datetime(2026, 1, 1, 12, 0, 30, tzinfo=dt.UTC)
START = dt.datetime(2026, 1, 1, 11, 0, tzinfo=dt.UTC)  # one hour before NOW's window ends
BUCKET = "demo-capture"
PREFIX = "datacapture"
DESTINATION = f"s3://{BUCKET}/{PREFIX}"
ROLE = "arn:aws:iam::123456789012:role/sagemaker"
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0"


def endpoint(sm: Any, name: str, *, capture: bool = True, sampling: int = 100, modes: Iterable[str] = ("Input", "Output"),
             destination: str = DESTINATION) -> None:
    """A one-variant endpoint (AllTraffic), with data capture to ``destination`` when ``capture``."""
    sm.create_model(ModelName=f"{name}-model", ExecutionRoleArn=ROLE, PrimaryContainer={"Image": IMAGE})
    extra = {}
    if capture:
        extra["DataCaptureConfig"] = {"EnableCapture": True, "InitialSamplingPercentage": sampling,
                                      "DestinationS3Uri": destination,
                                      "CaptureOptions": [{"CaptureMode": m} for m in modes]}
    sm.create_endpoint_config(EndpointConfigName=f"{name}-config", ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": f"{name}-model", "InitialInstanceCount": 1,
        "InstanceType": "ml.g4dn.xlarge"}], **extra)
    sm.create_endpoint(EndpointName=name, EndpointConfigName=f"{name}-config")


def chat(prompt: str, answer: str, usage: tuple[int, int] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """An OpenAI-style chat request and its response, with ``usage`` (prompt, completion tokens) or without."""
    request = {"messages": [{"role": "user", "content": prompt}], "max_tokens": 512}
    response: dict[str, Any] = {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}]}
    if usage is not None:
        response["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    return request, response


def tgi(prompt: str, answer: str, generated: int | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A Hugging Face TGI request and response (``details.generated_tokens`` when ``generated`` is given)."""
    response: dict[str, Any] = {"generated_text": answer}
    if generated is not None:
        response["details"] = {"finish_reason": "length", "generated_tokens": generated}
    return {"inputs": prompt, "parameters": {"max_new_tokens": 256}}, [response]


def _side(body: Any, mode: str, encoding: str) -> dict[str, Any]:
    text = body if isinstance(body, str) else json.dumps(body)
    data = base64.b64encode(text.encode()).decode() if encoding == "BASE64" else text
    return {"observedContentType": "application/json", "mode": mode, "data": data, "encoding": encoding}


def record(at: dt.datetime, request: Any, response: Any = None, *, encoding: str = "JSON", event: int = 0,
           whole_seconds: bool = True) -> str:
    """One captured request as data capture writes it: one JSON line."""
    capture = {"endpointInput": _side(request, "INPUT", encoding)}
    if response is not None:
        capture["endpointOutput"] = _side(response, "OUTPUT", encoding)
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ") if whole_seconds else at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return json.dumps({"captureData": capture,
                       "eventMetadata": {"eventId": f"00000000-0000-0000-0000-{event:012d}", "inferenceTime": stamp},
                       "eventVersion": "0"})


def capture_key(endpoint_name: str, hour: dt.datetime, part: str = "0", variant: str = "AllTraffic") -> str:
    return f"{PREFIX}/{endpoint_name}/{variant}/{hour:%Y/%m/%d/%H}/{hour:%M-%S}-{part}.jsonl"


def put_capture(s3: Any, files: dict[str, list[str]]) -> None:
    """Capture files (key -> lines) in the capture bucket."""
    existing = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
    if BUCKET not in existing:
        s3.create_bucket(Bucket=BUCKET)
    for key, lines in files.items():
        s3.put_object(Bucket=BUCKET, Key=key, Body=("\n".join(lines) + "\n").encode())


def variant_dims(endpoint_name: str, variant: str = "AllTraffic") -> list[dict[str, str]]:
    return [{"Name": "EndpointName", "Value": endpoint_name}, {"Name": "VariantName", "Value": variant}]


def put_metric(cw: Any, name: str, points: Iterable[tuple[dt.datetime, float]], dims: list[dict[str, str]]) -> None:
    """Datapoints of an AWS/SageMaker metric, as SageMaker would have sent them."""
    data = [{"MetricName": name, "Dimensions": dims, "Timestamp": at, "Value": value, "Unit": "None"}
            for at, value in points]
    for i in range(0, len(data), 500):
        cw.put_metric_data(Namespace="AWS/SageMaker", MetricData=data[i:i + 500])


def per_minute(counts: list[int], start: dt.datetime = START) -> list[tuple[dt.datetime, float]]:
    return [(start + dt.timedelta(minutes=i), float(n)) for i, n in enumerate(counts)]


@contextmanager
def call_log(clients: dict[str, Any]) -> Iterator[list[str]]:
    """Every operation the given clients make while the block runs (e.g. "DescribeEndpoint")."""
    made: list[str] = []

    def note(model: Any, **_: Any) -> None:
        made.append(model.name)

    handlers = []
    for client in clients.values():
        if hasattr(client, "meta"):
            client.meta.events.register("before-call", note)
            handlers.append(client)
    try:
        yield made
    finally:
        for client in handlers:
            client.meta.events.unregister("before-call", note)


#: What reading may call: nothing that creates, changes or deletes.
READ_ONLY = ("Describe", "List", "Get", "Head")


def only_reads(operations: list[str]) -> bool:
    return bool(operations) and all(op.startswith(READ_ONLY) for op in operations)
