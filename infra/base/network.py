"""Which hosts an ``endpoint_url`` may name. fastscale sends every AWS call there: Terraform's providers, the
S3 state backend and fastscale's own boto3 calls. Those calls carry dummy credentials unless the command
line says ``--send-credentials-to-endpoint-url`` (``infra.base.credentials``); the host is judged here.

The host is judged from the URL alone, never by asking DNS: a name's answer can change between the check
and the connection (DNS rebinding), and a lookup at validate time would itself be a request to a place the
config chose.

- **loopback** (127.0.0.0/8, ::1, and the name ``localhost``) and **private** addresses (RFC 1918
  10/8, 172.16/12, 192.168/16; IPv6 unique local fc00::/7 except AWS's own fd00:ec2::/32) are accepted:
  an emulator on this machine, in a container network or on the team's own network.
- **cloud-internal** addresses are always refused, whatever the command line says: all of 169.254.0.0/16
  (EC2's instance metadata service 169.254.169.254, the ECS credential endpoint 169.254.170.2, the EKS Pod
  Identity Agent 169.254.170.23, Amazon DNS and Time Sync), all of fd00:ec2::/32 (their IPv6 addresses:
  metadata fd00:ec2::254, DNS fd00:ec2::253, Time Sync fd00:ec2::123, the Pod Identity Agent
  fd00:ec2::23), the rest of fe80::/10, Alibaba Cloud's metadata address 100.100.100.200, and the
  unspecified, multicast and broadcast addresses. So are host names whose first label is ``metadata`` or
  ``instance-data`` (``metadata.google.internal``, ``instance-data.ec2.internal``), which cloud resolvers
  answer with a metadata address.
- **every other host** (a public address, a carrier-grade NAT address, any host name but ``localhost``) is
  *remote*: accepted only when the command line says ``--send-credentials-to-endpoint-url``. The config
  cannot opt in by itself, since the config is what an untrusted pull request changes. A name may resolve
  to anything, a metadata address included: with the flag, whoever runs the command vouches for it.

Every spelling of an address counts as the address: numeric IPv4 shorthands that resolvers accept
(``2852039166``, ``0xa9fea9fe``, ``0251.0376.0251.0376``, ``169.254.43518``), trailing dots, upper case,
IPv6 zone ids, and IPv4 addresses carried inside IPv6 ones (``::ffff:169.254.169.254``, the IPv4-compatible
``::a9fe:a9fe``, NAT64 ``64:ff9b::a9fe:a9fe``, 6to4 and Teredo). A host that is neither an address nor a
plain ASCII name (letters, digits, ``-``, ``_``, dots) is not judged at all but refused: percent-encoding,
other Unicode digits and spaces are read differently by different URL parsers and resolvers.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from enum import Enum
from urllib.parse import urlsplit

#: The command-line flag that sends the runner's real AWS credentials to an endpoint URL, and lets that URL
#: name a remote host. Only the command line sets it: no config key, no environment variable.
TRUST_FLAG = "--send-credentials-to-endpoint-url"

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class HostKind(str, Enum):
    LOOPBACK = "loopback"
    PRIVATE = "private"
    REFUSED = "refused"  # cloud-internal, link-local, metadata names, unspecified, multicast, broadcast, malformed
    REMOTE = "remote"  # any other address, any host name but localhost


#: AWS's addresses inside the IPv6 unique local range (which is otherwise private): instance metadata
#: (::254), Amazon DNS (::253), Time Sync (::123), the EKS Pod Identity Agent (::23). The whole /32 is AWS's.
AWS_INTERNAL_V6 = ipaddress.IPv6Network("fd00:ec2::/32")
#: Metadata services outside 169.254.0.0/16: Alibaba Cloud's, inside carrier-grade NAT space.
METADATA_ADDRESSES = frozenset({ipaddress.IPv4Address("100.100.100.200")})
#: First labels of host names that cloud resolvers answer with a metadata address (fastscale's list).
METADATA_NAME_LABELS = frozenset({"metadata", "instance-data"})
#: Prefixes whose IPv6 addresses carry an IPv4 address in their last 32 bits: IPv4-compatible (deprecated),
#: NAT64 (well-known and local-use).
_EMBEDDING_V6 = tuple(ipaddress.IPv6Network(n) for n in ("::/96", "64:ff9b::/96", "64:ff9b:1::/48"))

_PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)
_LOCALHOST = "localhost"
_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")


def literal_address(host: str) -> IpAddress | None:
    """The address ``host`` spells, in any form a resolver would accept as a number; None for a name."""
    try:
        address: IpAddress = ipaddress.ip_address(host)
    except ValueError:
        if not re.fullmatch(r"[0-9a-fx.]+", host):
            return None  # inet_aton also takes "1.2.3.4 anything": only a number is a number
        try:
            # inet_aton takes the classic shorthand (decimal, octal, hex, fewer than four parts) that
            # getaddrinfo, and so every HTTP client, accepts too.
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except (OSError, ValueError):
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (NAT64, 6to4, Teredo, IPv4-compatible)."""
    found = [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF) for net in _EMBEDDING_V6 if address in net]
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def _cloud_internal(address: IpAddress) -> bool:
    return (address in METADATA_ADDRESSES or address.is_link_local or address.is_unspecified
            or address.is_multicast or address == ipaddress.IPv4Address("255.255.255.255")
            or (isinstance(address, ipaddress.IPv6Address) and address in AWS_INTERNAL_V6))


