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
import sys
from array import array
from collections import Counter
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
#: The most values :class:`Ranked` gathers and sorts at once: a bucket of at most this many values is sorted, a
#: larger one is split by its next byte.
RUN = 1 << 14
#: A bucket of more values than this counts its next bytes one pass per count (guided by the sample), a smaller
#: one all at once (:class:`_Bucket`).
DENSE = 1 << 17
#: :class:`Ranked` samples one selected value in this many entries of the column, to guess where a rank lies.
SAMPLE = 1 << 8
#: ``bytes.translate`` table: an unselected entry's byte becomes 0xFF, a selected one's 0.
_UNSELECTED = bytes([0xFF] + [0] * 255)
#: A float's 8 bytes read as a float and as a signed integer (:func:`_bits`).
_DOUBLE, _INTEGER = struct.Struct("<d"), struct.Struct("<q")


def nearest_rank(n: int, q: float) -> int:
    """The rank (1-based) of the nearest-rank percentile ``q`` (0-100) among ``n`` values."""
    return max(1, math.ceil(q / 100 * n))


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0-100) of sorted values; None when there are none."""
    if not sorted_values:
        return None
    return sorted_values[nearest_rank(len(sorted_values), q) - 1]


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
    """The selected values of a column (latencies: none negative, nor -0.0), for :meth:`Latency.of`'s figures
    without sorting them.

    The bit pattern of a float at or above +0.0, read as an integer (its key), orders like the float, and so do
    its eight bytes, the most significant first. A value of a given rank is found a byte at a time: the values
    that share the bytes chosen so far (a :class:`_Bucket`) are counted by their next byte, and the byte whose
    values hold the rank is chosen, until a bucket holds at most :data:`RUN` values, which are gathered and
    sorted, or all eight bytes are chosen (equal values). A count is a pass in C over one byte of every entry (a
    *plane*: ``bytes`` sliced from the column's bytes), see :class:`_Bucket`. On a week's 3,000,000 latencies
    the top byte and the next are chosen by a few passes each, the third by counting the 30,000-80,000 values
    that share the first two, and a few hundred values are sorted. :meth:`count_over` walks down the limit's
    own bytes. The mean is ``math.fsum`` of the selected values (the correctly rounded sum) over the count: the
    float ``Latency.of`` gives. Memory: a copy of the column's bytes while its top three planes are sliced, then
    a byte an entry for each plane and bucket used; never a Python object per value.
    """

    def __init__(self, column: array[float], selected: bytes | bytearray):
        size = selected.count(1)
        everything = size == len(column)
        self.total = math.fsum(column if everything else compress(column, selected))
        self.size = size
        planes = _Planes(column, selected, everything)
        if size <= RUN:  # few enough to sort at once
            self.root = _Bucket(planes, 7, 0, 0, size, 0)
            self.root.values = sorted(column if everything else compress(column, selected))
            negative = any(math.copysign(1.0, value) < 0.0 for value in self.root.values)
        else:
            unselected = 0 if everything else int.from_bytes(selected.translate(_UNSELECTED), "little")
            self.root = _Bucket(planes, 7, 0, 0, size, unselected)
            # A sign bit set (a key above every other float's): a byte of 0x80 or more in the top bytes.
            negative = not planes.plane(7).isascii() if everything else self.root.lower(0x80) != size
        if negative:
            raise ValueError("the values ranked must be at or above +0.0")

    def __len__(self) -> int:
        return self.size

    def count_over(self, limit: float) -> int:
        """How many values are above ``limit``."""
        if limit != limit:  # NaN: nothing is above it
            return 0
        if limit < 0.0:
            return self.size
        key = _bits(limit + 0.0)  # -0.0 is +0.0
        bucket = self.root
        while bucket.values is None and bucket.level >= 0:
            bucket = bucket.child(key >> 8 * bucket.level & 0xFF)
        at_most = bucket.size if bucket.values is None else bisect.bisect_right(bucket.values, limit)
        return self.size - bucket.below - at_most

    def nth(self, rank: int) -> float:
        """The ``rank``-th smallest value (1 <= ``rank`` <= ``len(self)``)."""
        bucket = self.root
        while bucket.values is None:
            if bucket.level < 0:  # all eight bytes chosen: every value of the bucket is this one
                return _float(bucket.prefix)
            bucket = bucket.child(bucket.digit_of(rank - bucket.below))
        return bucket.values[rank - bucket.below - 1]

    def latency(self) -> Latency:
        """What ``Latency.of`` gives on the values: nearest-rank p50, p90, p99 and the mean."""
        n = len(self)
        if not n:
            return Latency(None, None, None, None)
        p50, p90, p99 = (self.nth(nearest_rank(n, q)) for q in (50, 90, 99))
        return Latency(p50, p90, p99, self.total / n)


class _Planes:
    """A column's planes (byte ``b`` of every entry, 0 the least significant), sliced when first read, and the
    keys of a sample of its selected values (every :data:`SAMPLE`-th entry), ascending: where in a bucket a rank
    probably lies."""

    def __init__(self, column: array[float], selected: bytes | bytearray, everything: bool):
        self.column = column
        self._planes: dict[int, bytes] = {}
        self._numbers: dict[int, int] = {}
        some = array("d", column[::SAMPLE] if everything else compress(column[::SAMPLE], selected[::SAMPLE]))
        self.sample = sorted(array("q", some.tobytes()))

    def plane(self, byte: int) -> bytes:
        if byte not in self._planes:
            order = range(8) if sys.byteorder == "little" else range(7, -1, -1)  # where each byte of a float is
            if byte >= 5:  # the top three, sliced together from the column's bytes (a copy held meanwhile)
                raw = self.column.tobytes()
                self._planes.update((top, raw[order[top]::8]) for top in (7, 6, 5))
            else:  # needed only when more than RUN values share their top three bytes
                self._planes[byte] = memoryview(self.column).cast("B")[order[byte]::8].tobytes()
        return self._planes[byte]

    def number(self, byte: int) -> int:
        """:meth:`plane` read as one little-endian integer (for ``|`` with a bucket's mask)."""
        if byte not in self._numbers:
            self._numbers[byte] = int.from_bytes(self.plane(byte), "little")
        return self._numbers[byte]


class _Bucket:
    """The selected values whose bytes above byte ``level`` are those of ``prefix`` (the most significant first).

    ``below`` selected values have a smaller key, ``size`` are in the bucket. Its *digits* are byte ``level`` of
    every entry of the column, 0xFF where the entry is not in the bucket (``mask``: a little-endian integer with
    0xFF in the bytes of the entries outside the bucket, 0 when every entry is in it, so the digits are then the
    plane itself); ``lower(d)`` counts the bucket's values whose byte is below ``d``. A bucket of more than
    :data:`DENSE` values counts one ``d`` a pass, from the sample's guess: next to a known count, the count of
    one byte value (``bytes.count``, about 1 ms on 3,000,000 entries); otherwise the digits translated to 1
    where below ``d`` and 0 elsewhere, read as an integer whose set bits are counted (about 5 ms, whatever the
    values: ``bytes.count`` and a deleting ``bytes.translate`` test every byte with a branch the processor
    mispredicts, up to 11 ms when half the bytes match). A smaller bucket counts every byte at once: its digits
    with the 0xFF deleted, through a ``Counter``. ``values`` are the bucket's values, sorted, once gathered.
    """

    __slots__ = ("planes", "level", "prefix", "below", "size", "mask", "values", "_digits", "_lower", "_children")

    def __init__(self, planes: _Planes, level: int, prefix: int, below: int, size: int, mask: int):
        self.planes, self.level, self.prefix, self.below, self.size, self.mask = (
            planes, level, prefix, below, size, mask)
        self.values: list[float] | None = None
        self._digits = b""
        self._lower: dict[int, int] = {0: 0, 256: size}
        self._children: dict[int, _Bucket] = {}

    def digits(self) -> bytes:
        if not self._digits:
            if self.mask:
                n = len(self.planes.column)
                self._digits = (self.planes.number(self.level) | self.mask).to_bytes(n, "little")
            else:
                self._digits = self.planes.plane(self.level)
            if self.size <= DENSE:
                self._count_every_digit()
        return self._digits

    def _count_every_digit(self) -> None:
        kept = self._digits.translate(None, b"\xff")  # the bucket's digits but 0xFF
        counts = Counter(kept)
        total = 0
        for digit in range(256):
            self._lower[digit] = total
            total += counts[digit]

    def lower(self, digit: int) -> int:
        """How many values of the bucket have a byte ``level`` below ``digit`` (0-256)."""
        known = self._lower
        if digit not in known:
            digits = self.digits()  # may count every digit
            if digit in known:
                pass
            elif digit - 1 in known:  # a neighbour's count and one value's: a pass without a branch per byte
                known[digit] = known[digit - 1] + digits.count(digit - 1)
            elif digit + 1 in known and digit < 0xFF:  # (0xFF also marks the entries outside the bucket)
                known[digit] = known[digit + 1] - digits.count(digit)
            else:  # 0xFF (outside) is never below a digit up to 255; 1 where below, then the bits set
                below = bytes(1 if byte < digit else 0 for byte in range(256))
                known[digit] = int.from_bytes(digits.translate(below), "little").bit_count()
        return known[digit]

    def digit_of(self, rank: int) -> int:
        """The byte ``level`` of the ``rank``-th smallest value of the bucket (1 <= ``rank`` <= ``size``): the
        largest ``d`` with ``lower(d) < rank``, searched from the sample's guess in steps that double, then by
        halves."""
        low, high = 0, 256  # lower(low) < rank <= lower(high)
        guess = self._guess(rank)
        step = 1
        if guess is None:
            pass
        elif self.lower(guess) < rank:
            low = guess
            while low + step < high and self.lower(low + step) < rank:
                low, step = low + step, step * 2
            high = min(high, low + step)
        else:
            high = guess
            while high - step > low and self.lower(high - step) >= rank:
                high, step = high - step, step * 2
            low = max(low, high - step)
        while high - low > 1:
            middle = (low + high) // 2
            if self.lower(middle) < rank:
                low = middle
            else:
                high = middle
        return low

    def _guess(self, rank: int) -> int | None:
        """Byte ``level`` of the sample's key at ``rank``'s place among the sample's keys in the bucket."""
        shift = 8 * (self.level + 1)
        keys = self.planes.sample
        first = bisect.bisect_left(keys, self.prefix << shift)
        count = bisect.bisect_left(keys, self.prefix + 1 << shift) - first
        if not count:
            return None
        key: int = keys[first + min(count - 1, (rank - 1) * count // self.size)]
        return key >> shift - 8 & 0xFF

    def child(self, digit: int) -> _Bucket:
        """The bucket of the values whose byte ``level`` is ``digit``: gathered and sorted when it holds at
        most :data:`RUN`."""
        if digit not in self._children:
            below = self.lower(digit)
            size = self.lower(digit + 1) - below
            child = _Bucket(self.planes, self.level - 1, self.prefix << 8 | digit, self.below + below, size, 0)
            if size > RUN or size and digit == 0xFF and self.mask:
                child.mask = self.mask if size == self.size else self.mask | int.from_bytes(
                    self.digits().translate(bytes(0 if byte == digit else 0xFF for byte in range(256))), "little")
            if size <= RUN:
                child.values = sorted(self._gather(digit, child.mask)) if size else []
            self._children[digit] = child
        return self._children[digit]

    def _gather(self, digit: int, mask: int) -> list[float]:
        """The values of the bucket whose byte ``level`` is ``digit``; ``mask`` is their bucket's when ``digit``
        is 0xFF, which in this bucket's digits also marks the entries outside it."""
        column = self.planes.column
        digits = mask.to_bytes(len(column), "little") if mask else self.digits()
        mark = 0 if mask else digit
        values = []
        find, at = digits.find, digits.find(mark)
        while at >= 0:
            values.append(column[at])
            at = find(mark, at + 1)
        return values


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
