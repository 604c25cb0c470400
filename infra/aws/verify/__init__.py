"""Prove with boto3 that what the stack built is live and configured as the YAML file says.

Terraform reporting "apply complete" only means the API calls were accepted: the endpoint may still be
Creating (or end up Failed), and a scaling policy on the wrong metric type deploys without complaint but
reacts in minutes instead of seconds. ``verify_live`` reads every resource back and compares it with the
config, one :class:`Check` per property, so a report names exactly what differs.

``wait=True`` (after a deploy) waits for endpoints and inference components to leave their transient
states; ``wait=False`` (``fastscale status``) takes one look and reports what is live and what differs.

The package, one module per part: :mod:`.report` (the :class:`Check`, the report, and the :class:`.report.Checker`
every check writes through), :mod:`.endpoint` (an endpoint, its configuration, capacity and models),
:mod:`.components` (its inference components), :mod:`.scaling` (scalable targets, policies and alarms) and
:mod:`.live` (:func:`verify_live`: which checks run for a config, in which order). The names below are the ones
callers use.
"""

from __future__ import annotations

from fastscale.infra.aws.verify.live import DEFAULT_VERIFY_TIMEOUT, verify_live
from fastscale.infra.aws.verify.report import Check, VerificationReport

__all__ = ["DEFAULT_VERIFY_TIMEOUT", "Check", "VerificationReport", "verify_live"]
