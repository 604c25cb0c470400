"""Request-level simulation: every request of a trace routed to a copy, queued, prefilled and decoded.

The scaling is the engine's (:mod:`fastscale.infra.analysis.simulate.engine`): Application Auto Scaling's alarms,
cooldowns, step policy and the estimate model's cold starts. What changes is the load: instead of a number of
concurrent requests per second, the requests of a trace arrive one by one, and each second the engine reads
back what they did (requests in flight or queued per copy: the ``ConcurrentRequestsPerCopy`` metric) and which
failed with no copy in service (``NoCapacityInvocationFailures``).

The batching model (also in ``infra/analysis/simulate_params.json``, ``derivation``): a copy has ``max_concurrency``
slots. A request waits in its copy's FIFO queue for a slot; in a slot its prompt is prefilled at the copy's
prefill rate, one prompt at a time (prefill is compute-bound, so prompts that overlap share the compute); its
first token comes when its prefill ends. It then decodes its output tokens at the per-sequence rate
``decode / (1 + slowdown x (k - 1))``, ``k`` the requests holding slots on the copy when it took its slot (fixed
for the request: a simple model of continuous batching, where each extra sequence slows every step a little).
A request whose first token would come later than the invocation timeout fails. One heap of slot releases and
time-outs, arrivals read in order: a one-hour trace of 20,000 requests takes well under a second.

Pure Python, deterministic: random routing uses a seeded generator.
"""

from __future__ import annotations

import csv
import dataclasses
import heapq
import io
import math
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fastscale.infra.analysis.simulate.engine import simulate
from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.result import Result
from fastscale.infra.analysis.simulate.spec import LoadStopped, SimSpec
from fastscale.infra.analysis.simulate.traffic import MAX_TRACE_BYTES, MAX_WINDOW_SECONDS
from fastscale.infra.base import catalog
from fastscale.infra.config import InferenceComponentSpec, format_path, safe_yaml

#: Routing strategies as the config spells them (ProductionVariantRoutingConfig.RoutingStrategy).
ROUTINGS = ("least_outstanding_requests", "random", "prefix_aware", "kv_aware")
#: Strategies queued as least outstanding requests. A trace holds token counts, not prompts, so which requests
#: share a prefix (PREFIX_AWARE) or whose prompt start an instance holds in its KV cache (KV_AWARE) is unknown,
#: and AWS documents no figure for the time a hit saves; KV_AWARE falls back to least outstanding requests
#: when no instance holds the prompt's start, and PREFIX_AWARE moves a request on at its concurrency
#: threshold. So both are modelled as least outstanding requests, with no prefill saved (docs/simulate.md).
QUEUED_AS_LEAST_OUTSTANDING = ("least_outstanding_requests", "prefix_aware", "kv_aware")

#: Header of the public Azure LLM inference traces, and of a trace with times in seconds (case-insensitive).
AZURE_COLUMNS = ("timestamp", "contexttokens", "generatedtokens")
SECONDS_COLUMNS = ("timestamp", "input_tokens", "output_tokens")

#: Most requests read from one trace (a week at ~30 requests per second).
MAX_REQUESTS = 20_000_000

_SERVED, _NO_CAPACITY, _TIMED_OUT = 1, 2, 3


class RequestInputError(ValueError):
    """A request trace or a profile that cannot be read, or rates that cannot be known: a user mistake."""


# --------------------------------------------------------------------------------------------- trace


@dataclass(frozen=True)
class RequestTrace:
    """Requests in arrival order: seconds from the trace's start, prompt and output tokens."""

    arrivals: tuple[float, ...]
    input_tokens: tuple[int, ...]
    output_tokens: tuple[int, ...]
    source: str
    format: str  # azure | seconds

    def __len__(self) -> int:
        return len(self.arrivals)

    @property
    def seconds(self) -> int:
        """The window that holds every arrival (whole seconds)."""
        return int(self.arrivals[-1]) + 1 if self.arrivals else 1

    @property
    def description(self) -> str:
        return f"{len(self)} requests over {self.seconds} s from {Path(self.source).name} ({self.format} format)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "requests": len(self),
            "seconds": self.seconds,
            "mean_input_tokens": round(sum(self.input_tokens) / max(1, len(self)), 1),
            "mean_output_tokens": round(sum(self.output_tokens) / max(1, len(self)), 1),
        }


