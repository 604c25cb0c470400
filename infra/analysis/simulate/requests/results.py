"""What became of the requests of a replay: failures, latency percentiles and the run's summary.

:mod:`~fastscale.infra.analysis.simulate.requests.replay` marks each request with an outcome code and its times;
:class:`RequestStats` counts and ranks them (nearest-rank percentiles), and :class:`RequestSimulation` puts them
beside the engine's :class:`~fastscale.infra.analysis.simulate.result.Result` (copies, instances, alarms, cost)
and the rates the copies served at (:mod:`~fastscale.infra.analysis.simulate.requests.rates`).
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any

from fastscale.infra.analysis.simulate.requests.rates import ServiceRates
from fastscale.infra.analysis.simulate.result import Result

#: What became of a request, as the replay marks it (0 while it is still to come, queued or in a slot).
SERVED, NO_CAPACITY, TIMED_OUT = 1, 2, 3
#: ``bytes.translate`` table: a status byte becomes 1 for a served request, 0 otherwise.
_SERVED_MASK = bytes(1 if code == SERVED else 0 for code in range(256))


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

    @classmethod
    def of(
        cls, status: bytearray, ttft: Sequence[float], e2e: Sequence[float], wait: Sequence[float], timeout: float
    ) -> RequestStats:
        """From the replay's marks: each request's outcome code, and its TTFT, end-to-end time and wait.

        One column at a time (the served requests' values, ranked, then let go), so a week of requests holds one
        list of floats at a time beside the columns."""
        served = status.translate(_SERVED_MASK)  # 1 where the request was served, else 0
        ranked = sorted(compress(e2e, served))
        over = len(ranked) - bisect.bisect_right(ranked, timeout)
        e2e_served = Latency.of(ranked)
        del ranked
        return cls(
            requests=len(status),
            served=served.count(1),
            no_capacity=status.count(NO_CAPACITY),
            timed_out=status.count(TIMED_OUT),
            over_timeout_end_to_end=over,
            ttft=Latency.of(list(compress(ttft, served))),
            e2e=e2e_served,
            queue=Latency.of(list(compress(wait, served))),
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
