"""The finders for capacity that did not come: the configured maximum reached, no instances of the type in the
region, the account's quota, copies waiting for an instance managed instance scaling may not add, a model download
or container health check that failed at start-up, and every other failure AWS states in its own words.

AWS only states these causes in free text (``StatusMessage``, ``FailureReason``): the patterns below quote its
wording. :mod:`.detection` and :mod:`.wiring` hold the other finders.
"""

from __future__ import annotations

import re

from fastscale.infra.aws.explain.diagnoses.common import FAILED_ACTIVITY_STATUSES, cap, finding
from fastscale.infra.aws.explain.model import Evidence, Finding, clock_time

# ------------------------------------------------------------------------------------ AWS's own wording
# "Unable to provision requested ML compute capacity due to InsufficientInstanceCapacity error. Please retry
# using a different ML instance type or after some time." (endpoint FailureReason); EC2's "We currently do
# not have sufficient capacity to launch new ml.g6e.2xlarge instances".
_CAPACITY = re.compile(r"InsufficientInstanceCapacity|Unable to provision requested ML compute capacity|"
                       r"insufficient capacity|not have sufficient capacity", re.IGNORECASE)
# "The account-level service limit 'ml.g5.xlarge for endpoint usage' is 4 Instances, with current utilization
# of 3 Instances and a request delta of 3 Instances." (ResourceLimitExceeded)
_QUOTA = re.compile(
    r"service limit '(?P<quota>[^']+)' is (?P<limit>\d+) Instances?, with current utilization of (?P<used>\d+) "
    r"Instances? and a request delta of (?P<delta>\d+) Instances?",
    re.IGNORECASE,
)
_QUOTA_LOOSE = re.compile(r"ResourceLimitExceeded|service limit|service quota", re.IGNORECASE)
# "The primary container for production variant AllTraffic did not pass the ping health check."
_HEALTH_CHECK = re.compile(r"ping health check|health check", re.IGNORECASE)
# 'Failed to download model data for container "container_1" from URL: "s3://..."'
_DOWNLOAD = re.compile(r"download(ing)? (the )?model|model data download|Failed to download", re.IGNORECASE)


def _failure_texts(ev: Evidence) -> list[tuple[str, str]]:
    """(where, text) of every failed activity message and every SageMaker failure reason."""
    out = [(f"{clock_time(a.at)} scaling activity {a.status}", a.message or a.description)
           for a in ev.activities if a.status in FAILED_ACTIVITY_STATUSES]
    if ev.resource is not None:
        out += ev.resource.messages()
    return out


def find_max_reached(ev: Evidence) -> list[Finding]:
    blocked = [a for a in ev.activities for r in a.not_scaled if r.code == "AlreadyAtMaxCapacity"]
    if not blocked:
        return []
    maximum = next((r.maximum for a in blocked for r in a.not_scaled if r.maximum is not None), ev.capacity_max)
    lines = [f"{clock_time(a.at)} not scaled: AlreadyAtMaxCapacity (max {maximum}); cause: {a.cause}" for a in blocked]
    spec = ev.spec
    return [finding(
        ev, "max-reached", f"scale-out was wanted but the maximum of {maximum} {spec.unit} was reached",
        cap(lines) + [f"{len(blocked)} scale-out decision(s) blocked between {clock_time(blocked[-1].at)} and {clock_time(blocked[0].at)}"
                       if len(blocked) > 1 else f"{len(blocked)} scale-out decision blocked"],
        f"raise `{spec.capacity_path}` (now {spec.capacity_max}) and deploy"
        + (f"; each copy needs room on an instance, so check `{spec.endpoint_path}.instances.max` "
           f"({spec.instances_max}) too" if spec.kind == "component" else ""),
    )]


def find_insufficient_capacity(ev: Evidence) -> list[Finding]:
    hits = [f"{where}: {text}" for where, text in _failure_texts(ev) if _CAPACITY.search(text)]
    if not hits:
        return []
    spec = ev.spec
    pools = ev.resource.instance_pools if ev.resource else ()
    fallback = [c for c in spec.fallback if c.instance_type not in pools]
    fix = (f"AWS had no {spec.instance_type} capacity. Add a fallback instance type under "
           f"`{spec.endpoint_path}.capacity.fallback` (each one an InstancePool: SageMaker moves to the next after "
           "insufficient capacity)")
    if fallback:
        fix += (f" that runs the same containers and holds each copy's model on its accelerators, cheapest first: "
                f"e.g. `- instance_type: {fallback[0].instance_type}` ({fallback[0].price_note})")
        if len(fallback) > 1:
            fix += f" (or {' or '.join(c.describe() for c in fallback[1:])})"
    fix += (f", or set `{spec.endpoint_path}.instance_type` to one; `{spec.endpoint_path}.capacity.reservation_arn` "
            "(an ML capacity reservation) guarantees instances")
    if pools:
        fix += f" (pools already tried: {', '.join(pools)})"
    return [finding(ev, "insufficient-capacity", f"no {spec.instance_type} capacity in the region",
                     cap(hits), fix)]


