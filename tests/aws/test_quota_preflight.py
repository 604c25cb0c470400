"""The quota preflight: Service Quotas "<instance type> for endpoint usage" against the config's maximums."""

from __future__ import annotations

from fastscale.infra.aws.preflight import check_quotas
from fastscale.infra.config import parse_config
from fastscale.infra.model.resolved import resolve
from fastscale.infra.rules import Severity
from tests.aws.factories import single_model_config
from tests.aws.quota_stubs import quota, quotas_client


def codes(findings):
    return [(f.code, f.severity.value, f.path) for f in findings]


def two_endpoints(fallback=None):
    """Two endpoints on ml.g6.2xlarge, max 4 and max 3 instances (7 in all)."""
    data = single_model_config().model_dump(mode="json", exclude_defaults=True)
    second = {**data["endpoints"][0], "name": "chat2", "instances": {"initial": 1, "min": 1, "max": 3}}
    if fallback:
        second["capacity"] = {"fallback": [{"instance_type": t} for t in fallback]}
    data["endpoints"].append(second)
    return parse_config(data)


def test_within_quota_across_pages_passes():
    client, stub = quotas_client([quota("ml.g5.2xlarge", 2)], [quota("ml.g6.2xlarge", 7)])
    assert check_quotas(resolve(two_endpoints()), clients={"service-quotas": client}) == []
    stub.assert_no_pending_responses()  # both pages were read


def test_summed_maximum_over_quota_is_an_error_naming_every_endpoint():
    client, _ = quotas_client([quota("ml.g6.2xlarge", 6)])
    (finding,) = check_quotas(resolve(two_endpoints()), clients={"service-quotas": client})
    assert (finding.code, finding.severity, finding.path) == ("FS902", Severity.ERROR, "endpoints[0].instances.max")
    assert "up to 7 ml.g6.2xlarge instances (endpoints[0] max 4, endpoints[1] max 3)" in finding.message
    assert '"ml.g6.2xlarge for endpoint usage"' in finding.message and "is 6" in finding.message
    assert "at least 7" in finding.hint


def test_fallback_without_quota_warns_and_unlisted_types_use_the_defaults():
    config = two_endpoints(fallback=["ml.g5.2xlarge", "ml.g6e.2xlarge"])
    client, stub = quotas_client(
        [quota("ml.g6.2xlarge", 8), quota("ml.g5.2xlarge", 0)],
        defaults=[quota("ml.g6e.2xlarge", 2), quota("ml.g6.2xlarge", 1)],  # the applied value (8) wins
    )
    found = check_quotas(resolve(config), clients={"service-quotas": client})
    stub.assert_no_pending_responses()
    assert codes(found) == [
        ("FS902", "warning", "endpoints[1].capacity.fallback[0].instance_type"),
        ("FS902", "warning", "endpoints[1].capacity.fallback[1].instance_type"),
    ]
    assert "could never fall back" in found[0].message
    assert "fewer than the up to 3 instances" in found[1].message


def test_no_such_quota_is_a_warning_not_a_pass():
    client, _ = quotas_client([quota("ml.g5.2xlarge", 2)], defaults=[])
    (finding,) = check_quotas(resolve(single_model_config()), clients={"service-quotas": client})
    assert (finding.severity, finding.path) == (Severity.WARNING, "endpoints[0].instance_type")
    assert "could not be checked" in finding.message


def test_access_denied_is_a_warning():
    client, stub = quotas_client()
    stub.add_client_error("list_service_quotas", "AccessDeniedException", "not authorized", 400)
    (finding,) = check_quotas(resolve(single_model_config()), clients={"service-quotas": client})
    assert finding.severity is Severity.WARNING and "servicequotas:ListServiceQuotas" in finding.hint
