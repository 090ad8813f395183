"""Which IP addresses a retrieval may connect to: the address rule of docs/grounding.md.

Threat model. A URL embedded in a candidate, or a redirect from an allowlisted page, tries
to make jurat read cloud metadata (169.254.169.254), a service on the evaluation host
(loopback) or private infrastructure (RFC 1918, CGNAT, IPv6 ULA and link-local), or
smuggles one of those inside an IPv6 spelling (IPv4-mapped ``::ffff:a.b.c.d``, NAT64
``64:ff9b::a.b.c.d``). Every address a name resolves to is classified here before any
connection is made; anything that is not a public unicast address is refused unless the
origin opts in with ``allow_private``. Unspecified, multicast, broadcast and reserved
addresses are refused even then: no legitimate evidence source lives there.

The tables are explicit rather than ``ipaddress``'s ``is_private``, whose membership has
changed between Python releases (CGNAT was not private in 3.11); anything the tables miss
that ``ipaddress`` still calls non-global is refused as ``reserved``.
"""

from __future__ import annotations

import ipaddress
from typing import Literal

__all__ = ["AddressClass", "IPAddress", "classify", "parse_ip", "permitted"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

AddressClass = Literal[
    "public",
    "loopback",
    "private",
    "shared",
    "link-local",
    "multicast",
    "unspecified",
    "reserved",
]
"""``public`` is the only class a retrieval reaches without ``allow_private``."""

# Classes an origin's ``allow_private`` may waive (the tests' loopback servers, an intranet
# wiki); the others are never a place evidence comes from.
_WAIVABLE: frozenset[AddressClass] = frozenset({"loopback", "private", "shared", "link-local"})

_V4_TABLE: tuple[tuple[str, AddressClass], ...] = (
    ("0.0.0.0/8", "unspecified"),  # "this network"; 0.0.0.0 reaches the local host
    ("127.0.0.0/8", "loopback"),
    ("10.0.0.0/8", "private"),
    ("172.16.0.0/12", "private"),
    ("192.168.0.0/16", "private"),
    ("100.64.0.0/10", "shared"),  # CGNAT, RFC 6598
    ("169.254.0.0/16", "link-local"),  # cloud metadata lives at 169.254.169.254
    ("224.0.0.0/4", "multicast"),
    ("255.255.255.255/32", "reserved"),
    ("240.0.0.0/4", "reserved"),
    ("192.0.0.0/24", "reserved"),  # IETF protocol assignments
    ("192.0.2.0/24", "reserved"),  # documentation ranges
    ("198.51.100.0/24", "reserved"),
    ("203.0.113.0/24", "reserved"),
    ("198.18.0.0/15", "reserved"),  # benchmarking
)

_V6_TABLE: tuple[tuple[str, AddressClass], ...] = (
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("fc00::/7", "private"),  # unique local addresses
    ("fe80::/10", "link-local"),
    ("fec0::/10", "private"),  # deprecated site-local
    ("ff00::/8", "multicast"),
    ("64:ff9b:1::/48", "private"),  # local-use NAT64 (RFC 8215)
    ("100::/64", "reserved"),  # discard-only
    ("2001:db8::/32", "reserved"),  # documentation
    ("::/96", "reserved"),  # deprecated IPv4-compatible addresses
)
_V4 = tuple((ipaddress.IPv4Network(net), cls) for net, cls in _V4_TABLE)
_V6 = tuple((ipaddress.IPv6Network(net), cls) for net, cls in _V6_TABLE)

_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def parse_ip(text: str) -> IPAddress | None:
    """``text`` as an IP address (brackets and an IPv6 zone refused), else None."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def classify(address: IPAddress) -> AddressClass:
    """The class of ``address``; IPv4 embedded in IPv6 (mapped, NAT64) is classified as IPv4."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id is not None:
            return "link-local"  # a zone index only makes sense on a local link
        if address in _MAPPED or address in _NAT64:
            return classify(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        for net6, cls in _V6:
            if address in net6:
                return cls
    else:
        for net4, cls in _V4:
            if address in net4:
                return cls
    return "public" if address.is_global else "reserved"


def permitted(address: IPAddress, *, allow_private: bool) -> AddressClass | None:
    """None when a retrieval may connect to ``address``, else the class that forbids it."""
    cls = classify(address)
    if cls == "public" or (allow_private and cls in _WAIVABLE):
        return None
    return cls
