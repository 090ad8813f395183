"""The address rule: which IPs a retrieval may connect to (docs/grounding.md, "Addresses")."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurat.grounding import Origin, classify, parse_ip, permitted


@pytest.mark.parametrize(
    ("text", "cls"),
    [
        ("93.184.215.14", "public"),
        ("2606:4700::6810:85e5", "public"),
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.0.1", "private"),
        ("100.64.0.1", "shared"),
        ("100.127.255.254", "shared"),
        ("169.254.169.254", "link-local"),
        ("169.254.0.1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("255.255.255.255", "reserved"),
        ("240.0.0.1", "reserved"),
        ("192.0.2.1", "reserved"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:8.8.8.8", "public"),
        ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 of 169.254.169.254
        ("64:ff9b::7f00:1", "loopback"),
        ("64:ff9b::808:808", "public"),  # NAT64 of 8.8.8.8: a public host
        ("64:ff9b:1:5::a00:1", "private"),
        ("2001:db8::1", "reserved"),
        ("::127.0.0.1", "reserved"),  # deprecated IPv4-compatible spelling
        ("::224.0.0.1", "multicast"),
        # SIIT (IPv4-translated, ::ffff:0:0:0/96): 127.0.0.1, 10.0.0.1, 8.8.8.8.
        ("::ffff:0:7f00:1", "loopback"),
        ("::ffff:0:a00:1", "private"),
        ("::ffff:0:808:808", "public"),
        # 6to4 (2002::/16): the IPv4 address is bits 16-47, whatever the subnet and host.
        ("2002:7f00:1::1", "loopback"),
        ("2002:a9fe:a9fe:5::1", "link-local"),
        ("2002:a00:1::", "private"),
        ("2002:808:808::1", "public"),
        # Teredo (2001::/32): the client is the last 32 bits XOR 0xffffffff; never public.
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "reserved"),  # client 127.0.0.1
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "reserved"),  # client 10.0.0.1
        ("2001:0:4136:e378:8000:63bf:1fff:fffe", "multicast"),  # client 224.0.0.1
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"),  # client 192.0.2.45
        # Local-use NAT64 (64:ff9b:1::/48) is a local translator: private at best.
        ("64:ff9b:1::7f00:1", "loopback"),
        ("64:ff9b:1::808:808", "private"),
        ("64:ff9b:1::e000:1", "multicast"),
        ("64:ff9b:1::1", "unspecified"),  # 0.0.0.1: no translator sends there
    ],
)
def test_classes(text: str, cls: str) -> None:
    address = parse_ip(text)
    assert address is not None
    assert classify(address) == cls


def test_allow_private_waives_only_private_like_classes() -> None:
    def check(text: str, allow: bool) -> str | None:
        address = parse_ip(text)
        assert address is not None
        return permitted(address, allow_private=allow)

    assert check("8.8.8.8", False) is None
    for text in ("127.0.0.1", "10.0.0.1", "100.64.0.1", "169.254.169.254", "::1", "fd00::1"):
        assert check(text, False) is not None
        assert check(text, True) is None
    for text in ("0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "ff02::1"):
        assert check(text, True) is not None


def test_parse_ip_refuses_names_and_brackets() -> None:
    assert parse_ip("example.com") is None
    assert parse_ip("[::1]") is None
    assert parse_ip("127.1") is None  # inet_aton shorthand is not an address spelling here


def _v6(prefix: str, bits: int) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address(int(ipaddress.IPv6Address(prefix)) | bits)


@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=0,
                                                                  max_value=2**80 - 1))
def test_ipv4_embedded_in_ipv6_is_classified_as_itself(value: int, rest: int) -> None:
    v4 = ipaddress.IPv4Address(value)
    mapped = ipaddress.IPv6Address(f"::ffff:{v4}")
    siit = _v6("::ffff:0:0:0", value)
    nat64 = _v6("64:ff9b::", value)
    sixtofour = _v6("2002::", value << 80 | rest)  # any subnet and interface id
    assert classify(mapped) == classify(v4) == classify(nat64)
    assert classify(siit) == classify(sixtofour) == classify(v4)


def _spellings(value: int, rest: int) -> list[ipaddress.IPv6Address]:
    """Every IPv6 spelling that carries the IPv4 address ``value`` (``rest``: the bits
    around it that do not matter)."""
    return [
        ipaddress.IPv6Address(f"::ffff:{ipaddress.IPv4Address(value)}"),
        _v6("::ffff:0:0:0", value),
        _v6("64:ff9b::", value),
        _v6("64:ff9b:1::", (rest & (2**48 - 1)) << 32 | value),
        _v6("2002::", value << 80 | (rest & (2**80 - 1))),
        _v6("2001::", (rest & (2**64 - 1)) << 32 | (value ^ 0xFFFFFFFF)),  # Teredo client
        _v6("::", value) if value > 1 else ipaddress.IPv6Address("::2"),  # :: and ::1 are
    ]                                                                    # their own


@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=0,
                                                                  max_value=2**96 - 1))
def test_an_embedded_ipv4_address_is_never_more_reachable_than_itself(value: int,
                                                                      rest: int) -> None:
    v4 = ipaddress.IPv4Address(value)
    for v6 in _spellings(value, rest):
        for allow in (False, True):
            if permitted(v4, allow_private=allow) is not None:
                assert permitted(v6, allow_private=allow) is not None, (str(v6), str(v4))


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_public_means_globally_routable(value: int) -> None:
    v4 = ipaddress.IPv4Address(value)
    if classify(v4) == "public":
        assert v4.is_global and not v4.is_multicast


@pytest.mark.parametrize(
    ("spelling", "normalised"),
    [
        ("HTTPS://Example.COM:443", "https://example.com"),
        ("http://example.com:80/", "http://example.com"),
        ("http://example.com:8080", "http://example.com:8080"),
        ("http://[::1]:8080", "http://[::1]:8080"),
    ],
)
def test_origin_normalisation(spelling: str, normalised: str) -> None:
    assert Origin(url=spelling).url == normalised


@pytest.mark.parametrize(
    "bad", ["http://example.com/path", "ftp://example.com", "http://u@example.com", "file:///x"]
)
def test_origin_refuses_paths_other_schemes_and_credentials(bad: str) -> None:
    with pytest.raises(ValueError):
        Origin(url=bad)
