"""A live endpoint's traffic read from AWS, for ``simulate --from-endpoint`` and ``recommend --from-endpoint``.

Read-only: DescribeEndpoint and DescribeEndpointConfig (is data capture on, where does it write, at what
sampling), ListObjectsV2 and GetObject on the capture files, GetMetricData on ``AWS/SageMaker``; nothing is
created, changed or deleted. The request trace itself is built by :mod:`fastscale.infra.analysis.endpoint_traffic`.

- **Data capture** when the endpoint has it on (and, for an inference component, the endpoint hosts only that
  component: captured records do not name the component): the files of every hour of the window under
  ``<destination>/<endpoint>/<variant>/yyyy/mm/dd/hh/``, streamed line by line.
- Otherwise **CloudWatch**: ``Invocations`` (Sum) per 60 s, and per 10 s where the window lies within the
  3 hours CloudWatch keeps sub-minute datapoints, with the 10-second ``ConcurrentRequestsPerModel`` (variant)
  or ``ConcurrentRequestsPerCopy`` (component) to place each minute's requests among its 10-second periods, and
  ``ModelLatency`` (Average) to report. Dimensions: ``EndpointName`` + ``VariantName`` of each variant, or
  ``InferenceComponentName``.

Every read is bounded (:class:`ReadLimits`: capture files, bytes, requests, bytes in a line, datapoints per
metric); a limit that is reached ends the trace at the last whole hour (or datapoint) read, and the trace says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.analysis.endpoint_traffic import (
    DEFAULT_TOKENS,
    CaptureTally,
    EndpointTrace,
    LiveTarget,
    NoTrafficError,
    Series,
    TokenProfile,
    Window,
    from_capture,
    from_metrics,
    split_lines,
)
from fastscale.infra.analysis.endpoint_traffic.window import iso
from fastscale.infra.aws.clients import AwsClients, ClientsArg, describe_failure, paginate, resolve, translate_errors
from fastscale.infra.base.aws_facts import (
    HIGH_RESOLUTION_PERIOD_S,
    MODEL_LATENCY_METRIC,
    NS_INVOCATIONS,
    STANDARD_PERIOD_S,
)

INVOCATIONS_METRIC = "Invocations"
VARIANT_CONCURRENCY_METRIC = "ConcurrentRequestsPerModel"
COMPONENT_CONCURRENCY_METRIC = "ConcurrentRequestsPerCopy"

_CHUNK = 1 << 20


@dataclass(frozen=True)
class ReadLimits:
    """How much one read may take: capture files, their bytes, the requests kept, the bytes of one line (a longer
    one is skipped, its bytes dropped as they come), and the datapoints of one metric."""

    capture_objects: int = 10_000
    capture_bytes: int = 1 << 30
    capture_requests: int = 1_000_000
    line_bytes: int = 8 << 20
    metric_datapoints: int = 100_800  # what one GetMetricData call returns at most

    def reached(self, objects: int, read_bytes: int, requests: int) -> str | None:
        if objects > self.capture_objects:
            return f"more than {self.capture_objects} capture files"
        if read_bytes > self.capture_bytes:
            return f"more than {self.capture_bytes >> 20} MiB of capture files"
        if requests > self.capture_requests:
            return f"more than {self.capture_requests} requests"
        return None


@dataclass(frozen=True)
class CaptureSetup:
    """An endpoint's data capture as DescribeEndpoint and DescribeEndpointConfig report it."""

    destination: str  # DestinationS3Uri
    sampling: float  # percentage of requests captured
    captures_input: bool
    captures_output: bool

    @property
    def bucket_and_prefix(self) -> tuple[str, str] | None:
        """(bucket, key prefix without slashes at its ends) of an ``s3://`` destination; None otherwise."""
        if not self.destination.startswith("s3://"):
            return None
        bucket, _, prefix = self.destination[5:].partition("/")
        return (bucket, prefix.strip("/")) if bucket else None


def capture_setup(endpoint: dict[str, Any], config: dict[str, Any] | None) -> CaptureSetup | None:
    """Data capture of the endpoint when it is on: DescribeEndpoint's ``DataCaptureConfig`` summary (status,
    current sampling) completed by the endpoint configuration's (capture options, initial sampling)."""
    summary = endpoint.get("DataCaptureConfig") or {}
    configured = (config or {}).get("DataCaptureConfig") or {}
    destination = summary.get("DestinationS3Uri") or configured.get("DestinationS3Uri")
    enabled = summary.get("EnableCapture", configured.get("EnableCapture", True))
    if not destination or not enabled or summary.get("CaptureStatus") == "Stopped":
        return None
    sampling = summary.get("CurrentSamplingPercentage", configured.get("InitialSamplingPercentage", 100))
    modes = {str(o.get("CaptureMode", "")).lower() for o in configured.get("CaptureOptions") or []}
    both = not modes or "inputandoutput" in modes
    return CaptureSetup(destination, float(sampling), both or "input" in modes, both or "output" in modes)


