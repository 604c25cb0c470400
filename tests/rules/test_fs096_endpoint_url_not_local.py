import pytest

from fastscale.infra.config import parse_config
from fastscale.infra.rules import all_rules

S3 = {"backend": "s3", "bucket": "team-state", "key": "demo.tfstate"}


@pytest.mark.parametrize("url", ["http://localhost:4566", "http://127.0.0.1:4566", "http://[::1]:4566",
                                 "http://10.0.0.5:4566", "http://172.17.0.2:4566", "http://192.168.1.9",
                                 "http://[fd12:3456::1]:4566"])
def test_loopback_and_private_hosts_pass(run_rule, single_model, url):
    single_model.update(endpoint_url=url, state={**S3, "endpoint_url": url})
    assert run_rule("FS096", single_model) == []


@pytest.mark.parametrize("url,words", [
    ("https://attacker.example.com", "a host name other than localhost"),
    ("http://localhost.localstack.cloud:4566", "a host name other than localhost"),  # DNS is never asked
    ("http://8.8.8.8", "a public address"),
    ("http://100.64.1.1", "a public address"),  # carrier-grade NAT is not a private range
])
def test_remote_hosts_are_errors(run_rule, single_model, url, words):
    single_model["endpoint_url"] = url
    [finding] = run_rule("FS096", single_model)
    assert finding.path == "endpoint_url" and words in finding.message
    assert "--send-credentials-to-endpoint-url" in finding.hint


def test_remote_state_endpoint_is_an_error(run_rule, single_model):
    single_model.update(endpoint_url="http://localhost:4566",
                        state={**S3, "endpoint_url": "https://s3.example.net"})
    [finding] = run_rule("FS096", single_model)
    assert finding.path == "state.endpoint_url"


def test_the_command_line_opt_in_allows_remote_hosts(single_model):
    single_model["endpoint_url"] = "https://emulator.example.com"
    config = parse_config(single_model)
    [rule] = [r for r in all_rules() if r.code == "FS096"]
    assert rule.run(config) and rule.run(config.sending_credentials_to_endpoint()) == []


def test_a_state_endpoint_without_an_emulator_target_is_an_error(run_rule, single_model):
    # Resources in real AWS need the runner's real credentials, and the S3 backend would sign with them too.
    single_model["state"] = {**S3, "endpoint_url": "http://localhost:4566"}
    [finding] = run_rule("FS096", single_model)
    assert finding.path == "state.endpoint_url"
    assert "real AWS credentials" in finding.message and "endpoint_url: http://localhost:4566" in finding.hint
    [rule] = [r for r in all_rules() if r.code == "FS096"]
    assert rule.run(parse_config(single_model).sending_credentials_to_endpoint()) == []
