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
        ("64:ff9b:1::1", "private"),
        ("2001:db8::1", "reserved"),
        ("::127.0.0.1", "reserved"),  # deprecated IPv4-compatible spelling
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


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_ipv4_embedded_in_ipv6_is_classified_as_itself(value: int) -> None:
    v4 = ipaddress.IPv4Address(value)
    mapped = ipaddress.IPv6Address(f"::ffff:{v4}")
    nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | value)
    assert classify(mapped) == classify(v4) == classify(nat64)


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