def _azure_time(text: str) -> datetime:
    """``2023-11-16 18:15:46.6805900``: the fraction may have more digits than ``datetime`` keeps (7 here)."""
    head, dot, frac = text.strip().partition(".")
    if not dot:
        return datetime.fromisoformat(head)
    if not frac.isdigit():
        raise ValueError(text)
    return datetime.fromisoformat(f"{head}.{(frac + '00000')[:6]}")


def parse_request_trace(text: str, source: str) -> RequestTrace:
    """A CSV with the header ``TIMESTAMP,ContextTokens,GeneratedTokens`` (Azure LLM inference traces: a
    date-time per request) or ``timestamp,input_tokens,output_tokens`` (seconds); any column order, names
    case-insensitive. Rows are sorted by time; times start at the first request."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise RequestInputError(f"{source}: the trace is empty; it needs a header line") from None
    except csv.Error as exc:
        raise RequestInputError(f"{source}, line 1: not CSV ({exc})") from None
    names = [h.strip().lower().lstrip("\ufeff") for h in header]
    if sorted(names) == sorted(AZURE_COLUMNS):
        fmt, columns = "azure", AZURE_COLUMNS
    elif sorted(names) == sorted(SECONDS_COLUMNS):
        fmt, columns = "seconds", SECONDS_COLUMNS
    else:
        raise RequestInputError(
            f"{source}, line 1: expected the header TIMESTAMP,ContextTokens,GeneratedTokens (Azure LLM inference "
            f"trace) or timestamp,input_tokens,output_tokens (seconds); found {','.join(header) or 'nothing'}"
        )
    ti, ii, oi = (names.index(c) for c in columns)
    rows: list[tuple[float, int, int]] = []
    first: datetime | None = None
    try:
        for row in reader:
            line = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(names):
                raise RequestInputError(f"{source}, line {line}: {len(row)} values for {len(names)} columns")
            stamp = row[ti].strip()
            if fmt == "azure":
                try:
                    when = _azure_time(stamp)
                except ValueError:
                    raise RequestInputError(
                        f"{source}, line {line}: TIMESTAMP {stamp!r} is not a date and time such as "
                        "2023-11-16 18:15:46.6805900"
                    ) from None
                if when.tzinfo is not None:
                    when = when.astimezone(UTC).replace(tzinfo=None)
                first = first or when
                at = (when - first).total_seconds()
            else:
                try:
                    at = float(stamp)
                except ValueError:
                    raise RequestInputError(f"{source}, line {line}: timestamp {stamp!r} is not a number of seconds") from None
                if not math.isfinite(at) or at < 0:
                    raise RequestInputError(f"{source}, line {line}: timestamp must be a finite number >= 0, not {stamp}")
            tokens = []
            for index, name in ((ii, header[ii].strip()), (oi, header[oi].strip())):
                cell = row[index].strip()
                try:
                    value = int(cell)
                except ValueError:
                    raise RequestInputError(f"{source}, line {line}: {name} {cell!r} is not a whole number of tokens") from None
                if value < 0:
                    raise RequestInputError(f"{source}, line {line}: {name} must be 0 or more, not {value}")
                tokens.append(value)
            rows.append((at, tokens[0], tokens[1]))
            if len(rows) > MAX_REQUESTS:
                raise RequestInputError(f"{source}: more than {MAX_REQUESTS} requests; simulate a shorter window")
    except csv.Error as exc:
        raise RequestInputError(f"{source}, line {reader.line_num}: not CSV ({exc})") from None
    if not rows:
        raise RequestInputError(f"{source}: the trace has a header but no requests")
    rows.sort(key=lambda r: r[0])
    start = rows[0][0] if fmt == "azure" else 0.0
    if rows[-1][0] - start >= MAX_WINDOW_SECONDS:
        raise RequestInputError(f"{source}: the trace spans more than the one-week limit")
    return RequestTrace(
        arrivals=tuple(r[0] - start for r in rows),
        input_tokens=tuple(r[1] for r in rows),
        output_tokens=tuple(r[2] for r in rows),
        source=source,
        format=fmt,
    )


def read_request_trace(path: str | Path) -> RequestTrace:
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_TRACE_BYTES:
            raise RequestInputError(f"{p}: the trace is {size} bytes; at most {MAX_TRACE_BYTES} are read")
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise RequestInputError(f"{p}: trace file not found") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise RequestInputError(f"{p}: cannot read the trace ({exc.__class__.__name__})") from None
    return parse_request_trace(text, str(p))


# --------------------------------------------------------------------------------------------- rates


class Profile(BaseModel):
    """A measured service profile of one copy (``--profile FILE``, YAML); see docs/simulate.md."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_type: str | None = Field(None, description="Where it was measured (default: the endpoint's instance type).")
    accelerators: int | None = Field(None, ge=1, description="Accelerators of the copy it was measured on.")
    max_concurrency: int | None = Field(None, ge=1, description="Slots: requests one copy runs at once.")
    prefill_tokens_per_second: float | None = Field(None, gt=0)
    decode_tokens_per_second: float | dict[int, float] | None = Field(
        None, description="Per-sequence decode rate alone, or a table: sequences on the copy -> per-sequence rate."
    )
    decode_slowdown_per_sequence: float | None = Field(None, ge=0)


def read_profile(path: str | Path) -> Profile:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RequestInputError(f"{p}: profile file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RequestInputError(f"{p}: cannot read the profile ({exc.__class__.__name__})") from None
    try:
        loaded = safe_yaml.load(text)
    except safe_yaml.UnsafeYamlError as exc:
        raise RequestInputError(f"{p}: " + "; ".join(f"line {q.line}: {q.message}" for q in exc.problems)) from None
    try:
        profile = Profile.model_validate(loaded.data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = format_path(tuple(err["loc"])) or "<file>"
        raise RequestInputError(f"{p}: {where}: {err['msg']} (keys: {', '.join(Profile.model_fields)})") from None
    table = profile.decode_tokens_per_second
    if isinstance(table, dict):
        bad = [f"{k}: {v}" for k, v in table.items() if k < 1 or not v > 0]
        if bad or not table:
            raise RequestInputError(f"{p}: decode_tokens_per_second: a table of sequences (>= 1) -> tokens per second (> 0)")
        if profile.decode_slowdown_per_sequence is not None:
            raise RequestInputError(f"{p}: decode_slowdown_per_sequence only goes with a single decode_tokens_per_second")
    elif table is not None and not table > 0:
        raise RequestInputError(f"{p}: decode_tokens_per_second must be positive")
    return profile


@dataclass(frozen=True)
class ServiceRates:
    """How fast one copy serves requests."""

    slots: int  # requests holding a slot at once (max_concurrency)
    prefill_tokens_per_second: float
    decode_tokens_per_second: float  # one sequence alone
    decode_slowdown_per_sequence: float
    decode_table: tuple[tuple[int, float], ...] = ()  # measured (sequences, per-sequence rate), overrides the slowdown
    sources: tuple[str, ...] = ()

    def per_sequence_decode(self, k: int) -> float:
        """Tokens per second each of ``k`` sequences on the copy decodes."""
        if self.decode_table:
            points = self.decode_table
            if k <= points[0][0]:
                return points[0][1]
            for (k0, r0), (k1, r1) in zip(points, points[1:], strict=False):
                if k <= k1:
                    return r0 + (r1 - r0) * (k - k0) / (k1 - k0)
            last_k, last_r = points[-1]
            return last_r * last_k / k  # beyond the table: the copy's throughput stays at its last measured value
        return self.decode_tokens_per_second / (1 + self.decode_slowdown_per_sequence * (k - 1))

    def to_dict(self) -> dict[str, Any]:
        return {
            "slots": self.slots,
            "prefill_tokens_per_second": round(self.prefill_tokens_per_second, 1),
            "decode_tokens_per_second": round(self.decode_tokens_per_second, 2),
            "decode_tokens_per_second_at_slots": round(self.per_sequence_decode(self.slots), 2),
            "decode_slowdown_per_sequence": self.decode_slowdown_per_sequence if not self.decode_table else None,
            "sources": list(self.sources),
        }


def roofline(instance_type: str, accelerators: int, model_size_gb: float, params: SimulateParams) -> tuple[float, float] | None:
    """(prefill tokens/s, decode tokens/s of one sequence alone) of one copy from the accelerator's figures;
    None when the catalog or the parameters do not know the accelerator."""
    spec = catalog.get(instance_type)
    if spec is None or model_size_gb <= 0 or accelerators < 1:
        return None
    figures = params.requests.accelerators.get(spec.accelerator_name)
    if figures is None:
        return None
    r = params.requests
    devices = accelerators * (1.0 if accelerators == 1 else r.tensor_parallel_efficiency.value)
    decode = r.decode_bandwidth_efficiency.value * figures.memory_bandwidth_gb_per_s.value * devices / model_size_gb
    prefill = r.prefill_compute_efficiency.value * figures.fp16_tflops.value * 1000 * devices / model_size_gb
    return prefill, decode


def copy_accelerators(ep: Any, w: Any, instance_type: str | None = None) -> int:
    """Accelerators one copy runs on: the component's reservation, or every accelerator of a single-model
    endpoint's instance."""
    if isinstance(w, InferenceComponentSpec):
        return int(w.resources.accelerators or 0)
    spec = catalog.get(instance_type or ep.instance_type)
    return spec.accelerator_count if spec is not None else 0


def service_rates(
    ep: Any,
    w: Any,
    capacity: float,
    params: SimulateParams,
    profile: Profile | None = None,
    *,
    instance_type: str | None = None,
    accelerators: int | None = None,
) -> ServiceRates:
    """A copy's rates: measured (the profile, else the config's ``serving.*``) where given, else the roofline.

    Measured rates belong to where they were measured (the profile's instance type and accelerators, else the
    endpoint's); on another instance type or accelerator count they are scaled by the ratio of the two
    rooflines. ``capacity`` is the copy's slots when the profile does not give them.
    """
    where = ep.name + (f" / {w.name}" if hasattr(w, "resources") else "")
    target_type = instance_type or ep.instance_type
    target_acc = accelerators if accelerators is not None else copy_accelerators(ep, w, target_type)
    ref_type = (profile.instance_type if profile and profile.instance_type else None) or ep.instance_type
    ref_acc = (profile.accelerators if profile and profile.accelerators else None) or copy_accelerators(ep, w, ref_type)
    size = w.model_size_gb
    here = roofline(target_type, target_acc, size, params) if size else None
    there = roofline(ref_type, ref_acc, size, params) if size else None
    same = (target_type, target_acc) == (ref_type, ref_acc)
    sources: list[str] = []

    def measured(value: float | None, kind: int, what: str, origin: str) -> float | None:
        if value is None:
            return None
        if same:
            sources.append(f"{what}: {origin}")
            return value
        if here is None or there is None:
            raise RequestInputError(
                f"{where}: {what} was measured on {ref_type} ({ref_acc} accelerator(s)) and cannot be carried over to "
                f"{target_type} ({target_acc}): give model_size_gb and a known accelerator, or a profile measured there"
            )
        sources.append(f"{what}: {origin} on {ref_type}, scaled by the roofline ratio to {target_type}")
        return value * here[kind] / there[kind]

    p_prefill = profile.prefill_tokens_per_second if profile else None
    p_decode = profile.decode_tokens_per_second if profile else None
    prefill = measured(p_prefill, 0, "prefill", "profile") if p_prefill is not None else measured(
        w.serving.prefill_tokens_per_second, 0, "prefill", "serving.prefill_tokens_per_second")
    table: tuple[tuple[int, float], ...] = ()
    if isinstance(p_decode, dict):
        points = sorted(p_decode.items())
        scale = 1.0
        if not same:
            first = measured(points[0][1], 1, "decode", "profile table")
            assert first is not None
            scale = first / points[0][1]
        else:
            sources.append("decode: profile table")
        table = tuple((k, v * scale) for k, v in points)
        decode: float | None = table[0][1]
    elif p_decode is not None:
        decode = measured(float(p_decode), 1, "decode", "profile")
    else:
        decode = measured(w.serving.decode_tokens_per_second, 1, "decode", "serving.decode_tokens_per_second")
    if prefill is None or decode is None:
        if here is None:
            missing = "model_size_gb" if not size else (
                f"the accelerator figures of {target_type}" if target_acc else "accelerators per copy")
            raise RequestInputError(
                f"{where}: no token rates: set serving.prefill_tokens_per_second and serving.decode_tokens_per_second "
                f"(or give --profile), or {missing} so they can be estimated from the accelerator"
            )
        if prefill is None:
            prefill = here[0]
            sources.append(f"prefill: roofline of {target_acc} x {target_type} accelerator(s), an estimate")
        if decode is None:
            decode = here[1]
            sources.append(f"decode: roofline of {target_acc} x {target_type} accelerator(s), an estimate")
    slowdown = params.requests.decode_slowdown_per_sequence.value
    if profile and profile.decode_slowdown_per_sequence is not None:
        slowdown = profile.decode_slowdown_per_sequence
    slots = profile.max_concurrency if profile and profile.max_concurrency else max(1, math.floor(capacity + 1e-9))
    return ServiceRates(slots, prefill, decode, slowdown, table, tuple(sources))


# --------------------------------------------------------------------------------------------- the load


class FailureLimitExceeded(LoadStopped):
    """More requests failed than the caller allowed (``RequestLoad(stop_after_failures=...)``): the run stopped."""

    def __init__(self, failed: int, second: int):
        super().__init__(f"{failed} requests failed by second {second}")
        self.failed = failed
        self.second = second


class RequestLoad:
    """The requests of a trace, served on the copies the engine has in service (spec.Load).

    ``stop_after_failures``: raise FailureLimitExceeded at the end of the first second after which more requests
    than that have failed (no capacity or timed out). Failures only ever add up, so a run stopped this way would
    have failed at least as many requests had it gone on: ``recommend`` uses it to drop a candidate that can no
    longer meet ``--max-rejected`` without simulating the rest of the trace."""

    def __init__(self, trace: RequestTrace, rates: ServiceRates, routing: str, timeout: float, seed: int = 0,
                 stop_after_failures: int | None = None):
        if routing not in ROUTINGS:
            raise ValueError(f"routing must be one of {ROUTINGS}")
        n = len(trace)
        self.arr = trace.arrivals
        self.inp = trace.input_tokens
        self.out = trace.output_tokens
        self.n = n
        self.timeout = float(timeout)
        self.slots = rates.slots
        self.inv_prefill = 1.0 / rates.prefill_tokens_per_second
        self.inv_decode = [0.0] + [1.0 / rates.per_sequence_decode(k) for k in range(1, rates.slots + 1)]
        self.lor = routing in QUEUED_AS_LEAST_OUTSTANDING
        self.rng = random.Random(seed)
        nan = math.nan
        self.ttft = [nan] * n
        self.e2e = [nan] * n
        self.wait = [nan] * n
        self.status = bytearray(n)
        self.next = 0
        self.heap: list[tuple[float, int, int, int]] = []  # (time, kind 0 release | 1 time-out, copy, request)
        self.free: list[int] = []
        self.outstanding: list[int] = []
        self.queues: list[deque[int]] = []
        self.prefill_free: list[float] = []
        self.index: dict[int, int] = {}
        self.routable: list[int] = []
        self.ids: list[int] = []
        self.total = 0
        self.waiting = 0
        self.last = 0.0
        self.area = 0.0
        self.qarea = 0.0
        self.failed = 0
        self.stop_after = stop_after_failures

    # -- the engine's side

    def step(self, second: int, serving: Sequence[int]) -> tuple[float, float, float]:
        if list(serving) != self.ids:
            self._sync(serving)
        rejected = self._run_until(second + 1.0)
        if self.stop_after is not None and self.failed > self.stop_after:
            raise FailureLimitExceeded(self.failed, second)
        self._account(second + 1.0)
        concurrency, queued = self.area, self.qarea
        self.area = self.qarea = 0.0
        return concurrency, queued, float(rejected)

    def finish(self) -> None:
        """After the window: the requests still queued or in flight run to their end on the last copies."""
        self._run_until(math.inf)

    def _sync(self, serving: Sequence[int]) -> None:
        self.ids = list(serving)
        for number in serving:
            if number not in self.index:
                self.index[number] = len(self.free)
                self.free.append(self.slots)
                self.outstanding.append(0)
                self.queues.append(deque())
                self.prefill_free.append(0.0)
        # A copy no longer in service takes no new request; what it holds runs to the end (connection draining).
        self.routable = [self.index[number] for number in serving]

    # -- the event loop

    def _account(self, now: float) -> None:
        dt = now - self.last
        if dt > 0:
            self.area += self.total * dt
            self.qarea += self.waiting * dt
            self.last = now

    def _run_until(self, end: float) -> int:
        """Serve arrivals and events before ``end``; returns the requests that failed with no copy in service.

        One loop with everything in locals: it runs for every request of every candidate of a search."""
        heap, arr, n = self.heap, self.arr, self.n
        inp, out, status, wait, ttft, e2e = self.inp, self.out, self.status, self.wait, self.ttft, self.e2e
        free, outstanding, queues, prefill_free = self.free, self.outstanding, self.queues, self.prefill_free
        routable, lor, slots, timeout = self.routable, self.lor, self.slots, self.timeout
        inv_prefill, inv_decode = self.inv_prefill, self.inv_decode
        push, pop, inf = heapq.heappush, heapq.heappop, math.inf
        total, waiting, last, area, qarea = self.total, self.waiting, self.last, self.area, self.qarea
        rejected = 0
        failed = self.failed
        i = self.next
        admit: list[tuple[int, int, float]] = []  # (request, copy, when) to start now
        while True:
            a = arr[i] if i < n else inf
            e = heap[0][0] if heap else inf
            if a >= end and e >= end:
                break
            if e <= a:
                at, kind, c, r = pop(heap)
                if at > last:
                    area += total * (at - last)
                    qarea += waiting * (at - last)
                    last = at
                if kind == 0:  # a slot is released
                    free[c] += 1
                    outstanding[c] -= 1
                    total -= 1
                    queue = queues[c]
                    while queue and free[c] > 0:
                        q = queue.popleft()
                        if status[q]:
                            continue  # timed out while queued
                        waiting -= 1
                        admit.append((q, c, at))
                        free[c] -= 1
                elif not status[r]:  # still queued when its time-out passes
                    status[r] = _TIMED_OUT
                    failed += 1
                    wait[r] = timeout
                    outstanding[c] -= 1
                    total -= 1
                    waiting -= 1
                if not admit:
                    continue
            else:
                if a > last:
                    area += total * (a - last)
                    qarea += waiting * (a - last)
                    last = a
                r = i
                i += 1
                if not routable:
                    status[r] = _NO_CAPACITY
                    rejected += 1
                    failed += 1
                    continue
                if not lor:
                    c = routable[self.rng.randrange(len(routable))]
                elif len(routable) > 1:
                    c = min(routable, key=outstanding.__getitem__)
                else:
                    c = routable[0]
                outstanding[c] += 1
                total += 1
                if free[c] <= 0:
                    queues[c].append(r)
                    waiting += 1
                    push(heap, (a + timeout, 1, c, r))
                    continue
                free[c] -= 1
                admit.append((r, c, a))
            # Requests taking a slot (its free count already lowered): prefill one prompt at a time, then decode
            # at the per-sequence rate of the batch it joins.
            for r, c, now in admit:
                k = slots - free[c]
                start = prefill_free[c]
                if start < now:
                    start = now
                first = start + inp[r] * inv_prefill
                prefill_free[c] = first
                arrived = arr[r]
                wait[r] = now - arrived
                if first - arrived > timeout:
                    # The invocation times out before the first token; the container still runs the prefill.
                    status[r] = _TIMED_OUT
                    failed += 1
                    push(heap, (first, 0, c, r))
                    continue
                status[r] = _SERVED
                done = first + out[r] * inv_decode[k]
                ttft[r] = first - arrived
                e2e[r] = done - arrived
                push(heap, (done, 0, c, r))
            admit.clear()
        self.next = i
        self.failed = failed
        self.total, self.waiting, self.last, self.area, self.qarea = total, waiting, last, area, qarea
        return rejected


# --------------------------------------------------------------------------------------------- results


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0-100) of sorted values; None when there are none."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


@dataclass(frozen=True)
class Latency:
    p50: float | None
    p90: float | None
    p99: float | None
    mean: float | None

    @classmethod
    def of(cls, values: list[float]) -> Latency:
        values.sort()
        mean = sum(values) / len(values) if values else None
        return cls(percentile(values, 50), percentile(values, 90), percentile(values, 99), mean)

    def to_dict(self) -> dict[str, float | None]:
        return {k: None if v is None else round(v, 3) for k, v in dataclasses.asdict(self).items()}


@dataclass(frozen=True)
class RequestStats:
    requests: int
    served: int
    no_capacity: int  # failed on arrival with no copy in service
    timed_out: int  # no first token within the invocation timeout
    over_timeout_end_to_end: int  # served, but the whole response took longer than the timeout
    ttft: Latency
    e2e: Latency
    queue: Latency  # seconds waiting for a slot, served requests
    timeout_seconds: float

    @property
    def rejected(self) -> int:
        return self.no_capacity + self.timed_out

    @property
    def rejected_fraction(self) -> float:
        return self.rejected / self.requests if self.requests else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "served": self.served,
            "rejected": self.rejected,
            "rejected_fraction": round(self.rejected_fraction, 6),
            "rejected_no_capacity": self.no_capacity,
            "rejected_timeout": self.timed_out,
            "timeout_seconds": self.timeout_seconds,
            "served_over_timeout_end_to_end": self.over_timeout_end_to_end,
            "ttft_seconds": self.ttft.to_dict(),
            "e2e_seconds": self.e2e.to_dict(),
            "queue_seconds": self.queue.to_dict(),
        }


def _stats(load: RequestLoad) -> RequestStats:
    status = load.status
    served = [i for i in range(load.n) if status[i] == _SERVED]
    timeout = load.timeout
    e2e = [load.e2e[i] for i in served]
    return RequestStats(
        requests=load.n,
        served=len(served),
        no_capacity=status.count(_NO_CAPACITY),
        timed_out=status.count(_TIMED_OUT),
        over_timeout_end_to_end=sum(1 for x in e2e if x > timeout),
        ttft=Latency.of([load.ttft[i] for i in served]),
        e2e=Latency.of(e2e),
        queue=Latency.of([load.wait[i] for i in served]),
        timeout_seconds=timeout,
    )


@dataclass(frozen=True)
class RequestSimulation:
    """One workload replayed request by request."""

    result: Result  # the scaling engine's run: copies, instances, alarms, cost over the window
    stats: RequestStats
    rates: ServiceRates
    routing: str

    @property
    def cost_usd(self) -> float | None:
        return self.result.summary.cost_usd

    def to_dict(self) -> dict[str, Any]:
        s = self.result.summary
        return {
            "routing": self.routing,
            "rates": self.rates.to_dict(),
            **self.stats.to_dict(),
            "peak_copies": s.peak_copies,
            "peak_instances": s.peak_instances,
            "instance_seconds": s.instance_seconds,
            "cost_usd": None if s.cost_usd is None else round(s.cost_usd, 4),
            "events": [e.to_dict() for e in self.result.events],
        }


def simulate_requests(
    spec: SimSpec, trace: RequestTrace, rates: ServiceRates, routing: str, timeout: float, seed: int = 0,
    stop_after_failures: int | None = None,
) -> RequestSimulation:
    """Replay ``trace`` request by request against ``spec``'s scaling; deterministic for a given seed.

    With ``stop_after_failures`` the run raises FailureLimitExceeded as soon as more requests than that failed.

    The window is the trace's (whole seconds up to its last arrival). The starting count is the steady state
    of the first minute's offered load (arrivals x the mean service time of a request alone on a copy).
    """
    load = RequestLoad(trace, rates, routing, timeout, seed, stop_after_failures)
    window = trace.seconds
    first_minute = sum(1 for a in trace.arrivals[: 100_000] if a < 60.0)
    alone = (
        sum(trace.input_tokens) / len(trace) / rates.prefill_tokens_per_second
        + sum(trace.output_tokens) / len(trace) / rates.decode_tokens_per_second
    )
    start = first_minute / min(60.0, float(window)) * alone
    spec = dataclasses.replace(spec, capacity=float(rates.slots), service_time=max(alone, 1e-6))
    demand = [0.0] * window
    demand[0] = start
    result = simulate(spec, demand, load)
    load.finish()
    return RequestSimulation(result, _stats(load), rates, routing)


def workload_config(config: Any, workload: Any) -> tuple[Any, Any]:
    """The endpoint and the model or component spec a simulated workload was built from."""
    ep = next(e for e in config.endpoints if e.name == workload.endpoint)
    if workload.component is None:
        return ep, ep.model
    return ep, next(c for c in ep.inference_components if c.name == workload.component)


def simulate_workload_requests(
    config: Any,
    workload: Any,
    trace: RequestTrace,
    params: SimulateParams,
    *,
    profile: Profile | None = None,
    timeout: float | None = None,
    seed: int = 0,
) -> RequestSimulation:
    """One workload of ``config`` (from ``select_workloads``) as configured, request by request, routed as its
    endpoint's ``routing`` says (random, AWS's default, when it is null)."""
    ep, w = workload_config(config, workload)
    rates = service_rates(ep, w, workload.capacity, params, profile)
    limit = params.requests.invocation_timeout_seconds.value if timeout is None else timeout
    return simulate_requests(workload.spec(), trace, rates, ep.routing_in_effect, limit, seed)


__all__ = [
    "ROUTINGS",
    "FailureLimitExceeded",
    "Latency",
    "Profile",
    "RequestInputError",
    "RequestLoad",
    "RequestSimulation",
    "RequestStats",
    "RequestTrace",
    "ServiceRates",
    "parse_request_trace",
    "percentile",
    "read_profile",
    "read_request_trace",
    "roofline",
    "service_rates",
    "simulate_requests",
    "simulate_workload_requests",
    "workload_config",
]