@translate_errors
def read_traffic(
    target: LiveTarget,
    *,
    region: str,
    since: timedelta,
    now: datetime,
    clients: ClientsArg = None,
    tokens: TokenProfile | None = None,
    limits: ReadLimits = ReadLimits(),
) -> EndpointTrace:
    """The trace of ``target``'s traffic over the whole minutes of the last ``since`` before ``now``.

    Raises :class:`~fastscale.infra.analysis.endpoint_traffic.NoTrafficError` when nothing was recorded,
    ``AwsError`` when AWS refuses a call (an unknown endpoint: "Could not find endpoint")."""
    aws = resolve(clients, region)
    window = Window.ending(now, since)
    described = aws.sagemaker.describe_endpoint(EndpointName=target.endpoint)
    variants = [v["VariantName"] for v in described.get("ProductionVariants") or [] if v.get("VariantName")]
    notes = list(target.notes)
    setup = None
    if described.get("DataCaptureConfig"):
        config = aws.sagemaker.describe_endpoint_config(EndpointConfigName=described["EndpointConfigName"])
        setup = capture_setup(described, config)
    if setup is not None and target.component is not None and target.components_on_endpoint > 1:
        notes.append(f"data capture of {target.endpoint} is on, but its records do not name the inference component "
                     f"and the endpoint hosts {target.components_on_endpoint}: read from CloudWatch instead")
        setup = None
    if setup is not None and setup.bucket_and_prefix is None:
        notes.append(f"data capture writes to {setup.destination}, not an s3:// location fastscale reads: read from "
                     "CloudWatch instead")
        setup = None
    if setup is not None:
        try:
            return _from_capture(aws, target, region, window, setup, variants, tokens or DEFAULT_TOKENS, notes, limits)
        except NoTrafficError as exc:
            notes.append(f"{exc}: read from CloudWatch instead")
        except ClientError as exc:  # no bucket, no permission on it, a KMS key the caller cannot use
            notes.append(f"the capture files in {setup.destination} cannot be read ({describe_failure(exc)}): read "
                         "from CloudWatch instead")
    elif not any("CloudWatch instead" in n for n in notes):
        notes.append(f"data capture is off on {target.endpoint}: the trace comes from CloudWatch metrics")
    return _from_metrics(aws, target, region, window, variants, tokens or DEFAULT_TOKENS, notes, now, limits)


# --------------------------------------------------------------------------------------------- data capture


def _capture_objects(aws: AwsClients, bucket: str, prefix: str, endpoint: str, variants: list[str],
                     window: Window) -> Iterator[tuple[datetime, list[dict[str, Any]]]]:
    """(hour, the capture files of every variant filed under it), hour by hour."""
    for hour in window.hours():
        found: list[dict[str, Any]] = []
        for variant in variants:
            folder = "/".join(p for p in (prefix, endpoint, variant, hour.strftime("%Y/%m/%d/%H")) if p) + "/"
            found += list(paginate(aws.get("s3"), "list_objects_v2", "Contents", Bucket=bucket, Prefix=folder))
        yield hour, sorted(found, key=lambda o: o["Key"])


def _from_capture(aws: AwsClients, target: LiveTarget, region: str, window: Window, setup: CaptureSetup,
                  variants: list[str], tokens: TokenProfile, notes: list[str], bounds: ReadLimits) -> EndpointTrace:
    where = setup.bucket_and_prefix
    assert where is not None
    bucket, prefix = where
    s3 = aws.get("s3")
    tally = CaptureTally(window, tokens)
    objects = read_bytes = 0
    limits: list[str] = []
    if not setup.captures_output:
        notes.append("data capture records requests only (no responses): output tokens take the profile")
    for hour, files in _capture_objects(aws, bucket, prefix, target.endpoint, variants, window):
        reached = bounds.reached(objects + len(files), read_bytes + sum(int(f.get("Size", 0)) for f in files),
                                 len(tally))
        if reached is None:
            for f in files:
                body = s3.get_object(Bucket=bucket, Key=f["Key"])["Body"]
                try:
                    tally.read(split_lines(body.iter_chunks(_CHUNK), bounds.line_bytes), f["Key"], bounds.line_bytes)
                finally:
                    body.close()
                objects += 1
                read_bytes += int(f.get("Size", 0))
            reached = bounds.reached(objects, read_bytes, len(tally))
        if reached is not None:
            tally.cut(hour.timestamp())
            cut_at = max(hour, window.start)
            limits.append(f"read limit reached ({reached}): the trace ends at {iso(cut_at)}, where the unread "
                          "capture files begin")
            window = Window(window.start, cut_at)
            tally.window = window
            if not len(tally):
                notes.append(f"read limit reached ({reached}) before the first capture file of {iso(cut_at)}")
            break
    return from_capture(tally, endpoint=target.endpoint, component=target.component, region=region,
                        destination=setup.destination, sampling=setup.sampling, notes=notes, limits=limits)


