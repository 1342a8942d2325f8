"""How long a test event takes from its commit to a developer's receiver through
`cauri-client listen` (issue 27: within 1 s at p95).

Against a running Cauri (`cauri serve`): makes N test payments one after the other with the
key given, a `Listener` forwarding to a receiver in this process, and measures, for each,
the time from the API's answer (the payment and its event are committed before it) to the
receiver's arrival. Prints the median, the 95th percentile and the maximum.

    uv run python bench/listen_latency.py --base-url http://127.0.0.1:8000 --key sk_test_… -n 100
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cauri_client import Cauri, testing
from cauri_client.listen import Listener

arrivals: dict[str, float] = {}


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        arrivals[self.headers["X-Service-Delivery"]] = time.monotonic()
        del body
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--pause", type=float, default=0.2, help="seconds between payments")
    options = parser.parse_args()

    receiver = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hooks"
    stop = threading.Event()
    with Cauri(options.key, base_url=options.base_url) as cauri:
        listener = Listener(cauri, url, "bench-secret")

        def listen() -> None:
            while not stop.is_set():
                listener.forward(listener.fetch(wait=2))

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        answered: dict[str, float] = {}
        for _ in range(options.n):
            payment = cauri.payments.create(
                amount=1000, operator="mtn", phone_number=testing.number(testing.SUCCEEDS)
            )
            answered[payment.reference] = time.monotonic()
            time.sleep(options.pause)
        deadline = time.monotonic() + 30
        while len(arrivals) < options.n and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()
        thread.join()
        by_payment = {
            event.data["reference"]: event.id
            for event in cauri.events.list(type="payment.succeeded", per_page=100)
        }
    latencies = sorted(
        arrivals[by_payment[reference]] - at
        for reference, at in answered.items()
        if by_payment.get(reference) in arrivals
    )
    missing = options.n - len(latencies)
    p95 = latencies[max(0, int(len(latencies) * 0.95) - 1)]
    print(
        f"{len(latencies)} events, {missing} missing: median {statistics.median(latencies):.3f} s, "
        f"p95 {p95:.3f} s, max {latencies[-1]:.3f} s"
    )


if __name__ == "__main__":
    main()
