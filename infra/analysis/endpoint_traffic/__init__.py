"""Request traces from a live endpoint's own traffic, for ``simulate --from-endpoint`` and ``recommend
--from-endpoint``: pure Python, fed by the reader in :mod:`fastscale.infra.aws.traffic` (the only part that
calls AWS).

- :mod:`~fastscale.infra.analysis.endpoint_traffic.window`: the window (``--since``) and CloudWatch's retention;
- :mod:`~fastscale.infra.analysis.endpoint_traffic.target`: which live endpoint and component to read, and which
  workload of the file replays the traffic;
- :mod:`~fastscale.infra.analysis.endpoint_traffic.capture`: SageMaker data capture lines read into requests
  (arrival time, prompt and output tokens), malformed lines counted and skipped;
- :mod:`~fastscale.infra.analysis.endpoint_traffic.build`: the trace itself, from captured requests or from
  CloudWatch metrics, with every assumption stated, and its CSV.
"""

from fastscale.infra.analysis.endpoint_traffic.build import (
    DATA_CAPTURE,
    MAX_TRACE_REQUESTS,
    METRICS,
    EndpointTrace,
    NoTrafficError,
    Series,
    from_capture,
    from_metrics,
    trace_csv,
)
from fastscale.infra.analysis.endpoint_traffic.capture import (
    CHARS_PER_TOKEN,
    DEFAULT_TOKENS,
    CaptureTally,
    TokenProfile,
    TrafficInputError,
    parse_record,
    parse_tokens,
    split_lines,
)
from fastscale.infra.analysis.endpoint_traffic.target import LiveTarget, live_target
from fastscale.infra.analysis.endpoint_traffic.window import (
    DEFAULT_SINCE,
    HIGH_RESOLUTION_RETENTION,
    LONGEST_SINCE,
    Window,
    parse_duration,
    parse_since,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "DATA_CAPTURE",
    "DEFAULT_SINCE",
    "DEFAULT_TOKENS",
    "HIGH_RESOLUTION_RETENTION",
    "LONGEST_SINCE",
    "MAX_TRACE_REQUESTS",
    "METRICS",
    "CaptureTally",
    "EndpointTrace",
    "LiveTarget",
    "NoTrafficError",
    "Series",
    "TokenProfile",
    "TrafficInputError",
    "Window",
    "from_capture",
    "from_metrics",
    "live_target",
    "parse_duration",
    "parse_record",
    "parse_since",
    "parse_tokens",
    "split_lines",
    "trace_csv",
]