# --------------------------------------------------------------------------------------------- metrics


def _query(qid: str, name: str, dims: list[dict[str, str]], stat: str, period: int) -> dict[str, Any]:
    return {"Id": qid, "ReturnData": True,
            "MetricStat": {"Metric": {"Namespace": NS_INVOCATIONS, "MetricName": name, "Dimensions": dims},
                           "Period": period, "Stat": stat}}


def _read_metrics(aws: AwsClients, queries: list[dict[str, Any]], window: Window, most: int,
                  limits: list[str]) -> dict[str, list[tuple[datetime, float]]]:
    """Query id -> its datapoints, at most ``most`` each (a limit reached is noted)."""
    out: dict[str, list[tuple[datetime, float]]] = {q["Id"]: [] for q in queries}
    full: set[str] = set()
    pages = aws.cloudwatch.get_paginator("get_metric_data").paginate(
        MetricDataQueries=queries, StartTime=window.start, EndTime=window.end, ScanBy="TimestampAscending")
    for page in pages:
        for result in page.get("MetricDataResults", []):
            qid = result["Id"]
            room = most - len(out[qid])
            points = list(zip(result.get("Timestamps", []), result.get("Values", []), strict=False))
            if len(points) > room:
                full.add(qid)
            out[qid] += [(at.astimezone(UTC), float(v)) for at, v in points[:room]]
        if len(full) == len(out):
            break
    names = {q["Id"]: f'{q["MetricStat"]["Metric"]["MetricName"]} at {q["MetricStat"]["Period"]} s' for q in queries}
    for qid in sorted(full):
        limits.append(f"read limit reached: {most} datapoints of {names[qid]}; the trace ends at the last one read")
    return out


def _summed(series: list[list[tuple[datetime, float]]]) -> tuple[tuple[datetime, float], ...]:
    """Datapoints of several variants added up per timestamp."""
    total: dict[datetime, float] = {}
    for points in series:
        for at, v in points:
            total[at] = total.get(at, 0.0) + v
    return tuple(sorted(total.items()))


def _from_metrics(aws: AwsClients, target: LiveTarget, region: str, window: Window, variants: list[str],
                  tokens: TokenProfile, notes: list[str], now: datetime, bounds: ReadLimits) -> EndpointTrace:
    if target.component is not None:
        dims_list = [[{"Name": "InferenceComponentName", "Value": target.component}]]
        concurrency_metric = COMPONENT_CONCURRENCY_METRIC
    else:
        dims_list = [[{"Name": "EndpointName", "Value": target.endpoint}, {"Name": "VariantName", "Value": v}]
                     for v in variants]
        concurrency_metric = VARIANT_CONCURRENCY_METRIC
    fine = window.within_high_resolution(now)
    queries = []
    for i, dims in enumerate(dims_list):
        queries += [_query(f"invocations{i}", INVOCATIONS_METRIC, dims, "Sum", STANDARD_PERIOD_S),
                    _query(f"latency{i}", MODEL_LATENCY_METRIC, dims, "Average", STANDARD_PERIOD_S)]
        if fine:
            queries += [_query(f"invocations10s{i}", INVOCATIONS_METRIC, dims, "Sum", HIGH_RESOLUTION_PERIOD_S),
                        _query(f"concurrency{i}", concurrency_metric, dims, "Sum", HIGH_RESOLUTION_PERIOD_S)]
    limits: list[str] = []
    got = _read_metrics(aws, queries, window, bounds.metric_datapoints, limits)

    def series(kind: str, name: str, stat: str, period: int) -> Series:
        return Series(name, stat, period, _summed([got.get(f"{kind}{i}", []) for i in range(len(dims_list))]))

    invocations = series("invocations", INVOCATIONS_METRIC, "Sum", STANDARD_PERIOD_S)
    latency = series("latency", MODEL_LATENCY_METRIC, "Average", STANDARD_PERIOD_S) if len(dims_list) == 1 else None
    fine_invocations = concurrency = None
    if fine:
        fine_invocations = series("invocations10s", INVOCATIONS_METRIC, "Sum", HIGH_RESOLUTION_PERIOD_S)
        concurrency = series("concurrency", concurrency_metric, "Sum", HIGH_RESOLUTION_PERIOD_S)
        if not concurrency.sub_minute and not fine_invocations.sub_minute:
            notes.append(f"no 10-second {concurrency_metric} datapoints in the window: each minute's requests are "
                         "spread over the whole minute")
    else:
        notes.append("the window reaches back more than 3 hours, beyond CloudWatch's retention of 10-second "
                     "datapoints: each minute's requests are spread over the whole minute")
    return from_metrics(window, endpoint=target.endpoint, component=target.component, region=region,
                        invocations=invocations, fine_invocations=fine_invocations, concurrency=concurrency,
                        latency=latency, tokens=tokens, notes=notes, limits=limits)
