from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from fastscale.infra.aws.waiters import Clock, Deadline, Poll, WaitTimeout, wait_until
from tests.aws.factories import FakeClock


def _throttle() -> ClientError:
    return ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "DescribeEndpoint")


def test_returns_once_done_and_reports_each_observation():
    clock = FakeClock()
    states = iter(["Creating", "Creating", "InService"])
    seen = []

    def probe():
        s = next(states)
        return Poll(s == "InService", s, {"status": s})

    poll = wait_until(
        "endpoint e to be InService",
        probe,
        deadline=Deadline(600, Clock(clock.now, clock.sleep)),
        interval=15,
        on_progress=seen.append,
    )
    assert poll.value == {"status": "InService"}
    assert [p.state for p in seen] == ["Creating", "Creating", "InService"]
    assert [p.elapsed for p in seen] == [0, 15, 30]
    assert clock.sleeps == [15, 15]
    assert "waiting for endpoint e to be InService: Creating" in str(seen[0])


def test_timeout_names_what_it_waited_for_and_the_last_state():
    clock = FakeClock()
    with pytest.raises(WaitTimeout) as info:
        wait_until(
            "inference component demo-qwen to be InService",
            lambda: Poll(False, "Creating"),
            deadline=Deadline(100, Clock(clock.now, clock.sleep)),
            interval=30,
        )
    err = info.value
    assert "demo-qwen to be InService" in str(err) and "Creating" in str(err) and "100s" in str(err)
    # it never sleeps past the deadline
    assert clock.t == 1100 and clock.sleeps == [30, 30, 30, 10]


def test_throttling_does_not_abort_the_wait():
    clock = FakeClock()
    answers = [_throttle(), _throttle(), "InService"]
    seen = []

    def probe():
        a = answers.pop(0)
        if isinstance(a, Exception):
            raise a
        return Poll(True, a)

    poll = wait_until("x", probe, deadline=Deadline(600, Clock(clock.now, clock.sleep)), interval=5, on_progress=seen.append)
    assert poll.state == "InService"
    assert "throttled" in seen[0].state


def test_other_errors_end_the_wait():
    clock = FakeClock()

    def probe():
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "DescribeEndpoint")

    with pytest.raises(ClientError):
        wait_until("x", probe, deadline=Deadline(600, Clock(clock.now, clock.sleep)))


def test_expired_deadline_still_probes_once():
    clock = FakeClock()
    calls = []
    poll = wait_until(
        "x", lambda: calls.append(1) or Poll(True, "InService"), deadline=Deadline(0, Clock(clock.now, clock.sleep))
    )
    assert poll.done and calls == [1] and clock.sleeps == []
