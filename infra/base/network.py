"""Which hosts an ``endpoint_url`` may name: fastscale sends requests signed with the runner's AWS
credentials there (Terraform's providers, the S3 state backend and fastscale's own boto3 calls).

The host is judged from the URL alone, never by asking DNS: a name's answer can change between the check
and the connection (DNS rebinding), and a lookup at validate time would itself be a request to a place the
config chose.

- **loopback** (127.0.0.0/8, ::1, and the name ``localhost``) and **private** addresses (RFC 1918
  10/8, 172.16/12, 192.168/16; IPv6 unique local fc00::/7) are accepted: an emulator on this machine, in a
  container network or on the team's own network.
- **link-local and cloud metadata** addresses (169.254.0.0/16, fe80::/10, fd00:ec2::254,
  100.100.100.200, and the unspecified, multicast and broadcast addresses) are always refused: signed
  requests there reach the instance metadata service, or no one in particular.
- **every other host** (a public address, any host name but ``localhost``, a carrier-grade NAT address)
  is *remote*: accepted only when the command line says ``--send-credentials-to-endpoint-url``. The
  config cannot opt in by itself, since the config is what an untrusted pull request changes.

Numeric IPv4 spellings that resolvers accept (``2852039166``, ``0xa9fea9fe``, ``169.254.43518``) are read
as the address they stand for, and IPv4-mapped IPv6 addresses (``::ffff:169.254.169.254``) as their IPv4
address, so no spelling turns a refused address into a "host name".
"""

from __future__ import annotations

import ipaddress
import socket
from enum import Enum
from urllib.parse import urlsplit

#: Command-line flag (and environment variable) that lets an endpoint URL name a remote host.
TRUST_FLAG = "--send-credentials-to-endpoint-url"
TRUST_ENVVAR = "FASTSCALE_SEND_CREDENTIALS_TO_ENDPOINT_URL"

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class HostKind(str, Enum):
    LOOPBACK = "loopback"
    PRIVATE = "private"
    REFUSED = "refused"  # link-local, cloud metadata, unspecified, multicast, broadcast
    REMOTE = "remote"  # any other address, any host name but localhost


#: Instance metadata services outside 169.254.0.0/16 and fe80::/10: EC2's IPv6 IMDS (inside the unique
#: local range, so it must be named) and Alibaba Cloud's (inside carrier-grade NAT space).
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in ("fd00:ec2::254", "100.100.100.200"))

_PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)
_LOCALHOST = "localhost"


def literal_address(host: str) -> IpAddress | None:
    """The address ``host`` spells, in any form a resolver would accept as a number; None for a name."""
    try:
        address: IpAddress = ipaddress.ip_address(host)
    except ValueError:
        try:
            # inet_aton takes the classic shorthand (decimal, octal, hex, fewer than four parts) that
            # getaddrinfo, and so every HTTP client, accepts too.
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except (OSError, ValueError):
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def classify_address(address: IpAddress) -> HostKind:
    if address in METADATA_ADDRESSES or address.is_link_local or address.is_unspecified or address.is_multicast:
        return HostKind.REFUSED
    if isinstance(address, ipaddress.IPv4Address) and address == ipaddress.IPv4Address("255.255.255.255"):
        return HostKind.REFUSED
    if address.is_loopback:
        return HostKind.LOOPBACK
    if any(address in network for network in _PRIVATE_NETWORKS):
        return HostKind.PRIVATE
    return HostKind.REMOTE


def classify_host(host: str) -> HostKind:
    """What kind of host ``host`` (a URL's host name, brackets removed) is; see the module docstring."""
    name = host.strip().rstrip(".").lower()
    if "%" in name:  # an IPv6 zone (fe80::1%eth0): only link-local addresses carry one
        name = name.split("%", 1)[0]
    if name == _LOCALHOST:
        return HostKind.LOOPBACK
    address = literal_address(name)
    return classify_address(address) if address is not None else HostKind.REMOTE


def url_host_kind(url: str) -> HostKind:
    """The kind of host of an http(s) URL already checked for form (``config.check_endpoint_url``)."""
    return classify_host(urlsplit(url).hostname or "")


def refused_reason(url: str) -> str | None:
    """Why ``url`` may never receive fastscale's requests, or None when its host may."""
    if url_host_kind(url) is not HostKind.REFUSED:
        return None
    return (f"'{url}' names a link-local, cloud metadata, multicast or unspecified address: requests signed "
            "with your AWS credentials are never sent there; an emulator listens on localhost, 127.0.0.1 or "
            "a private address (10.x, 172.16-31.x, 192.168.x, fc00::/7)")


def remote_reason(url: str, where: str) -> str | None:
    """Why ``url`` (found at ``where``) needs the opt-in flag, or None when its host is local or private."""
    kind = url_host_kind(url)
    if kind is not HostKind.REMOTE:
        return None
    host = urlsplit(url).hostname or ""
    what = "a public address" if literal_address(host) is not None else "a host name other than localhost"
    return (f"{where} '{url}' names {what}: every AWS call, signed with the runner's AWS credentials, would go "
            "there, and fastscale only sends them to loopback or private addresses unless told to on the "
            "command line")


def remote_hint(url: str) -> str:
    return (f"point it at the emulator by address (http://localhost:4566, http://127.0.0.1:4566, or its "
            f"private address); if you trust {urlsplit(url).hostname} with these credentials, run the command "
            f"with {TRUST_FLAG} (or {TRUST_ENVVAR}=1); the config alone cannot allow it")
