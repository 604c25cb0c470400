"""Every AWS call fastscale makes, bounded and labelled: adaptive retries within :data:`MAX_ATTEMPTS` attempts, a
total time limit per call (:data:`CALL_TIME_LIMIT` s, or ``FASTSCALE_AWS_CALL_TIMEOUT``) after which no new
attempt starts, a line on stderr while a call waits longer than :data:`WAIT_NOTICE_SECONDS`, and a failed call's
error marked with the resource it was about.

:func:`client_config` is the botocore configuration :mod:`.factory` builds every client with, and
:func:`instrument` the hooks it puts on every client it hands out; :mod:`.errors` words the failures.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from botocore.client import BaseClient
from botocore.config import Config
from botocore.exceptions import BotoCoreError

from fastscale.infra.base.printable import printable

#: Attempts per call, the first included. botocore's back-off before retry n is random(0, 2**(n-1)) s,
#: so 5 attempts wait at most 1 + 2 + 4 + 8 = 15 s (7.5 s on average) before giving up, where 11
#: attempts (``max_attempts`` 10) waited up to 131 s.
MAX_ATTEMPTS = 5
MAX_BACKOFF_SECONDS = sum(2**n for n in range(MAX_ATTEMPTS - 1))
#: Seconds to open a connection (AWS answers in well under one) and to wait for an answer. Every call
#: fastscale makes is a describe, list, tag or delete call that AWS answers in about a second.
CONNECT_TIMEOUT = 5
READ_TIMEOUT = 20
#: Seconds one call may take, all attempts and back-off included (``FASTSCALE_AWS_CALL_TIMEOUT``).
CALL_TIME_LIMIT = 60
CALL_TIME_LIMIT_ENV = "FASTSCALE_AWS_CALL_TIMEOUT"
#: A call that has waited this long says so on stderr, once per attempt (sooner when the read timeout is short).
WAIT_NOTICE_SECONDS = 3.0

RETRY_CONFIG = Config(
    retries={"mode": "adaptive", "total_max_attempts": MAX_ATTEMPTS},
    connect_timeout=CONNECT_TIMEOUT,
    read_timeout=READ_TIMEOUT,
)


def call_time_limit() -> float:
    """The total seconds a call may take: ``FASTSCALE_AWS_CALL_TIMEOUT`` when it is a positive number."""
    raw = os.environ.get(CALL_TIME_LIMIT_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return CALL_TIME_LIMIT
    return value if value > 0 and value == value and value != float("inf") else CALL_TIME_LIMIT


def _timeouts(limit: float) -> tuple[float, float]:
    """(connect, read) timeouts of one attempt that fit in ``limit`` seconds."""
    connect = min(CONNECT_TIMEOUT, max(limit / 2, 0.5))
    return connect, max(min(READ_TIMEOUT, limit - connect), 0.5)


def client_config() -> Config:
    limit = call_time_limit()
    connect, read = _timeouts(limit)
    if (connect, read) == (CONNECT_TIMEOUT, READ_TIMEOUT):
        return RETRY_CONFIG
    return RETRY_CONFIG.merge(Config(connect_timeout=connect, read_timeout=read))


class CallTimeLimitExceeded(BotoCoreError):  # type: ignore[misc,unused-ignore]  # botocore: no hints
    """A call's attempts did not get an answer within its total time limit (the limit ends the retries)."""

    fmt = ("no answer from {endpoint} to {operation} within {limit:g} s ({attempts} attempt(s), {connect:g} s to "
           "connect, {read:g} s to answer)")


