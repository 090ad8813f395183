"""TLS through a pinned connection: the socket goes to the pinned IP, the handshake uses the
name (SNI and certificate verification), so pinning never weakens TLS."""

from __future__ import annotations

import datetime as dt
import ssl
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from jurat.grounding import Fetcher, Origin, Resolver, RetrievalPolicy, RetrievalRefused

NOW = dt.datetime.now(dt.UTC)


def _cert(
    name: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    signer: ec.EllipticCurvePrivateKey,
    *,
    ca: bool,
) -> x509.Certificate:
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - dt.timedelta(hours=1))
        .not_valid_after(NOW + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False
        )
    else:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
    return builder.sign(signer, hashes.SHA256())


class TLSWeb:
    """An https server on 127.0.0.1 whose certificate names ``cert_name``; records SNI."""

    def __init__(self, tmp: Path, cert_name: str) -> None:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jurat test CA")])
        ca = _cert("jurat test CA", ca_key, ca_name, ca_key, ca=True)
        key = ec.generate_private_key(ec.SECP256R1())
        leaf = _cert(cert_name, key, ca_name, ca_key, ca=False)
        (tmp / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        (tmp / "leaf.pem").write_bytes(
            leaf.public_bytes(serialization.Encoding.PEM)
            + key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        self.client_context = ssl.create_default_context(cafile=str(tmp / "ca.pem"))
        self.sni: list[str | None] = []
        self.hits = 0
        web = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                web.hits += 1
                body = (self.headers.get("Host") or "").encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_context.load_cert_chain(str(tmp / "leaf.pem"))
        server_context.sni_callback = lambda sock, name, ctx: self.sni.append(name)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = server_context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def tls_web(tmp_path: Path) -> Iterator[TLSWeb]:
    web = TLSWeb(tmp_path, "evidence.test")
    yield web
    web.close()


def _dns(answers: dict[str, str]) -> Resolver:
    async def resolve(host: str, port: int) -> Sequence[str]:
        return [answers[host]]

    return resolve


def _fetcher(web: TLSWeb, host: str) -> Fetcher:
    origin = Origin(url=f"https://{host}:{web.port}", allow_private=True)
    return Fetcher(
        RetrievalPolicy(origins=(origin,)),
        resolver=_dns({host: "127.0.0.1"}),
        ssl_context=web.client_context,
    )


async def test_https_to_pinned_ip_uses_the_name_for_sni_and_verification(tls_web: TLSWeb) -> None:
    url = f"https://evidence.test:{tls_web.port}/page"
    got = await _fetcher(tls_web, "evidence.test").fetch(url)
    assert got.capture.address == "127.0.0.1"
    assert got.body == f"evidence.test:{tls_web.port}".encode()
    assert tls_web.sni == ["evidence.test"]


async def test_certificate_for_another_name_is_refused_as_tls(tls_web: TLSWeb) -> None:
    # Same pinned address, a name the certificate does not cover: verification fails.
    url = f"https://imposter.test:{tls_web.port}/page"
    with pytest.raises(RetrievalRefused) as info:
        await _fetcher(tls_web, "imposter.test").fetch(url)
    assert info.value.reason == "tls"
    assert "imposter.test" in str(info.value)  # the name, not the IP, was verified
    assert tls_web.hits == 0
