"""Which hosts an endpoint URL may name, judged from the URL alone."""

import pytest

from fastscale.infra.base.network import HostKind, classify_host
from fastscale.infra.config import ConfigError, parse_config


@pytest.mark.parametrize("host,kind", [
    ("localhost", HostKind.LOOPBACK), ("LocalHost.", HostKind.LOOPBACK), ("127.0.0.1", HostKind.LOOPBACK),
    ("127.1", HostKind.LOOPBACK), ("::1", HostKind.LOOPBACK),
    ("10.1.2.3", HostKind.PRIVATE), ("172.31.255.1", HostKind.PRIVATE), ("192.168.0.1", HostKind.PRIVATE),
    ("fd12::1", HostKind.PRIVATE),
    ("169.254.169.254", HostKind.REFUSED), ("169.254.170.2", HostKind.REFUSED), ("2852039166", HostKind.REFUSED),
    ("0xa9fea9fe", HostKind.REFUSED), ("0251.0376.0251.0376", HostKind.REFUSED), ("169.254.43518", HostKind.REFUSED),
    ("::ffff:169.254.169.254", HostKind.REFUSED), ("fe80::1%eth0", HostKind.REFUSED),
    ("fd00:ec2::254", HostKind.REFUSED), ("100.100.100.200", HostKind.REFUSED), ("0.0.0.0", HostKind.REFUSED),
    ("::", HostKind.REFUSED), ("224.0.0.1", HostKind.REFUSED), ("255.255.255.255", HostKind.REFUSED),
    ("172.32.0.1", HostKind.REMOTE), ("8.8.8.8", HostKind.REMOTE), ("2001:db8::1", HostKind.REMOTE),
    ("example.com", HostKind.REMOTE), ("localhost.example.com", HostKind.REMOTE), ("metadata.google.internal", HostKind.REMOTE),
])
def test_hosts_are_classified_from_their_spelling(host, kind):
    assert classify_host(host) is kind


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data", "http://[fd00:ec2::254]",
                                 "http://0xA9FEA9FE", "https://[::ffff:a9fe:a9fe]:443"])
def test_metadata_addresses_are_refused_by_the_schema_with_their_line(base_config, url):
    base_config["endpoint_url"] = url
    with pytest.raises(ConfigError) as failed:
        parse_config(base_config, text="project: x\nendpoint_url: " + url + "\n")
    [problem] = failed.value.problems
    assert problem.path == "endpoint_url" and problem.line == 2 and "link-local, cloud metadata" in problem.message