def find_quota_reached(ev: Evidence) -> list[Finding]:
    hits, wanted, quota = [], 0, f"{ev.spec.instance_type} for endpoint usage"
    for where, text in _failure_texts(ev):
        m = _QUOTA.search(text)
        if m:
            quota = m.group("quota")
            wanted = max(wanted, int(m.group("used")) + int(m.group("delta")))
            hits.append(f"{where}: {text}")
        elif _QUOTA_LOOSE.search(text):
            hits.append(f"{where}: {text}")
    if not hits:
        return []
    at_least = f" to at least {wanted}" if wanted else ""
    return [finding(
        ev, "quota-reached", f"the account's quota '{quota}' stopped the scale-out", cap(hits),
        f"request an increase of the Service Quotas quota '{quota}' (service code sagemaker){at_least}: "
        f"`aws service-quotas list-service-quotas --service-code sagemaker` shows its code and value",
    )]


def find_copies_pending(ev: Evidence) -> list[Finding]:
    r, spec = ev.resource, ev.spec
    if spec.kind != "component" or r is None or r.copies_desired is None or r.copies_current is None:
        return []
    if r.copies_desired <= r.copies_current:
        return []
    limit = r.instances_max if r.instances_max is not None else spec.instances_max
    if r.instances_current is None or r.instances_current < limit:
        return []
    return [finding(
        ev, "copies-pending", f"{r.copies_desired - r.copies_current} copy(ies) wait for an instance that may not be added",
        [f"{spec.component}: {r.copies_current} of {r.copies_desired} copies running",
         f"endpoint {spec.endpoint}: {r.instances_current} instance(s), managed instance scaling maximum {limit}"],
        f"raise `{spec.endpoint_path}.instances.max` (now {spec.instances_max}) so SageMaker can add an instance "
        "for the copies, or reserve fewer accelerators / less memory per copy so more copies share an instance",
    )]


#: (code, pattern, live StartupParameters key, config field, title, what to check first)
_STARTUP_FAILURES = (
    ("model-download", _DOWNLOAD, "ModelDataDownloadTimeoutInSeconds", "model_download_timeout",
     "the model download failed or ran out of time",
     "check the model data URL and that the execution role may read it; if the download is only slow, raise"),
    ("health-check", _HEALTH_CHECK, "ContainerStartupHealthCheckTimeoutInSeconds", "startup_health_check_timeout",
     "the container did not pass its start-up health check in time",
     "if the model only loads slowly raise (else fix the container: out of memory is common)"),
)


def find_startup_timeouts(ev: Evidence) -> list[Finding]:
    spec, out = ev.spec, []
    texts = _failure_texts(ev)
    startup = ev.resource.startup if ev.resource else {}
    for code, pattern, key, setting, title, advice in _STARTUP_FAILURES:
        hits = [f"{w}: {t}" for w, t in texts if pattern.search(t)]
        if not hits:
            continue
        live = startup.get(key, getattr(spec, setting))
        out.append(finding(
            ev, code, title, cap(hits),
            f"{advice} `{spec.config_path}.{setting}` (now {live or 'the SageMaker default'}; 60-3600 s); the "
            f"container log group /aws/sagemaker/Endpoints/{spec.endpoint} says why",
        ))
    return out


_CLASSIFIED: tuple[re.Pattern[str], ...] = (_CAPACITY, _QUOTA, _QUOTA_LOOSE, _HEALTH_CHECK, _DOWNLOAD)


#: Not-scaled codes that are the configured bounds at work (max-reached covers the one that blocks scale-out).
_BOUND_CODES = frozenset({"AlreadyAtMaxCapacity", "AlreadyAtMinCapacity", "AlreadyAtDesiredCapacity"})


def find_other_failures(ev: Evidence) -> list[Finding]:
    """Failed activities, refusals by SageMaker and failed resources that no other finder explains."""
    lines = [f"{clock_time(a.at)} {a.status}: {a.message or a.description}" for a in ev.activities
             if a.status in FAILED_ACTIVITY_STATUSES and not a.not_scaled
             and not any(p.search(a.text) for p in _CLASSIFIED)]
    lines += [f"{clock_time(a.at)} not scaled: {r.code}; cause: {a.cause}" for a in ev.activities for r in a.not_scaled
              if r.code not in _BOUND_CODES]
    r = ev.resource
    if r is not None:
        lines += [f"{where}: {text}" for where, text in r.messages()
                  if where.endswith("FailureReason") and not any(p.search(text) for p in _CLASSIFIED)]
    if not lines:
        return []
    return [finding(ev, "scaling-failed", "scaling was refused or failed for a reason AWS states in its own words",
                     cap(lines),
                     "act on AWS's message (TargetServicePutResourceAsUnscalable: the endpoint or component was "
                     "being updated; auto scaling retries once it is InService), then watch the next activity "
                     "(`aws application-autoscaling describe-scaling-activities --include-not-scaled-activities`)")]

