"""The dashboard's speed on a merchant with a year of traffic (bench/dashboard_seed.py): signs
in as its finance member (password, then a TOTP code), then times REQUESTS sequential GETs of
each page (the live home, a search by the number's last four digits, a search by external_id,
a payment's page, this month's statement) and prints p50, p95 and max in milliseconds; then
downloads a year's payments as CSV, and prints its size, the time to the first byte and in
all, and (with --server-pid) the server's peak memory before and after (VmHWM): a file
streamed as it is read leaves it where it was.

    uv run python bench/dashboard_bench.py --url http://127.0.0.1:8000 --seed seed.json \\
        [--server-pid PID] [-n 50]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from datetime import UTC, datetime, timedelta
from http.cookies import SimpleCookie
from pathlib import Path

import httpx
import pyotp

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def _csrf(page: httpx.Response) -> str:
    found = _CSRF.search(page.text)
    assert found is not None, page.text[:500]
    return found.group(1)


def _keep_cookies(response: httpx.Response) -> None:
    """The dashboard's cookies are `Secure`: kept here by hand for a server on plain HTTP
    over loopback (as a browser keeps them for localhost)."""
    for line in response.headers.get_list("set-cookie"):
        parsed = SimpleCookie()
        parsed.load(line)
        for name, morsel in parsed.items():
            if morsel.value:
                CLIENT_COOKIES[name] = morsel.value
            else:
                CLIENT_COOKIES.pop(name, None)


def _send_cookies(request: httpx.Request) -> None:
    if CLIENT_COOKIES:
        request.headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in CLIENT_COOKIES.items())


CLIENT_COOKIES: dict[str, str] = {}


def sign_in(client: httpx.Client, seed: dict[str, str]) -> None:
    form = client.get("/dashboard/sign-in")
    answer = client.post(
        "/dashboard/sign-in",
        data={"csrf": _csrf(form), "email": seed["email"], "password": seed["password"]},
    )
    assert answer.headers.get("location") == "/dashboard/sign-in/code", answer.text[:500]
    code_page = client.get("/dashboard/sign-in/code")
    code = pyotp.TOTP(seed["totp_secret"]).now()
    answer = client.post("/dashboard/sign-in/code", data={"csrf": _csrf(code_page), "code": code})
    assert answer.headers.get("location") == "/dashboard/", answer.text[:500]


def timed(client: httpx.Client, path: str, requests: int) -> dict[str, float]:
    client.get(path)  # warm: templates compiled, statements prepared
    spent = []
    for _ in range(requests):
        started = time.perf_counter()
        answer = client.get(path)
        spent.append((time.perf_counter() - started) * 1000)
        assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
    spent.sort()
    return {
        "p50": round(statistics.median(spent), 1),
        "p95": round(spent[int(len(spent) * 0.95) - 1], 1),
        "max": round(spent[-1], 1),
    }


def peak_memory_kib(pid: int | None) -> int | None:
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return None


def export(client: httpx.Client, pid: int | None) -> dict[str, object]:
    today = datetime.now(UTC).date()
    query = f"from={today - timedelta(days=366)}&to={today}"
    before = peak_memory_kib(pid)
    started = time.perf_counter()
    first = None
    size = lines = 0
    with client.stream("GET", f"/dashboard/payments/csv?{query}") as answer:
        assert answer.status_code == 200, answer.status_code
        for chunk in answer.iter_bytes():
            first = first or time.perf_counter()
            size += len(chunk)
            lines += chunk.count(b"\n")
    done = time.perf_counter()
    return {
        "lines": lines,
        "megabytes": round(size / 1e6, 1),
        "first_byte_ms": round(((first or done) - started) * 1000, 1),
        "seconds": round(done - started, 1),
        "server_peak_kib_before": before,
        "server_peak_kib_after": peak_memory_kib(pid),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--seed", type=Path, required=True, help="dashboard_seed.py's output")
    parser.add_argument("-n", "--requests", type=int, default=50)
    parser.add_argument("--server-pid", type=int)
    arguments = parser.parse_args()
    seed = json.loads(arguments.seed.read_text())
    pages = {
        "home": "/dashboard/",
        "search by last four digits": f"/dashboard/payments?phone_digits={seed['digits']}",
        "search by external_id": f"/dashboard/payments?external_id={seed['external_id']}",
        "payment page": f"/dashboard/payments/{seed['payment']}",
        "statement of the month": "/dashboard/statements",
    }
    hooks = {"request": [_send_cookies], "response": [_keep_cookies]}
    with httpx.Client(base_url=arguments.url, timeout=600, event_hooks=hooks) as client:
        sign_in(client, seed)
        for name, path in pages.items():
            print(
                json.dumps({"page": name, "path": path} | timed(client, path, arguments.requests))
            )
        print(
            json.dumps(
                {"export": "a year of payments (CSV)"} | export(client, arguments.server_pid)
            )
        )


if __name__ == "__main__":
    main()
