"""Which IP addresses a retrieval may connect to: the address rule of docs/grounding.md.

Threat model. A URL embedded in a candidate, or a redirect from an allowlisted page, tries
to make jurat read cloud metadata (169.254.169.254), a service on the evaluation host
(loopback) or private infrastructure (RFC 1918, CGNAT, IPv6 ULA and link-local), or
smuggles one of those inside an IPv6 spelling that carries an IPv4 address (IPv4-mapped
``::ffff:a.b.c.d``, SIIT ``::ffff:0:a.b.c.d``, NAT64 ``64:ff9b::a.b.c.d``, 6to4
``2002:aabb:ccdd::``, Teredo, IPv4-compatible ``::a.b.c.d``, ISATAP ``<prefix>:0:5efe:a.b.c.d``
under any /64): a translator or tunnel on the way may deliver those to the IPv4 host, so
they are judged by the IPv4 they carry.
Every address a name resolves to is classified here before any connection is made;
anything that is not a public unicast address is refused unless the origin opts in with
``allow_private``. Unspecified, multicast, broadcast and reserved addresses are refused
even then: no legitimate evidence source lives there.

The tables are explicit rather than ``ipaddress``'s ``is_private``, whose membership has
changed between Python releases (CGNAT was not private in 3.11); anything the tables miss
that ``ipaddress`` still calls non-global is refused as ``reserved``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
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
    ("100::/64", "reserved"),  # discard-only
    ("2001:db8::/32", "reserved"),  # documentation
)
_V4 = tuple((ipaddress.IPv4Network(net), cls) for net, cls in _V4_TABLE)
_V6 = tuple((ipaddress.IPv6Network(net), cls) for net, cls in _V6_TABLE)


def _low32(value: int) -> int:
    return value & 0xFFFFFFFF


def _sixtofour(value: int) -> int:
    return (value >> 80) & 0xFFFFFFFF  # 2002:AABB:CCDD::/48 carries AA.BB.CC.DD


def _teredo_client(value: int) -> int:
    return (value & 0xFFFFFFFF) ^ 0xFFFFFFFF  # the client's address, obfuscated


# IPv6 prefixes that carry an IPv4 address: (prefix, the class of the prefix itself, where
# the IPv4 address is). Checked after ``_V6_TABLE`` (whose ``::`` and ``::1`` are inside
# ``::/96``). The prefix's own class stands when the IPv4 address it carries is public.
_EMBEDDING_TABLE: tuple[tuple[str, AddressClass, Callable[[int], int]], ...] = (
    ("::ffff:0:0/96", "public", _low32),  # IPv4-mapped (RFC 4291)
    ("::ffff:0:0:0/96", "public", _low32),  # SIIT IPv4-translated (RFC 2765)
    ("64:ff9b::/96", "public", _low32),  # NAT64 well-known prefix (RFC 6052)
    # Local-use NAT64 (RFC 8215): a local translator, so never public. The IPv4 address
    # sits where the operator's prefix length puts it (RFC 6052 §2.2); the low 32 bits
    # are where a /96 prefix, the well-known prefix's length, puts it.
    ("64:ff9b:1::/48", "private", _low32),
    ("2002::/16", "public", _sixtofour),  # 6to4 (RFC 3056)
    ("2001::/32", "reserved", _teredo_client),  # Teredo (RFC 4380)
    ("::/96", "reserved", _low32),  # deprecated IPv4-compatible addresses (RFC 4291)
)
_EMBEDDING = tuple((ipaddress.IPv6Network(net), cls, where)
                   for net, cls, where in _EMBEDDING_TABLE)

#: ISATAP (RFC 5214 §6.1) is not a prefix but an interface identifier, under any /64: the
#: IANA OUI 00-00-5E, then 0xFE, then the IPv4 address, as ``0000:5efe:a.b.c.d`` or, with
#: the universal/local bit set, ``0200:5efe:a.b.c.d``. The group bit is masked too, as
#: hosts that decode ISATAP do, so ``0100:`` and ``0300:`` count as well.
_ISATAP_MASK = 0xFCFFFFFF
_ISATAP_ID = 0x00005EFE


def _isatap(value: int) -> bool:
    return ((value >> 32) & _ISATAP_MASK) == _ISATAP_ID


def parse_ip(text: str) -> IPAddress | None:
    """``text`` as an IP address (brackets and an IPv6 zone refused), else None."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def classify(address: IPAddress) -> AddressClass:
    """The class of ``address``; an IPv6 address that carries an IPv4 address (mapped, SIIT,
    NAT64, 6to4, Teredo, IPv4-compatible, ISATAP) is refused whenever that IPv4 address
    would be."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id is not None:
            return "link-local"  # a zone index only makes sense on a local link
        own = _classify_v6(address)
        value = int(address)
        if _isatap(value):
            # Whatever the /64 says of itself, an ISATAP router may deliver to the IPv4.
            return _stricter(classify(ipaddress.IPv4Address(_low32(value))), own)
        return own
    for net4, cls in _V4:
        if address in net4:
            return cls
    return "public" if address.is_global else "reserved"


def _classify_v6(address: ipaddress.IPv6Address) -> AddressClass:
    """An IPv6 address's class by its prefix: the table, then the prefixes that carry an
    IPv4 address, then ``ipaddress``'s view."""
    for net6, cls in _V6:
        if address in net6:
            return cls
    for net6, own, where in _EMBEDDING:
        if address in net6:
            carried = classify(ipaddress.IPv4Address(where(int(address))))
            return _stricter(carried, own)
    return "public" if address.is_global else "reserved"


def _stricter(carried: AddressClass, own: AddressClass) -> AddressClass:
    """The class of an embedding address: the carried IPv4 address's class unless that is
    public, but never one ``allow_private`` waives where the prefix itself is not
    waivable (a Teredo address carrying 10.0.0.1 stays reserved, not private)."""
    if carried == "public":
        return own
    if own != "public" and own not in _WAIVABLE and carried in _WAIVABLE:
        return own
    return carried


def permitted(address: IPAddress, *, allow_private: bool) -> AddressClass | None:
    """None when a retrieval may connect to ``address``, else the class that forbids it."""
    cls = classify(address)
    if cls == "public" or (allow_private and cls in _WAIVABLE):
        return None
    return cls
