"""Which hosts an endpoint URL may name, judged from the URL alone (no DNS lookup, here or in the code)."""

import pytest

from fastscale.infra.base.network import HostKind, classify_host, endpoint_url_problem
from fastscale.infra.config import ConfigError, parse_config

LOOPBACK, PRIVATE, REFUSED, REMOTE = HostKind.LOOPBACK, HostKind.PRIVATE, HostKind.REFUSED, HostKind.REMOTE

#: Every spelling of a cloud-internal address fastscale knows of: each must be refused.
CLOUD_INTERNAL = [
    # EC2 instance metadata, in every IPv4 spelling a resolver accepts
    "169.254.169.254", "169.254.169.254.", "169.254.169.254..", "2852039166", "0xa9fea9fe", "0XA9FEA9FE",
    "0251.0376.0251.0376", "0xa9.0xfe.0xa9.0xfe", "169.254.43518", "169.16689662", "0251.0xfe.43518",
    # the same address carried by IPv6 (mapped, compatible, NAT64 well-known and local-use, 6to4)
    "::ffff:169.254.169.254", "::ffff:a9fe:a9fe", "::169.254.169.254", "64:ff9b::169.254.169.254",
    "64:ff9b:1::a9fe:a9fe", "2002:a9fe:a9fe::1",
    # ECS task credentials, EKS Pod Identity Agent, Amazon DNS and Time Sync over IPv4
    "169.254.170.2", "169.254.170.23", "169.254.169.253", "169.254.169.123",
    # AWS's IPv6 addresses: metadata, DNS, Time Sync, Pod Identity Agent, and the rest of fd00:ec2::/32
    "fd00:ec2::254", "fd00:ec2::253", "fd00:ec2::123", "fd00:ec2::23", "FD00:EC2::23", "fd00:ec2:0:0:0:0:0:23",
    "fd00:ec2::23%eth0", "fd00:ec2:ffff::1",
    # link-local IPv6, with and without a zone; Alibaba's metadata; nobody in particular
    "fe80::1", "fe80::a9fe:a9fe%eth0", "100.100.100.200", "0.0.0.0", "0", "::", "224.0.0.1", "ff02::1",
    "255.255.255.255", "::ffff:0.0.0.0",
    # names that cloud resolvers answer with a metadata address
    "metadata", "metadata.google.internal", "METADATA.GOOGLE.INTERNAL.", "metadata.goog", "instance-data",
    "instance-data.ec2.internal", "instance-data.us-west-2.compute.internal",
    # not a plain host at all: other Unicode digits (IDNA would fold them to 169.254.169.254), spaces
    "①⑥⑨.②⑤④.①⑥⑨.②⑤④", "169.254.169.254 x", "1\u0669.0.0.1", "",
]


@pytest.mark.parametrize("host", CLOUD_INTERNAL)
def test_cloud_internal_hosts_are_refused_in_every_spelling(host):
    assert classify_host(host) is REFUSED


@pytest.mark.parametrize("host,kind", [
    ("localhost", LOOPBACK), ("LocalHost.", LOOPBACK), ("127.0.0.1", LOOPBACK), ("127.1", LOOPBACK),
    ("0x7f000001", LOOPBACK), ("::1", LOOPBACK), ("::ffff:127.0.0.1", LOOPBACK),
    ("10.1.2.3", PRIVATE), ("172.31.255.1", PRIVATE), ("192.168.0.1", PRIVATE), ("fd12::1", PRIVATE),
    ("fd00:ec3::1", PRIVATE), ("fcff::1", PRIVATE), ("::ffff:10.0.0.1", PRIVATE),
    ("172.32.0.1", REMOTE), ("8.8.8.8", REMOTE), ("100.64.1.1", REMOTE), ("2001:db8::1", REMOTE),
    ("64:ff9b::808:808", REMOTE), ("example.com", REMOTE), ("localhost.example.com", REMOTE),
    ("localstack_main", REMOTE), ("metadata-store.example.com", REMOTE), ("mymetadata", REMOTE),
])
def test_other_hosts_are_classified_from_their_spelling(host, kind):
    assert classify_host(host) is kind


@pytest.mark.parametrize("url", [
    "http://169.254.169.254/latest/meta-data", "http://[fd00:ec2::254]", "http://[fd00:ec2::23]:80/",
    "http://0xA9FEA9FE", "https://[::ffff:a9fe:a9fe]:443", "http://169.254.169.254.:80",
    "http://instance-data/latest/", "http://metadata.google.internal/computeMetadata/v1/",
    "http://[fe80::1%25eth0]:80/", "http://169%2e254%2e169%2e254/", "http://①⑥⑨.②⑤④.①⑥⑨.②⑤④/",
    "http://localhost\\@169.254.169.254/", "http://localhost:4566/\x1b[2J", "http://localhost:4566\n",
    "http://[169.254.169.254]/", "http://localhost:4566#@169.254.169.254", "http://x@169.254.169.254",
])
def test_endpoint_urls_with_such_hosts_are_refused(url):
    assert endpoint_url_problem(url) is not None


@pytest.mark.parametrize("url", ["http://localhost:4566", "http://127.0.0.1:5000/", "https://[::1]:4566/api",
                                 "http://10.0.0.5:4566", "http://[fd12:3456::1]:4566", "http://emulator.internal:4566"])
def test_emulator_urls_pass_the_form_check(url):
    assert endpoint_url_problem(url) is None


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data", "http://[fd00:ec2::254]",
                                 "http://[fd00:ec2::23]", "http://0xA9FEA9FE", "https://[::ffff:a9fe:a9fe]:443",
                                 "http://instance-data"])
def test_metadata_addresses_are_refused_by_the_schema_with_their_line(base_config, url):
    base_config["endpoint_url"] = url
    with pytest.raises(ConfigError) as failed:
        parse_config(base_config, text="project: x\nendpoint_url: " + url + "\n")
    [problem] = failed.value.problems
    assert problem.path == "endpoint_url" and problem.line == 2 and "link-local, cloud metadata" in problem.message


def test_the_state_endpoint_is_held_to_the_same_hosts(base_config):
    base_config["state"] = {"backend": "s3", "bucket": "b", "key": "k", "endpoint_url": "http://[fd00:ec2::23]"}
    with pytest.raises(ConfigError) as failed:
        parse_config(base_config)
    assert failed.value.problems[0].path == "state.endpoint_url"
