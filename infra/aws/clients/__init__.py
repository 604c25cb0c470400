"""boto3 clients and AWS error classification shared by verification, cleanup, sweep and preflight.

Every client is built by :func:`client` with adaptive retries: a deploy, a verification and a sweep each
make many describe calls in a burst, and SageMaker / Application Auto Scaling throttle such bursts.
Adaptive mode both retries and slows the client down instead of failing the run. The retries are bounded
(:data:`MAX_ATTEMPTS` attempts, at most :data:`MAX_BACKOFF_SECONDS` s of back-off in all, connections
given up after :data:`CONNECT_TIMEOUT` s) so that an account that keeps throttling, or an endpoint that
cannot be reached, fails the command within about a minute instead of looking hung; the long waits that
need patience (endpoints becoming InService) poll through throttling on their own.

Every call also has a **total time limit** (:data:`CALL_TIME_LIMIT` seconds, or
``FASTSCALE_AWS_CALL_TIMEOUT``): no new attempt starts when it could not finish within the limit, so a
server that accepts connections and never answers ends the call in about that time (not 5 x 60 s), with
one line naming the call and the endpoint. While a call waits longer than :data:`WAIT_NOTICE_SECONDS`,
one line per attempt on stderr says what it waits for (service, operation, endpoint, attempt); stdout (and
so ``--json``) is never written to.

Every public function that talks to AWS is wrapped in :func:`translate_errors`: whatever botocore raises
leaves it as one :class:`AwsError` whose message is one line naming the error code, the operation and the
resource it was about (:func:`describe_failure`).

Functions that talk to AWS take ``clients=``: ``None`` (build real clients for the config's region), an
:class:`AwsClients`, or a mapping of service name to an already built client (tests pass moto-backed or
Stubber-wrapped clients that way).

The package, one module per part: :mod:`.calls` (every call bounded in attempts and time, long waits reported,
a failed call labelled with its resource), :mod:`.errors` (AWS's error codes classified, one-line messages,
:class:`AwsError`), :mod:`.endpoints` (where calls may go and with which credentials: an emulator's URL and the
dummy keys its calls carry), :mod:`.factory` (the clients themselves: :func:`client`, :class:`AwsClients`, ``clients=``, and
paging). The names below are the ones callers use; the settings tests change (``RETRY_CONFIG``,
``WAIT_NOTICE_SECONDS``, ``wait_reporter``) are set on :mod:`.calls` itself, where they are read.
"""

from __future__ import annotations

from fastscale.infra.aws.clients.calls import (
    CALL_TIME_LIMIT,
    CALL_TIME_LIMIT_ENV,
    CONNECT_TIMEOUT,
    MAX_ATTEMPTS,
    MAX_BACKOFF_SECONDS,
    READ_TIMEOUT,
    REQUEST_KEY,
    CallTimeLimitExceeded,
    call_time_limit,
    instrument,
)
from fastscale.infra.aws.clients.endpoints import EndpointRefused, dummy_session, refuse_endpoint
from fastscale.infra.aws.clients.errors import (
    ACCESS_CODES,
    THROTTLING_CODES,
    UNSUPPORTED_CODES,
    AwsError,
    as_aws_error,
    describe_error,
    describe_failure,
    error_code,
    error_message,
    is_access_error,
    is_not_found,
    is_throttling,
    translate_errors,
)
from fastscale.infra.aws.clients.factory import (
    SERVICE_ALIASES,
    AwsClients,
    ClientsArg,
    chunks,
    client,
    for_config,
    paginate,
    resolve,
)

__all__ = [
    "ACCESS_CODES",
    "CALL_TIME_LIMIT",
    "CALL_TIME_LIMIT_ENV",
    "CONNECT_TIMEOUT",
    "MAX_ATTEMPTS",
    "MAX_BACKOFF_SECONDS",
    "READ_TIMEOUT",
    "REQUEST_KEY",
    "SERVICE_ALIASES",
    "THROTTLING_CODES",
    "UNSUPPORTED_CODES",
    "AwsClients",
    "AwsError",
    "CallTimeLimitExceeded",
    "ClientsArg",
    "EndpointRefused",
    "as_aws_error",
    "call_time_limit",
    "chunks",
    "client",
    "describe_error",
    "describe_failure",
    "dummy_session",
    "error_code",
    "error_message",
    "for_config",
    "instrument",
    "is_access_error",
    "is_not_found",
    "is_throttling",
    "paginate",
    "refuse_endpoint",
    "resolve",
    "translate_errors",
]