def _say_waiting(message: str) -> None:
    try:
        sys.stderr.write(printable(message) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed: nobody to tell
        pass


#: Where "still waiting" lines go; stderr by default (never stdout, which may carry --json).
wait_reporter: Callable[[str], None] = _say_waiting


class _Call:
    """One API call in flight on this thread: what it is, when it started, its attempts, its notice timer."""

    def __init__(self, service: str, operation: str, endpoint: str, limit: float):
        self.service, self.operation, self.endpoint = service, operation, endpoint
        self.limit = limit
        self.connect, self.read = _timeouts(limit)
        self.started = time.monotonic()
        self.attempts = 0
        self.timer: threading.Timer | None = None

    def notice(self, attempt: int) -> None:
        waited = time.monotonic() - self.started
        wait_reporter(f"waiting for {self.service} {self.operation} at {self.endpoint} (attempt {attempt} of "
                      f"{MAX_ATTEMPTS}, {waited:.0f} s so far; gives up after {self.limit:g} s)")

    def stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


_in_flight = threading.local()


def _call_started(model: Any, context: dict[str, Any], **_: Any) -> None:
    service = model.service_model.service_name
    endpoint = context.get(_ENDPOINT_KEY, "AWS")
    _in_flight.call = _Call(service, model.name, endpoint, call_time_limit())


def _attempt_starting(request: Any, **_: Any) -> None:
    call: _Call | None = getattr(_in_flight, "call", None)
    if call is None:
        return
    call.stop_timer()
    if call.attempts and time.monotonic() - call.started + call.connect + call.read > call.limit:
        # Another attempt could not finish in time: end the call here (botocore does not retry this error).
        raise CallTimeLimitExceeded(endpoint=call.endpoint, operation=call.operation, limit=call.limit,
                                    attempts=call.attempts, connect=call.connect, read=call.read)
    call.attempts += 1
    # Within the attempt's own read timeout, so even a short limit shows what it waits for.
    call.timer = threading.Timer(min(WAIT_NOTICE_SECONDS, call.read / 2), call.notice, args=(call.attempts,))
    call.timer.daemon = True
    call.timer.start()


def _attempt_ended(**_: Any) -> None:
    call: _Call | None = getattr(_in_flight, "call", None)
    if call is not None:
        call.stop_timer()


def _call_ended(**_: Any) -> None:
    call: _Call | None = getattr(_in_flight, "call", None)
    if call is not None:
        call.stop_timer()
        _in_flight.call = None


#: Key of the failed response under which :func:`instrument` records what the request was about.
REQUEST_KEY = "FastscaleRequest"
#: Request parameters that name what a call is about, in the order they are shown.
_RESOURCE_PARAM = re.compile(r"(Name|Arn|ResourceId|Id|NameEquals|Bucket|Key|RepositoryName|ImageIds)\Z")


def _remember_resource(params: Mapping[str, Any], context: dict[str, Any], **_: Any) -> None:
    found = [
        f"{key}={value}"
        for key, value in params.items()
        if isinstance(value, str) and _RESOURCE_PARAM.search(key) and key != "NextToken"
    ]
    if found:
        context[REQUEST_KEY] = ", ".join(found[:3])


def _attach_resource(parsed: dict[str, Any], context: Mapping[str, Any], **_: Any) -> None:
    if isinstance(parsed, dict) and "Error" in parsed and REQUEST_KEY in context:
        parsed[REQUEST_KEY] = context[REQUEST_KEY]


#: Key of a failed response under which :func:`mark_emulator` records the emulator the call went to.
EMULATOR_KEY = "FastscaleEmulator"
#: Attribute of a call's exception (a connection failure: no response) naming that emulator.
EMULATOR_ATTR = "fastscale_emulator"


def mark_emulator(api: BaseClient, url: str) -> BaseClient:
    """Make a failed call of ``api``, answered or not, say that it went to the emulator at ``url`` (fastscale's ``endpoint_url``),
    so that its message blames the emulator, never AWS (:func:`.errors.describe_failure`). Idempotent."""

    def attach(parsed: dict[str, Any], **_: Any) -> None:
        if isinstance(parsed, dict) and "Error" in parsed:
            parsed[EMULATOR_KEY] = url

    def attach_to_exception(exception: BaseException, **_: Any) -> None:  # no answer at all: cannot connect
        setattr(exception, EMULATOR_ATTR, url)

    api.meta.events.register("after-call.*.*", attach, unique_id="fastscale-emulator")
    api.meta.events.register("after-call-error.*.*", attach_to_exception, unique_id="fastscale-emulator-error")
    return api


#: Key of a call's context under which :func:`instrument` records the endpoint it goes to.
_ENDPOINT_KEY = "FastscaleEndpoint"


def instrument(api: BaseClient) -> BaseClient:
    """Make a failed call's error say which resource it was about (botocore's ClientError only names the
    operation), bound every call's total time and report long waits on stderr. Idempotent; applied to every
    client handed out, real, moto-backed or Stubber-wrapped."""
    events = api.meta.events
    events.register("before-parameter-build.*.*", _remember_resource, unique_id="fastscale-resource")
    events.register("after-call.*.*", _attach_resource, unique_id="fastscale-resource-attach")
    endpoint = api.meta.endpoint_url

    def remember_endpoint(context: dict[str, Any], **_: Any) -> None:
        context[_ENDPOINT_KEY] = endpoint

    events.register("before-parameter-build.*.*", remember_endpoint, unique_id="fastscale-endpoint")
    events.register("before-call.*.*", _call_started, unique_id="fastscale-call-started")
    # First among the before-send handlers, so a call past its limit ends before any handler sends it.
    events.register_first("before-send.*.*", _attempt_starting, unique_id="fastscale-attempt")
    events.register("response-received.*.*", _attempt_ended, unique_id="fastscale-attempt-ended")
    events.register("after-call.*.*", _call_ended, unique_id="fastscale-call-ended")
    events.register("after-call-error.*.*", _call_ended, unique_id="fastscale-call-failed")
    return api
