"""ISATAP addresses are judged by the IPv4 address they carry (issue 36, item 6).

ISATAP (RFC 5214 §6.1) puts an IPv4 address in the interface identifier, under any /64
prefix: ``<prefix>:0:5efe:a.b.c.d`` or, universal, ``<prefix>:200:5efe:a.b.c.d``. An
ISATAP router delivers such an address to the IPv4 host, so ``::5efe:7f00:1`` is
127.0.0.1, not the public address ``ipaddress`` takes it for.
"""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurat.grounding import classify, parse_ip, permitted

#: The interface identifier's upper half: local, group, universal, universal and group.
_IDS = (0x00005EFE, 0x01005EFE, 0x02005EFE, 0x03005EFE)


def isatap(prefix: int, ident: int, v4: int) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address(prefix << 64 | ident << 32 | v4)


@pytest.mark.parametrize(
    ("text", "cls"),
    [
        ("::5efe:7f00:1", "loopback"),  # the reported one: 127.0.0.1
        ("::200:5efe:7f00:1", "loopback"),
        ("::5efe:a9fe:a9fe", "link-local"),  # cloud metadata
        ("2001:4860:1:2:200:5efe:a00:1", "private"),  # 10.0.0.1 under a public /64
        ("2606:4700:0:1:0:5efe:6440:1", "shared"),  # 100.64.0.1
        ("2606:4700:0:1:0:5efe:e000:1", "multicast"),
        ("2606:4700:0:1:0:5efe:0:0", "unspecified"),
        ("fe80::5efe:c0a8:101", "private"),  # link-local ISATAP of 192.168.1.1
        ("ff02::5efe:7f00:1", "multicast"),  # a multicast /64 stays multicast
        ("2606:4700:0:1:0:5efe:808:808", "public"),  # 8.8.8.8 under a public /64
        ("2606:4700:0:1:0:5eff:7f00:1", "public"),  # not ISATAP: 5eff
        ("2606:4700:0:1:400:5efe:7f00:1", "public"),  # not ISATAP: 0400
    ],
)
def test_isatap_classes(text: str, cls: str) -> None:
    address = parse_ip(text)
    assert address is not None
    assert classify(address) == cls


def test_the_reported_address_is_refused() -> None:
    address = parse_ip("::5efe:7f00:1")
    assert address is not None
    assert permitted(address, allow_private=False) == "loopback"


@given(st.integers(min_value=0, max_value=2**64 - 1), st.sampled_from(_IDS),
       st.integers(min_value=0, max_value=2**32 - 1))
def test_an_isatap_address_is_never_more_reachable_than_its_ipv4(prefix: int, ident: int,
                                                                 value: int) -> None:
    v4 = ipaddress.IPv4Address(value)
    v6 = isatap(prefix, ident, value)
    for allow in (False, True):
        if permitted(v4, allow_private=allow) is not None:
            assert permitted(v6, allow_private=allow) is not None, (str(v6), str(v4))
    if classify(v4) != "public":
        assert classify(v6) != "public", (str(v6), str(v4))


#: A global unicast /64 (Cloudflare's 2606:4700::/32): public with any other identifier.
_PUBLIC_64 = int(ipaddress.IPv6Address("2606:4700:0:1::")) >> 64


@given(st.sampled_from(_IDS), st.integers(min_value=0, max_value=2**32 - 1))
def test_under_a_public_prefix_it_is_public_exactly_when_its_ipv4_is(ident: int,
                                                                       value: int) -> None:
    assert classify(ipaddress.IPv6Address(_PUBLIC_64 << 64 | 1)) == "public"
    v6 = isatap(_PUBLIC_64, ident, value)
    assert (classify(v6) == "public") == (classify(ipaddress.IPv4Address(value)) == "public")
