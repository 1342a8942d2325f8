"""One contract fake run on its own, to rehearse a connector's set-up against it before going
live: `python -m tests.fakes.<module> [--host H] [--port N] [--name NAME] [--cauri URL]`
(docs/OPERATORS.md, "Rehearsing a connector with its contract fake").

Each fake module contributes only what differs (its fake, built from the options, and the
connector account that points at it); this runner parses the options, writes the fake's
secrets to files (`cauri connectors add` reads secrets from files only), prints on stdout the
fake's base URL and the account's kind, settings and secrets, then the `cauri connectors add`
and `cauri routes set` commands and a live payment, and serves until SIGINT or SIGTERM (exit 0).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

# The first line printed, once the fake answers: what a script waits for (then the base URL).
READY = "listening on"
CALLBACK_PATH = "/api/v1/operator-callbacks/"  # cauri.connectors.service.CALLBACK_PATH
DEFAULT_CAURI = "http://127.0.0.1:8000"  # `cauri serve`'s default address
CUSTOMER_POLL = 0.5  # seconds between two looks of the scripted customer at open payments


class Served(Protocol):
    base_url: str

    def __enter__(self) -> Any: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None: ...


@dataclass(frozen=True)
class Options:
    host: str
    port: int
    name: str  # the connector account's name in Cauri
    cauri: str  # Cauri's public URL (CAURI_PUBLIC_URL, or `serve`'s own loopback address)
    callback_url: str  # where this account's notifications go in Cauri
    pays: bool  # what the scripted customer does on a hosted page (fakes with one)


@dataclass(frozen=True)
class Customer:
    """The customer's side of a hosted payment page, scripted: `waiting` lists the payments
    open on the page, `act(key, pays)` pays or declines one (each once)."""

    waiting: Callable[[], list[str]]
    act: Callable[[str, bool], object]


@dataclass(frozen=True)
class Rehearsal:
    """A fake, bound, and the connector account that points Cauri at it."""

    fake: Served
    kind: str  # cauri.connectors.kinds.KINDS
    environment: str  # sandbox | production
    base_url: str
    settings: dict[str, str]
    secrets: dict[str, str]
    routes: dict[str, tuple[str, ...]]  # operator -> actions (collect, disburse, refund)
    payment: dict[str, Any]  # a live payment's body through this account
    callbacks: str  # where the fake sends its notifications, in a sentence
    customer: Customer | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def main(
    build: Callable[[Options], Rehearsal],
    *,
    description: str,
    name: str,
    customer: bool = False,
    argv: Sequence[str] | None = None,
) -> int:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (0: a free one)")
    parser.add_argument("--name", default=name, help=f"the connector account's name ({name})")
    parser.add_argument(
        "--cauri",
        default=DEFAULT_CAURI,
        help=f"Cauri's public URL, where callbacks go ({DEFAULT_CAURI})",
    )
    parser.add_argument(
        "--callback-url",
        help="the account's callback URL in Cauri (default: CAURI/api/v1/operator-callbacks/NAME)",
    )
    parser.add_argument(
        "--secrets-dir",
        type=Path,
        help="where to write the secrets' files (default: a temporary directory, removed at exit)",
    )
    if customer:
        parser.add_argument(
            "--customer",
            choices=("pays", "declines", "waits"),
            default="pays",
            help="what the customer does on the hosted page: pays (default), declines, or "
            "waits (for a person to act on the page)",
        )
    args = parser.parse_args(argv)
    cauri = args.cauri.rstrip("/")
    options = Options(
        host=args.host,
        port=args.port,
        name=args.name,
        cauri=cauri,
        callback_url=args.callback_url or f"{cauri}{CALLBACK_PATH}{args.name}",
        pays=getattr(args, "customer", "pays") == "pays",
    )
    scripted = customer and args.customer != "waits"
    # Blocked before any thread starts (threads inherit the mask): only sigwait receives them.
    stops = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    rehearsal = build(options)
    kept = args.secrets_dir is not None
    folder = args.secrets_dir or Path(tempfile.mkdtemp(prefix=f"cauri-fake-{rehearsal.kind}-"))
    stopping = threading.Event()
    try:
        with rehearsal.fake:
            files = _write_secrets(folder, rehearsal.secrets)
            if scripted and rehearsal.customer is not None:
                threading.Thread(
                    target=_customer, args=(rehearsal.customer, options.pays, stopping), daemon=True
                ).start()
            print(_describe(rehearsal, options, files), flush=True)
            received = signal.sigwait(stops)
            stopping.set()
            print(f"{signal.Signals(received).name}: stopping", flush=True)
    finally:
        stopping.set()
        if not kept:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


def _write_secrets(folder: Path, secrets: dict[str, str]) -> dict[str, Path]:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    files = {}
    for secret, value in secrets.items():
        path = folder / secret
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(value)
        files[secret] = path
    return files


def _describe(rehearsal: Rehearsal, options: Options, files: dict[str, Path]) -> str:
    name = options.name
    lines = [
        f"{rehearsal.kind} contract fake {READY} {rehearsal.fake.base_url}",
        f"  kind: {rehearsal.kind}",
        f"  environment: {rehearsal.environment}",
        f"  base_url: {rehearsal.base_url}",
        *(f"  setting {key}={value}" for key, value in rehearsal.settings.items()),
        *(
            f"  secret {key}={value}  (file {files[key]})"
            for key, value in rehearsal.secrets.items()
        ),
        f"  callbacks: {rehearsal.callbacks}",
        *(f"  {note}" for note in rehearsal.notes),
        "Point a live connector account at it (CAURI_DATABASE_URL and CAURI_SECRET_KEY as for",
        "`cauri serve`):",
        _command(
            [
                "cauri",
                "connectors",
                "add",
                name,
                "--kind",
                rehearsal.kind,
                "--environment",
                rehearsal.environment,
                "--base-url",
                rehearsal.base_url,
                *(
                    part
                    for key, value in rehearsal.settings.items()
                    for part in ("--setting", f"{key}={value}")
                ),
                *(part for key, path in files.items() for part in ("--secret", f"{key}=@{path}")),
            ]
        ),
        _command(["cauri", "connectors", "check", name]),
        *(
            _command(
                ["cauri", "routes", "set", operator]
                + [part for action in actions for part in (f"--{action}", name)]
            )
            for operator, actions in rehearsal.routes.items()
        ),
        "A live payment through it (KEY: a live key, sk_live_…):",
        _command(
            [
                "curl",
                "-s",
                "-X",
                "POST",
                f"{options.cauri}/api/v1/payments",
                "-H",
                "Authorization: Bearer $KEY",
                "-H",
                "Content-Type: application/json",
                "-d",
                json.dumps(rehearsal.payment),
            ]
        ).replace("'Authorization: Bearer $KEY'", '"Authorization: Bearer $KEY"'),
        "Ctrl-C stops the fake.",
    ]
    return "\n".join(lines)


def _command(parts: list[str]) -> str:
    return " ".join(shlex.quote(part) for part in parts)


def _customer(customer: Customer, pays: bool, stopping: threading.Event) -> None:
    """Acts once on each payment opened on the hosted page, within CUSTOMER_POLL seconds."""
    done: set[str] = set()
    while not stopping.wait(CUSTOMER_POLL):
        for key in customer.waiting():
            if key in done:
                continue
            done.add(key)
            # Already decided (an expiry, a person on the page): nothing to do.
            with contextlib.suppress(ValueError, KeyError):
                customer.act(key, pays)