def classify_address(address: IpAddress) -> HostKind:
    if isinstance(address, ipaddress.IPv6Address):
        address = ipaddress.IPv6Address(int(address))  # without a zone id
        if address.ipv4_mapped is not None:
            return classify_address(address.ipv4_mapped)
        if address != ipaddress.IPv6Address("::1") and any(_cloud_internal(v4) for v4 in _embedded_ipv4(address)):
            return HostKind.REFUSED
    if _cloud_internal(address):
        return HostKind.REFUSED
    if address.is_loopback:
        return HostKind.LOOPBACK
    if any(address in network for network in _PRIVATE_NETWORKS):
        return HostKind.PRIVATE
    return HostKind.REMOTE


def host_form_problem(host: str) -> str | None:
    """Why ``host`` (a URL's host, brackets removed) is neither an IP address nor a plain ASCII host name;
    None when it is one of them."""
    if "%" in host:
        return ("carries a zone id or percent-encoding: only link-local IPv6 addresses need a zone, and those "
                "are refused; write the host plainly")
    name = host.rstrip(".").lower()
    if ":" in name:
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return "is not an IPv6 address"
        return None
    if not name or not _NAME.fullmatch(name):
        return ("is neither an IP address nor a host name of ASCII letters, digits, '-', '_' and dots: other "
                "characters are read differently by different URL parsers and resolvers")
    return None


def classify_host(host: str) -> HostKind:
    """What kind of host ``host`` (a URL's host name, brackets removed) is; see the module docstring."""
    name = host.strip().rstrip(".").lower()
    if "%" in name:  # an IPv6 zone (fe80::1%eth0): judged as the address without it
        name = name.split("%", 1)[0]
    if host_form_problem(name) is not None:
        return HostKind.REFUSED
    if name == _LOCALHOST:
        return HostKind.LOOPBACK
    address = literal_address(name)
    if address is not None:
        return classify_address(address)
    return HostKind.REFUSED if name.split(".", 1)[0] in METADATA_NAME_LABELS else HostKind.REMOTE


def url_host_kind(url: str) -> HostKind:
    """The kind of host of an http(s) URL (see :func:`endpoint_url_problem` for its form)."""
    try:
        return classify_host(urlsplit(url).hostname or "")
    except ValueError:  # an unbalanced bracket
        return HostKind.REFUSED


def endpoint_url_problem(value: str) -> str | None:
    """Why ``value`` may not be an endpoint URL, or None: an http(s) URL ``scheme://host[:port][/path]`` in
    printable ASCII, with no credentials, query or fragment, whose host is not cloud-internal."""
    if not value.isascii() or any(ch.isspace() or not ch.isprintable() for ch in value) or "\\" in value:
        return (f"{value!r} is not an http(s) URL such as http://localhost:4566: it holds a space, a control "
                "character, a backslash or a character outside ASCII")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError:
        return f"'{value}' is not an http(s) URL such as http://localhost:4566 (its host or port is malformed)"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"'{value}' is not an http(s) URL such as http://localhost:4566"
    if "@" in parts.netloc or parts.query or parts.fragment or "?" in value or "#" in value:
        return f"'{value}' must not carry credentials, a query or a fragment"
    problem = host_form_problem(parts.hostname)
    if problem is not None:
        return f"'{value}': its host {problem}"
    return refused_reason(value)


def refused_reason(url: str) -> str | None:
    """Why ``url`` may never receive fastscale's requests, or None when its host may."""
    if url_host_kind(url) is not HostKind.REFUSED:
        return None
    return (f"'{url}' names a link-local, cloud metadata or other cloud-internal address or name (169.254.0.0/16, "
            "fd00:ec2::/32, the EC2 instance metadata service, the ECS and EKS credential endpoints, "
            "metadata.* and instance-data.* names), or a multicast or unspecified address: fastscale never sends "
            "requests there, whatever the command line says; an emulator listens on localhost, 127.0.0.1 or a "
            "private address (10.x, 172.16-31.x, 192.168.x, fc00::/7)")


def remote_reason(url: str, where: str) -> str | None:
    """Why ``url`` (found at ``where``) needs the opt-in flag, or None when its host is local or private."""
    kind = url_host_kind(url)
    if kind is not HostKind.REMOTE:
        return None
    host = urlsplit(url).hostname or ""
    what = "a public address" if literal_address(host.rstrip(".")) is not None else "a host name other than localhost"
    return (f"{where} '{url}' names {what}: fastscale sends AWS calls only to loopback or private addresses "
            f"unless the command line says {TRUST_FLAG}, which also signs them with your real AWS credentials")


def remote_hint(url: str) -> str:
    return (f"point it at the emulator by address (http://localhost:4566, http://127.0.0.1:4566, or its "
            f"private address); if you trust {urlsplit(url).hostname} with your AWS credentials, run the command "
            f"with {TRUST_FLAG}; neither the config nor an environment variable can allow it")
