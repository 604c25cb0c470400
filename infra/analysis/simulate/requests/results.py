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
import struct
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, compress
from typing import Any

from fastscale.infra.analysis.simulate.requests.rates import ServiceRates
from fastscale.infra.analysis.simulate.result import Result

#: What became of a request, as the replay marks it (0 while it is still to come, queued or in a slot).
SERVED, NO_CAPACITY, TIMED_OUT = 1, 2, 3
#: ``bytes.translate`` table: a status byte becomes 1 for a served request, 0 otherwise.
_SERVED_MASK = bytes(1 if code == SERVED else 0 for code in range(256))
#: Values :class:`Ranked` sorts at once (a run). Small runs sort faster than large ones (their values stay in the
#: processor's caches): on a week's 3,000,000 latencies, runs of 16,384 took 40% less time than runs of 262,144
#: (bench/README.md).
RUN = 1 << 14
#: A float's 8 bytes read as a float and as a signed integer (:func:`_bits`).
_DOUBLE, _INTEGER = struct.Struct("<d"), struct.Struct("<q")


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
        mean = math.fsum(values) / len(values) if values else None
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
        cls, status: bytearray, ttft: array[float], e2e: array[float], wait: array[float], timeout: float
    ) -> RequestStats:
        """From the replay's marks: each request's outcome code, and its TTFT, end-to-end time and wait.

        One column at a time, the served requests' values ranked in bounded memory (:class:`Ranked`): a week of
        requests never holds a Python object per request."""
        served = status.translate(_SERVED_MASK)  # 1 where the request was served, else 0
        e2e_served = Ranked(e2e, served)
        over = e2e_served.count_over(timeout)
        e2e_latency = e2e_served.latency()
        del e2e_served
        return cls(
            requests=len(status),
            served=served.count(1),
            no_capacity=status.count(NO_CAPACITY),
            timed_out=status.count(TIMED_OUT),
            over_timeout_end_to_end=over,
            ttft=Ranked(ttft, served).latency(),
            e2e=e2e_latency,
            queue=Ranked(wait, served).latency(),
            timeout_seconds=timeout,
        )


class Ranked:
    """The selected values of a column (latencies: none negative), for :meth:`Latency.of`'s figures in bounded
    memory.

    The zeros are only counted (a request that finds its copy idle waits 0 s for a slot); the column is read
    :data:`RUN` entries at a time, the selected values of each sorted as they are read, their zeros (first once
    sorted) dropped and the rest appended to one array (8 bytes each) as one sorted run. The sum is taken as the
    runs are read, with ``math.fsum`` (the correctly rounded sum, whatever the order), so the mean is the float
    ``Latency.of`` gives. A nearest-rank value is found without merging the runs: a binary search over the bit
    patterns of the floats (for floats above zero, their order) for the smallest value that at least ``rank``
    values are at most, counted with ``bisect`` in each run; that value is one of the column's.
    """

    def __init__(self, column: array[float], selected: bytes | bytearray):
        values = array("d")
        runs: list[tuple[int, int]] = []

        def sorted_runs() -> Iterator[list[float]]:
            """Each run sorted as it is read, kept, then handed to the sum."""
            for start in range(0, len(column), RUN):
                mask = selected[start:start + RUN]
                run = (list(compress(column[start:start + RUN], mask)) if mask.count(0)
                       else column[start:start + RUN].tolist())
                run.sort()
                del run[:bisect.bisect_right(run, 0.0)]  # the zeros, first once sorted
                if run:
                    runs.append((len(values), len(values) + len(run)))
                    values.fromlist(run)
                    yield run

        self.total = math.fsum(chain.from_iterable(sorted_runs()))
        self.runs = runs
        self.values = values
        self.zeros = selected.count(1) - len(values)

    def __len__(self) -> int:
        return self.zeros + len(self.values)

    def count_over(self, limit: float) -> int:
        """How many values are above ``limit`` (>= 0)."""
        return len(self.values) - self._at_most(limit)

    def _at_most(self, limit: float) -> int:
        """How many of the values above zero are at most ``limit``."""
        values = self.values
        return sum(bisect.bisect_right(values, limit, lo, hi) - lo for lo, hi in self.runs)

    def nth(self, rank: int) -> float:
        """The ``rank``-th smallest value (1 <= ``rank`` <= ``len(self)``)."""
        if rank <= self.zeros:
            return 0.0
        rank -= self.zeros
        values = self.values
        low = _bits(min(values[lo] for lo, _ in self.runs))
        high = _bits(max(values[hi - 1] for _, hi in self.runs))
        while low < high:  # the answer's bit pattern lies in [low, high]
            middle = (low + high) // 2
            if self._at_most(_float(middle)) >= rank:
                high = middle
            else:
                low = middle + 1
        return _float(low)

    def latency(self) -> Latency:
        """What ``Latency.of`` gives on the values: nearest-rank p50, p90, p99 and the mean."""
        n = len(self)
        if not n:
            return Latency(None, None, None, None)
        p50, p90, p99 = (self.nth(max(1, math.ceil(q / 100 * n))) for q in (50, 90, 99))
        return Latency(p50, p90, p99, self.total / n)


def _bits(value: float) -> int:
    """The bit pattern of a float as an integer: for floats of one sign, in their order."""
    bits: int = _INTEGER.unpack(_DOUBLE.pack(value))[0]
    return bits


def _float(bits: int) -> float:
    """The float of a bit pattern (:func:`_bits`' inverse)."""
    value: float = _DOUBLE.unpack(_INTEGER.pack(bits))[0]
    return value


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
