""":func:`verify_live`: which checks run for a config, in which order. For each endpoint its own checks
(:mod:`.endpoint`), its model or its inference components (:mod:`.components`), its execution role, what scales it
(:mod:`.scaling`); then the dashboard. The role and the dashboard are only checked to exist, here.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import ClientsArg, error_code, is_not_found, resolve, translate_errors
from fastscale.infra.aws.verify.components import check_component, check_unexpected_components
from fastscale.infra.aws.verify.endpoint import check_endpoint, check_model
from fastscale.infra.aws.verify.report import Checker, VerificationReport
from fastscale.infra.aws.verify.scaling import check_alarms, check_scaling
from fastscale.infra.aws.waiters import DEFAULT_POLL_INTERVAL, SYSTEM_CLOCK, Clock, Deadline, ProgressCallback
from fastscale.infra.model.resolved import ResolvedEndpoint, ResolvedStack

#: Default bound on a whole verification: creating a GPU endpoint and its components can take 20+ minutes.
DEFAULT_VERIFY_TIMEOUT = 3600.0


@translate_errors


def verify_live(
    stack: ResolvedStack,
    clients: ClientsArg = None,
    wait: bool = True,
    timeout: float = DEFAULT_VERIFY_TIMEOUT,
    on_progress: ProgressCallback | None = None,
    *,
    clock: Clock = SYSTEM_CLOCK,
    interval: float = DEFAULT_POLL_INTERVAL,
) -> VerificationReport:
    """Read back every resource of ``stack`` and compare it with what the stack builds.

    ``timeout`` bounds all waits together; a wait that runs out becomes a failed check naming what it
    waited for and what it last saw. Never raises for a wrong deployment, only for AWS being unusable
    (:class:`infra.aws.clients.AwsError`).
    """
    v = Checker(resolve(clients, stack), Deadline(timeout, clock), wait, interval, on_progress)
    v.stack = stack
    for ep in stack.endpoints:
        _endpoint(v, ep)
    if stack.dashboard is not None:
        check_dashboard(v, stack.dashboard)
    return VerificationReport(v.checks, waited=wait)


def _endpoint(v: Checker, ep: ResolvedEndpoint) -> None:
    """Every check of one endpoint, in the order the report lists them."""
    desc = check_endpoint(v, ep)
    endpoint_live = desc is not None and desc["EndpointStatus"] == "InService"

    if ep.model is not None:
        check_model(v, ep.model.model, ep.model)
    else:
        for c in ep.components:
            check_component(v, ep, c, wait=v.wait and endpoint_live)
        if desc is not None:
            check_unexpected_components(v, ep)
    if ep.execution_role:
        check_role(v, ep.execution_role)
    policy_arns = check_scaling(v, ep)
    check_alarms(v, ep, policy_arns)


def check_role(v: Checker, role: str) -> None:
    try:
        v.aws.iam.get_role(RoleName=role)
    except ClientError as exc:
        if error_code(exc) != "NoSuchEntity":
            raise
        v.record(f"iam-role/{role}", "exists", False, "exists", "does not exist")
        return
    v.record(f"iam-role/{role}", "exists", True)


def check_dashboard(v: Checker, name: str) -> None:
    res = f"dashboard/{name}"
    try:
        v.aws.cloudwatch.get_dashboard(DashboardName=name)
    except ClientError as exc:
        if not is_not_found(exc):
            raise
        v.record(res, "exists", False, "exists", "does not exist")
        return
    v.record(res, "exists", True)
