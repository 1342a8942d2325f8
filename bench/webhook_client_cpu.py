"""CPU per delivery attempt on kept connections, the sending process alone (no database).

Mode `send`: `cauri.webhooks.delivery.send`, whatever tree is on PYTHONPATH (compare trees
that way). Mode `httpx`: the same attempt (URL check, resolution, signed headers) with the
POST through one `httpx.AsyncClient` per destination whose httpcore pool connects to the
checked address (the alternative to h11 weighed in issue 13). 16 tasks post one after the
other to `bench_webhooks.receiver_main` in a process of its own; after a warm-up (the
connections made), three rounds of `-n` attempts each print `time.process_time()` per
attempt.

    PYTHONPATH=/tmp/tree/src uv run python bench/webhook_client_cpu.py send -n 4000
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time
from typing import Any

import httpcore
import httpx
from bench_webhooks import free_port, receiver_main, wait_until_listening

from cauri.webhooks import delivery, url_safety

TASKS = 16
BODY = b'{"id":"evt_x","type":"payment.succeeded","data":{"reference":"' + b"x" * 400 + b'"}}'


class Pinned(httpcore.AsyncNetworkBackend):
    """Connects to the checked address whatever host the URL names (Host and SNI keep it)."""

    def __init__(self, address: str) -> None:
        self.address, self.backend = address, httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        return await self.backend.connect_tcp(self.address, port, *args, **kwargs)

    async def sleep(self, seconds: float) -> None:
        await self.backend.sleep(seconds)


_clients: dict[tuple[str, str, int, str], httpx.AsyncClient] = {}


async def send_httpx(notification: delivery.Notification) -> int:
    url = url_safety.check_url(notification.url, reach=url_safety.Reach.PRIVATE)
    [address, *_] = await url_safety.resolve(url, reach=url_safety.Reach.PRIVATE)
    key = (url.scheme, url.host, url.port or 0, address)
    if key not in _clients:
        transport = httpx.AsyncHTTPTransport()
        transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=delivery._tls(),
            network_backend=Pinned(address),
            max_keepalive_connections=32,
            keepalive_expiry=4.0,
        )
        _clients[key] = httpx.AsyncClient(transport=transport, timeout=5.0)
    sent = delivery.headers(notification, int(time.time()))
    response = await _clients[key].post(url, content=notification.body, headers=sent)
    return response.status_code


async def measure(mode: str, count: int, port: int) -> None:
    notification = delivery.Notification(
        f"http://127.0.0.1:{port}/hooks", "payment.succeeded", "d", BODY, "whsec_x"
    )

    async def attempts(times: int) -> None:
        for _ in range(times):
            if mode == "httpx":
                code: int | None = await send_httpx(notification)
            else:
                outcome = await delivery.send(
                    notification,
                    timestamp=int(time.time()),
                    time_limit=5,
                    connect_limit=3,
                    reach=url_safety.Reach.PRIVATE,
                )
                code = outcome.response_code
            if code != 200:
                raise SystemExit(f"HTTP {code}")

    await asyncio.gather(*(attempts(50) for _ in range(TASKS)))
    rounds = []
    for _ in range(3):
        started = time.process_time()
        await asyncio.gather(*(attempts(count // TASKS) for _ in range(TASKS)))
        rounds.append((time.process_time() - started) * 1000 / count)
    print(mode, " ".join(f"{spent:.3f}" for spent in rounds), "ms CPU per attempt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["send", "httpx"])
    parser.add_argument("-n", "--attempts", type=int, default=4000)
    args = parser.parse_args()
    port = free_port()
    receiver = multiprocessing.Process(target=receiver_main, args=(port,), daemon=True)
    receiver.start()
    wait_until_listening(port)
    try:
        asyncio.run(measure(args.mode, args.attempts, port))
    finally:
        receiver.terminate()


if __name__ == "__main__":
    main()
