"""HTTPS delivery pinned to the checked address: the socket goes to the resolved IP while
the TLS handshake (SNI, certificate check) and the Host header use the URL's name."""

from __future__ import annotations

import json
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cauri.runtime import Runtime
from cauri.webhooks import connections, delivery
from cauri.worker.runner import Worker
from tests.support import make_merchant
from tests.webhooks.builders import attempts, deliveries, pay, set_endpoint
from tests.webhooks.receiver import Receiver


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for the name `localhost`."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def tls_receiver(certificate: tuple[Path, Path]) -> Iterator[Receiver]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    with Receiver(tls=context) as running:
        yield running


@pytest.fixture
def trusted(certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The service trusts the test certificate, as an operator with a private CA would
    (SSL_CERT_FILE, read when the TLS context is first built)."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    delivery._tls.cache_clear()
    yield
    delivery._tls.cache_clear()


async def test_https_delivery_to_the_resolved_address_keeps_the_name(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    tls_receiver: Receiver,
    trusted: None,
) -> None:
    merchant = await make_merchant(runtime)
    url = f"https://localhost:{tls_receiver.port}/hooks"
    await set_endpoint(client, merchant, url)
    payment = await pay(client, merchant)
    await worker.drain()

    [request] = await tls_receiver.wait_for(1)
    assert tls_receiver.server_names == ["localhost"]
    assert request.headers["host"] == f"localhost:{tls_receiver.port}"
    assert json.loads(request.body)["data"]["reference"] == payment["reference"]
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["url"]) == ("success", url)


async def test_an_untrusted_certificate_is_a_failed_attempt(
    client: httpx.AsyncClient, runtime: Runtime, worker: Worker, tls_receiver: Receiver
) -> None:
    merchant = await make_merchant(runtime)
    await set_endpoint(client, merchant, f"https://localhost:{tls_receiver.port}/hooks")
    await pay(client, merchant)
    await worker.drain()

    assert tls_receiver.requests == []
    assert tls_receiver.server_names == ["localhost"]
    [entry] = await deliveries(client, merchant)
    assert (entry["status"], entry["attempts"], entry["response_code"]) == ("pending", 1, None)
    [attempt] = await attempts(runtime, entry["id"])
    assert "CERTIFICATE_VERIFY_FAILED" in attempt["error"]


async def test_the_next_checked_address_is_tried_when_one_refuses(receiver: Receiver) -> None:
    """A name with several addresses (A and AAAA records) where the first refuses: the
    request goes to the next one, once. Nothing listens on 127.0.0.2 at the receiver's port."""
    url = httpx.URL(receiver.url)
    request = delivery._request(url, {"Content-Type": "application/json"}, 2)
    answer = await delivery._post_to_first_reachable(
        url, ["127.0.0.2", "127.0.0.1"], request, b"{}", 5.0
    )
    await connections.pool().release(answer)
    assert answer.status == 200
    assert len(receiver.requests) == 1
    with pytest.raises(connections.ConnectFailed):
        await delivery._post_to_first_reachable(url, ["127.0.0.2"], request, b"{}", 5.0)
