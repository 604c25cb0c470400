"""The discrete-time model: one endpoint's scaling replayed second by second against a traffic profile.

It knows nothing about config files: a :class:`~fastscale.infra.analysis.simulate.spec.SimSpec` holds every
number it needs (built from a config by :mod:`fastscale.infra.analysis.simulate.build`), so tests can give it
exact, hand-checkable inputs; the run comes back as a :class:`~fastscale.infra.analysis.simulate.result.Result`.
This module holds only the replay: the state of copies, instances and alarms, and the loop over the seconds.
Pure Python, deterministic: the same spec and demand always give the same result.

What happens each second, in order: scaling decisions that are due take effect (copies are placed, instances
requested or released), copies and instances whose start-up timeline ended come into service, the demand is
served, queued or rejected, and the metrics the alarms read are accumulated; at the end of a metric period a
datapoint is closed and, ``lag`` seconds later, the alarms evaluate it. The rules are in
``infra/analysis/simulate_params.json`` (``derivation``). Seconds in which none of that can change anything (no
decision due, nothing coming into service, no period ending, no datapoint arriving) are handled as one stretch:
the load serves them at once and the metrics add them up second by second, in the same order.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import cast

from fastscale.infra.analysis.simulate.result import Event, Result, Summary, with_summary
from fastscale.infra.analysis.simulate.spec import EPS, Alarm, Load, LoadStopped, SimSpec

# --------------------------------------------------------------------------------------------- state


@dataclass
class _Instance:
    ready: float  # second it is in service
    used: int = 0  # copies of this workload placed on it
    reserved: int = 0  # slots other components hold
    number: int = 0


@dataclass
class _Copy:
    instance: _Instance | None  # None: wanted, but no instance has room yet
    ready: float
    number: int = 0


@dataclass
class _AlarmState:
    alarm: Alarm
    values: list[float | None] = field(default_factory=list)  # closed datapoints, newest last
    acc: float = 0.0
    n: int = 0
    serving_acc: float = 0.0  # units in service, summed over the seconds of the open period that had any
    in_alarm: bool = False
    last_invoke: float = -math.inf

    def receive(self, value: float | None) -> None:
        """A closed datapoint reaches the alarm (``lag`` seconds after its period ended). The open period's sums
        were reset when it closed and keep accumulating meanwhile."""
        self.values.append(value)
        if len(self.values) > self.alarm.datapoints:
            del self.values[0]


def _ceil(x: float) -> int:
    return math.ceil(x - EPS)


class _Sim:
    def __init__(self, spec: SimSpec, demand: tuple[float, ...], load: Load | None = None):
        self.spec = spec
        self.demand = demand
        self.load = load
        self.events: list[Event] = []
        self.instances: list[_Instance] = []
        self.copies: list[_Copy] = []
        self.instance_numbers = 0
        self.copy_numbers = 0
        self.changed = True  # copies or desired changed: placement and instance release must be looked at
        # Desired count: what the scalable target holds now, and the changes waiting for their decision delay.
        self.desired = 0
        self.pending: list[tuple[int, int, str]] = []  # (second it applies, new desired, why)
        self.last_scale_in = -math.inf
        self.last_scale_out = -math.inf
        self.last_step = -math.inf
        self.alarm_seconds: list[int] = []
        self.minimum_bound = False  # see Result.minimum_bound

    # ----------------------------------------------------------------------------------------- capacity

    def _new_instance(self, now: float, reserved: int = 0) -> _Instance:
        self.instance_numbers += 1
        inst = _Instance(ready=now, reserved=reserved, number=self.instance_numbers)
        self.instances.append(inst)
        return inst

    def _free(self, inst: _Instance) -> int:
        return self.spec.copies_per_instance - inst.used - inst.reserved

    def _new_copy(self) -> _Copy:
        self.copy_numbers += 1
        return _Copy(None, math.inf, self.copy_numbers)

    def _place(self, copy: _Copy, t: int) -> bool:
        s = self.spec
        serving = [i for i in self.instances if i.ready <= t and self._free(i) > 0]
        starting = [i for i in self.instances if i.ready > t and self._free(i) > 0]
        if serving:
            inst = serving[0]
            copy.ready = t + s.timings.copy_on_instance
        elif starting:
            inst = starting[0]
            copy.ready = inst.ready + s.timings.copy_on_new_instance
        elif len(self.instances) < s.instances_max:
            inst = self._new_instance(t + s.timings.provisioning)
            self.events.append(Event(t, "instance", f"instance {inst.number} requested (ready {_clock(inst.ready)})"))
            copy.ready = inst.ready + s.timings.copy_on_new_instance
        else:
            return False
        inst.used += 1
        copy.instance = inst
        return True

    def _reconcile(self, t: int) -> None:
        s = self.spec
        while len(self.copies) < self.desired:
            self.copies.append(self._new_copy())
        if len(self.copies) > self.desired:
            # Remove what serves least: unplaced copies, then those still starting (latest first), then serving
            # copies from the emptiest instance, so whole instances can be released.
            def order(c: _Copy) -> tuple[int, float, int, int]:
                if c.instance is None:
                    return (0, 0.0, 0, -c.number)
                if c.ready > t:
                    return (1, -c.ready, 0, -c.number)
                return (2, 0.0, c.instance.used, -c.number)

            self.copies.sort(key=order)
            for c in self.copies[: len(self.copies) - self.desired]:
                if c.instance is not None:
                    c.instance.used -= 1
            del self.copies[: len(self.copies) - self.desired]
        unplaced = False
        for c in self.copies:
            if c.instance is None and not self._place(c, t):
                unplaced = True
        self.changed = unplaced  # a copy without room tries again next second
        # Managed instance scaling: an instance that holds nothing is released, down to the minimum.
        for inst in sorted(self.instances, key=lambda i: -i.number):
            if len(self.instances) <= s.instances_min:
                self.minimum_bound |= any(i.used == 0 and i.reserved == 0 for i in self.instances)
                break
            if inst.used == 0 and inst.reserved == 0:
                self.instances.remove(inst)
                self.events.append(Event(t, "instance", f"instance {inst.number} released"))

    # ----------------------------------------------------------------------------------------- decisions

    def _request(self, t: int, new: int, why: str) -> None:
        self.pending.append((t + _ceil(self.spec.timings.decision), new, why))

    def _wanted(self) -> int:
        """The desired count once the decisions already made take effect."""
        wanted = self.desired
        for _, new, why in self.pending:
            wanted = max(wanted, new) if why != "scale-in" else min(wanted, new)
        return wanted

    def _scale_out(self, t: int, value: float, measured: float) -> None:
        """Target tracking scale-out: new capacity = ceil(capacity x metric / target), proportional to the metric.

        ``measured`` is the mean number of units in service over the datapoint's period (the units the metric
        was averaged over). Outside the scale-out cooldown Application Auto Scaling multiplies the scalable
        target's current (desired) capacity; during the cooldown the capacity the previous scale-out added
        counts towards this one, so only a larger scale-out than already asked for goes through
        (TargetTrackingScalingPolicyConfiguration.ScaleOutCooldown).
        """
        s = self.spec
        wanted = self._wanted()
        in_cooldown = t - self.last_scale_out < s.scale_out_cooldown
        basis = measured if in_cooldown else max(measured, float(wanted))
        asked = _ceil(value * basis / s.target)
        self.minimum_bound |= s.units_min > asked
        new = min(s.units_max, max(s.units_min, asked))
        if new > wanted:
            self.events.append(Event(t, "alarm", f"scale-out alarm: {value:.1f} per {s.unit} > {s.target:g}, desired {new}"))
            self.last_scale_out = t
            self.last_scale_in = -math.inf  # a scale-out ends the scale-in cooldown
            self._request(t, new, "scale-out")

    def _scale_in(self, t: int, value: float, measured: float) -> None:
        s = self.spec
        asked = _ceil(value * measured / s.target)
        self.minimum_bound |= s.units_min > asked
        new = max(s.units_min, asked)
        if new < self._wanted() and t - self.last_scale_in >= s.scale_in_cooldown:
            self.events.append(Event(t, "alarm", f"scale-in alarm: {value:.1f} per {s.unit}, desired {new}"))
            self.last_scale_in = t
            self._request(t, new, "scale-in")

    def _step_from_zero(self, t: int) -> None:
        """Step scaling, ChangeInCapacity: the adjustment is added to the desired count (what the scalable
        target holds, copies still starting included), once per invocation of the alarm in ALARM, and not
        again before the step cooldown has passed (AAS user guide, step scaling; StepScalingPolicyConfiguration.Cooldown)."""
        s = self.spec
        assert s.scale_from_zero is not None
        if t - self.last_step < s.scale_from_zero.cooldown:
            return
        wanted = self._wanted()
        new = min(s.units_max, wanted + s.step_adjustment)
        if new > wanted:
            self.events.append(Event(t, "alarm", f"no-capacity alarm: step policy +{s.step_adjustment}, desired {new}"))
            self.last_step = t
            self._request(t, new, "scale-out")

    def _evaluate(self, st: _AlarmState, t: int, breaching: Callable[[list[float]], bool]) -> bool:
        """True when the policy should be invoked now (change to ALARM, or still in ALARM after ``reinvoke``).
        ``breaching`` says whether every one of the datapoints breaches (none is missing)."""
        was = st.in_alarm
        values = st.values
        st.in_alarm = len(values) == st.alarm.datapoints and None not in values and breaching(cast(list[float], values))
        if st.in_alarm and (not was or t - st.last_invoke >= self.spec.reinvoke):
            st.last_invoke = t
            return True
        return False

    # ----------------------------------------------------------------------------------------- run

    def run(self) -> Result:
        s, demand = self.spec, self.demand
        n = len(demand)
        first = demand[0] if n else 0.0
        if s.initial_units is not None:
            unclamped = min(s.units_max, s.initial_units)
        else:
            unclamped = min(s.units_max, max(_ceil(first / s.target), 1 if first > 0 else 0))
        start = min(s.units_max, max(s.units_min, unclamped))
        self.minimum_bound |= start != unclamped
        # Instances in service at the start: room for the other components' copies, then this workload's.
        reserved = s.reserved_slots
        while reserved > 0 and len(self.instances) < s.instances_max:
            take = min(reserved, s.copies_per_instance)
            self._new_instance(-math.inf, reserved=take)
            reserved -= take
        self.desired = start
        for _ in range(start):
            c = self._new_copy()
            self.copies.append(c)
            if not any(self._free(i) > 0 for i in self.instances) and len(self.instances) < s.instances_max:
                self._new_instance(-math.inf)
            if self._place(c, 0):
                c.ready = -math.inf
        while len(self.instances) < s.instances_min:
            self.minimum_bound = True
            self._new_instance(-math.inf)

        out_state = _AlarmState(s.scale_out) if s.scale_out else None
        in_state = _AlarmState(s.scale_in) if s.scale_in else None
        zero_state = _AlarmState(s.scale_from_zero.alarm) if s.scale_from_zero else None
        # Datapoints closed at a period's end reach the alarm `lag` seconds later: (second, state, value).
        arriving: list[tuple[int, _AlarmState, float | None, float]] = []

        # The series, one array each (a week is 604,800 seconds): counts as ints, the rest as floats. The capacity
        # keeps the type of the unit's capacity (a whole number stays one in the output).
        desired_s, copies_s, serving_s, inst_s, inst_srv_s = array("i"), array("i"), array("i"), array("i"), array("i")
        queued_s, rejected_s, demand_s = array("d"), array("d"), array("d")
        capacity_s: MutableSequence[float] = array("d") if isinstance(s.unit_capacity, float) else []
        load = self.load
        announced: set[int] = set()
        new_serving: list[int] = []
        inst_announced: set[int] = set()
        dirty, next_ready = True, math.inf
        serving = inst_serving = placed = 0
        serving_ids: list[int] = []
        # Loop invariants, looked up once: the loop runs once a stretch of seconds (a week is 604,800 seconds).
        unit_capacity, service_time = s.unit_capacity, s.service_time
        add_demand, add_queued, add_rejected = demand_s.append, queued_s.append, rejected_s.append
        add_desired, add_copies, add_serving = desired_s.extend, copies_s.extend, serving_s.extend
        add_instances, add_inst_serving, add_capacity = inst_s.extend, inst_srv_s.extend, capacity_s.extend
        tracked = tuple(st for st in (out_state, in_state) if st is not None)
        periods = tuple((st, st.alarm.period) for st in (out_state, in_state, zero_state) if st is not None)
        next_close = min((period for _, period in periods), default=n)  # the next end of a metric period
        delay = max(0, _ceil(s.timings.decision))  # from an alarm to its decision taking effect
        counts: tuple[int, int, int, int, int, float] | None = None
        counts_from = 0

        def write_counts(row: tuple[int, int, int, int, int, float] | None, k: int) -> None:
            if row is not None:
                desired, copies, in_service, instances, instances_in_service, capacity = row
                add_desired([desired] * k)
                add_copies([copies] * k)
                add_serving([in_service] * k)
                add_instances([instances] * k)
                add_inst_serving([instances_in_service] * k)
                add_capacity([capacity] * k)

        t = 0
        while t < n:
            # 1. decisions that are due
            due = [p for p in self.pending if p[0] <= t] if self.pending else None
            if due:
                self.pending = [p for p in self.pending if p[0] > t]
                for _, new, why in due:
                    if why == "scale-in":
                        new = min(self.desired, new)
                    else:
                        new = max(self.desired, new)
                    if new != self.desired:
                        self.events.append(Event(t, "desired", f"desired {s.unit} count {self.desired} -> {new}"))
                        self.desired = new
                        self.changed = True
            if self.changed:
                self._reconcile(t)
                dirty = True
            # 2. what serves this second (recounted only when copies changed or one came into service)
            if dirty or t >= next_ready:
                dirty = False
                next_ready = math.inf
                serving = 0
                serving_ids = []
                for c in self.copies:
                    if c.ready <= t:
                        serving += 1
                        serving_ids.append(c.number)
                        if c.number not in announced and c.ready > -math.inf:
                            announced.add(c.number)
                            new_serving.append(c.number)
                    elif c.ready < next_ready:
                        next_ready = c.ready
                if new_serving:
                    self.events.append(Event(t, "serving", f"{len(new_serving)} new {s.unit}(s) serve: {serving} serving"))
                    new_serving.clear()
                inst_serving = 0
                for inst in self.instances:
                    if inst.ready <= t:
                        inst_serving += 1
                        if inst.ready > -math.inf and inst.number not in inst_announced:
                            inst_announced.add(inst.number)
                            self.events.append(Event(t, "instance", f"instance {inst.number} in service"))
                    elif inst.ready < next_ready:
                        next_ready = inst.ready
                placed = sum(1 for c in self.copies if c.instance is not None)
            cap = serving * unit_capacity
            row = (self.desired, placed, serving, len(self.instances), inst_serving, cap)
            if row != counts:  # the series' counts are written a run of equal seconds at a time
                write_counts(counts, t - counts_from)
                counts, counts_from = row, t
            # The seconds from t to stop change nothing the engine holds: none has a decision due, a copy or an
            # instance coming into service or a copy waiting for room, and an alarm that a datapoint reaches in
            # between decides no sooner than stop (a decision takes effect `delay` seconds after it). They are
            # served at once; the metrics then add them up in order, closing periods and evaluating alarms.
            stop = t + 1 if self.changed else n
            for p in self.pending:
                stop = min(stop, p[0])
            if next_ready < math.inf:
                stop = min(stop, math.ceil(next_ready))
            first_at = math.ceil(arriving[0][0]) if arriving else next_close + s.lag
            stop = min(stop, max(t + 1, first_at + delay))
            k = stop - t
            if load is not None:
                try:
                    load.serve(t, stop, serving_ids, add_demand, add_queued, add_rejected)
                except LoadStopped as stopped:
                    self.minimum_bound |= any(rejected_s[t:])
                    stopped.minimum_bound = self.minimum_bound
                    raise
                ds: Sequence[float] = demand_s[t:]
                rs: Sequence[float] = rejected_s[t:]
                self.minimum_bound |= any(rs)
            else:
                ds = demand[t:stop]
                if serving == 0:
                    rs = [d / service_time for d in ds]
                    queued_s.fromlist([0.0] * k)
                    self.minimum_bound |= any(r > 0 for r in rs)
                else:
                    queued_s.fromlist([max(0.0, d - cap) for d in ds])
                    rs = [0.0] * k
                demand_s.extend(ds)
                rejected_s.extend(rs)
            # 3. metrics, second by second: concurrent requests per copy in service (no datapoint without one),
            # failures for zero; a period closes at its end, and 4. alarms evaluate the datapoints that reached them
            since = t
            while since < stop:
                end = min(stop, next_close, math.ceil(arriving[0][0])) if arriving else min(stop, next_close)
                if serving:
                    for st in tracked:
                        acc = st.acc
                        for d in ds[since - t:end - t]:
                            acc += d / serving
                        st.acc = acc
                        st.serving_acc += serving * (end - since)  # whole numbers: the same float as second by second
                        st.n += end - since
                if zero_state is not None:
                    failures = rs[since - t:end - t]
                    if any(failures):  # adding 0.0 changes no sum
                        acc = zero_state.acc
                        for r in failures:
                            acc += r
                        zero_state.acc = acc
                    zero_state.n += end - since
                if end == next_close:
                    for st, period in periods:
                        if end % period == 0:
                            if st is zero_state:
                                value: float | None = st.acc  # Sum of failures; none is "not breaching"
                                measured = 0.0
                            else:
                                value = st.acc / st.n if st.n else None
                                measured = st.serving_acc / st.n if st.n else 0.0
                            arriving.append((end + s.lag, st, value, measured))
                            st.acc, st.n, st.serving_acc = 0.0, 0, 0.0
                    next_close = min(((end // period + 1) * period for _, period in periods), default=n)
                if arriving and arriving[0][0] <= end:
                    ready = [a for a in arriving if a[0] <= end]
                    arriving[:] = [a for a in arriving if a[0] > end]
                    self._alarms(ready, n, out_state, in_state, zero_state)
                since = end
            t = stop
        write_counts(counts, n - counts_from)

        result = Result(
            demand=demand_s,
            desired=desired_s,
            copies=copies_s,
            serving=serving_s,
            instances=inst_s,
            instances_serving=inst_srv_s,
            capacity=capacity_s,
            queued=queued_s,
            rejected=rejected_s,
            events=tuple(sorted(self.events, key=lambda e: e.second)),
            summary=Summary(0, None, None, 0, 0, 0, 0, 0, 0, 0, None, None),
            minimum_bound=self.minimum_bound,
        )
        return with_summary(result, s, self.alarm_seconds)

    def _mark_alarm(self, t: int) -> None:
        self.alarm_seconds.append(t)

    def _alarms(self, ready: list[tuple[int, _AlarmState, float | None, float]], n: int, out_state: _AlarmState | None,
                in_state: _AlarmState | None, zero_state: _AlarmState | None) -> None:
        """The alarms evaluate the datapoints that reached them: (second, state, value, units measured)."""
        s = self.spec
        for at, st, value, measured in ready:
            st.receive(value)
            when = min(at, n)
            if st is out_state:
                if self._evaluate(st, when, lambda vs: min(vs, default=math.inf) > s.target + EPS) and value is not None:
                    self._mark_alarm(when)
                    self._scale_out(when, value, measured)
            elif st is in_state:
                busy = out_state is not None and out_state.in_alarm
                low = self._evaluate(st, when, lambda vs: max(vs, default=-math.inf) < s.scale_in_threshold * s.target - EPS)
                if low and not busy and value is not None:
                    self._scale_in(when, value, measured)
            elif st is zero_state:
                assert s.scale_from_zero is not None
                if self._evaluate(st, when, lambda vs: min(vs, default=math.inf) >= 1 - EPS):
                    self._mark_alarm(when)
                    self._step_from_zero(when)


def _clock(second: float) -> str:
    return f"{int(second) // 60}:{int(second) % 60:02d}"


def simulate(spec: SimSpec, demand: tuple[float, ...] | list[float], load: Load | None = None) -> Result:
    """Replay ``demand`` (offered concurrency per second) against ``spec``; deterministic.

    With a ``load``, the concurrency, queue and failures of each second come from it instead (``demand`` then
    only sets the window and the starting count, from its first value); the result's demand is what it served.
    """
    return _Sim(spec, tuple(map(float, demand)), load).run()
