"""Each contract fake runs on its own (`python -m tests.fakes.<module>`): it prints its base URL
and the account's secrets, answers a request authenticated with what it printed, and stops
cleanly on SIGINT. The five start at once, each in its own process."""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.fakes.runner import READY

ROOT = Path(__file__).resolve().parents[2]
# Seconds for each wait (a start with its imports, a request, a stop): generous, for a loaded
# two-core machine; the five run side by side, so the whole test takes about one start.
TIMEOUT = 15.0
LAST_LINE = "Ctrl-C stops the fake."
_SECRET = re.compile(r"^  secret (\w+)=(\S+)  \(file (.+)\)$")


@dataclass
class Started:
    process: subprocess.Popen[str]
    lines: queue.Queue[str | None]

    def printed(self) -> list[str]:
        """Every line of the description, from the ready line to the last one."""
        lines: list[str] = []
        while not lines or lines[-1] != LAST_LINE:
            line = self.lines.get(timeout=TIMEOUT)
            assert line is not None, f"ended before printing it all: {lines}"
            if lines or READY in line:
                lines.append(line)
        return lines


def _start(module: str) -> Started:
    process = subprocess.Popen(
        [sys.executable, "-m", f"tests.fakes.{module}", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return Started(process, lines)


def _mtn(base: str, secrets: dict[str, str]) -> None:
    answer = httpx.post(
        f"{base}/collection/token/",
        auth=(secrets["api_user"], secrets["api_key"]),
        headers={"Ocp-Apim-Subscription-Key": secrets["collection_subscription_key"]},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["access_token"]


def _pawapay(base: str, secrets: dict[str, str]) -> None:
    answer = httpx.get(
        f"{base}/v2/active-conf",
        headers={"Authorization": f"Bearer {secrets['api_token']}"},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["countries"]


def _wave(base: str, secrets: dict[str, str]) -> None:
    answer = httpx.get(
        f"{base}/v1/balance",
        headers={"Authorization": f"Bearer {secrets['api_key']}"},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["currency"] == "XOF"


def _orange(base: str, secrets: dict[str, str]) -> None:
    answer = httpx.post(
        f"{base}/oauth/v3/token",
        auth=(secrets["client_id"], secrets["client_secret"]),
        data={"grant_type": "client_credentials"},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["token_type"] == "Bearer"


def _cinetpay(base: str, secrets: dict[str, str]) -> None:
    answer = httpx.post(
        f"{base}/v1/auth/login",
        data={"apikey": secrets["apikey"], "password": secrets["transfer_password"]},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["token"]


# Module, the connector kind it prints, one request it answers with the printed secrets.
FAKES: dict[str, tuple[str, Callable[[str, dict[str, str]], None]]] = {
    "mtn_momo": ("mtn_momo", _mtn),
    "pawapay": ("pawapay", _pawapay),
    "wave": ("wave", _wave),
    "orange_money": ("orange_money", _orange),
    "cinetpay": ("cinetpay", _cinetpay),
}


@pytest.fixture
def started() -> Iterator[dict[str, Started]]:
    running = {module: _start(module) for module in FAKES}
    yield running
    for each in running.values():
        if each.process.poll() is None:
            each.process.kill()
            each.process.wait(TIMEOUT)


def test_each_fake_runs_on_its_own_and_stops_on_sigint(started: dict[str, Started]) -> None:
    for module, (kind, request) in FAKES.items():
        each = started[module]
        lines = each.printed()
        head = re.fullmatch(rf"{kind} contract fake {READY} (http://127\.0\.0\.1:\d+)", lines[0])
        assert head is not None, lines[0]
        base = head.group(1)
        assert f"  base_url: {base}" in lines
        secrets: dict[str, str] = {}
        for line in lines:
            found = _SECRET.match(line)
            if found is not None:
                name, value, path = found.groups()
                assert Path(path).read_text() == value  # what `--secret NAME=@FILE` reads
                secrets[name] = value
        command = next(line for line in lines if line.startswith("cauri connectors add "))
        assert f"--kind {kind} " in command and f"--base-url {base} " in command
        request(base, secrets)
        each.process.send_signal(signal.SIGINT)
    for module in FAKES:
        assert started[module].process.wait(TIMEOUT) == 0, module
