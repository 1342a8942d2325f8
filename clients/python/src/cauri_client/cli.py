"""`cauri-client`: the developer's commands.

    cauri-client listen --key sk_test_… --forward-to http://localhost:3000/webhooks
    cauri-client trigger payment.succeeded --key sk_test_…

The key may also come from CAURI_API_KEY, the service's address from CAURI_BASE_URL
(default http://127.0.0.1:8000, `cauri serve`'s).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import TextIO

from cauri_client.client import Cauri
from cauri_client.errors import CauriError, ConnectionFailed
from cauri_client.listen import Listener
from cauri_client.trigger import RECIPES, trigger

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
RETRY_AFTER = 2.0  # seconds before asking again a Cauri that did not answer


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cauri-client", description=__doc__.split("\n")[0])
    # Taken after the command's name, as `cauri-client listen --key … --forward-to …`.
    account = argparse.ArgumentParser(add_help=False)
    account.add_argument(
        "--key", default=os.environ.get("CAURI_API_KEY"), help="a test key (or CAURI_API_KEY)"
    )
    account.add_argument(
        "--base-url",
        default=os.environ.get("CAURI_BASE_URL", DEFAULT_BASE_URL),
        help=f"the service (default {DEFAULT_BASE_URL}, or CAURI_BASE_URL)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    listen = commands.add_parser(
        "listen", parents=[account], help="forward the account's test events here"
    )
    listen.add_argument("--forward-to", required=True, help="the local receiver's URL")
    listen.add_argument(
        "--secret", help="sign with this secret (default: the test endpoint's, from Cauri)"
    )
    listen.add_argument(
        "--cursor-file",
        type=Path,
        help="where the position is kept, to resume after a break "
        "(default: .cauri-listen-<account> in the current directory)",
    )
    made = commands.add_parser(
        "trigger", parents=[account], help="make test resources that emit an event"
    )
    made.add_argument("event", choices=sorted(RECIPES))
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    arguments = _parser().parse_args(argv)
    if not arguments.key or not arguments.key.startswith("sk_test_"):
        print("cauri-client: a test key is needed (--key sk_test_… or CAURI_API_KEY)", file=out)
        return 2
    with Cauri(arguments.key, base_url=arguments.base_url) as cauri:
        try:
            if arguments.command == "trigger":
                print(f"{arguments.event}: {trigger(cauri, arguments.event)}", file=out)
                return 0
            return _listen(cauri, arguments, out)
        except CauriError as error:
            print(f"cauri-client: {error.code}: {error.message}", file=out)
            return 1


def _listen(cauri: Cauri, arguments: argparse.Namespace, out: TextIO) -> int:
    stopping = _Stopping()
    try:
        secret = arguments.secret or cauri.webhooks.get_endpoint().secret
        # Named after the key without showing any of it: a rotated key starts afresh.
        account = hashlib.sha256(arguments.key.encode()).hexdigest()[:12]
        cursor_file = arguments.cursor_file or Path(f".cauri-listen-{account}")
        listener = Listener(cauri, arguments.forward_to, secret, cursor_file=cursor_file)
    except KeyboardInterrupt:
        return 0
    print(f"Ready: test events → {arguments.forward_to}, signed with {secret}", file=out)
    print(f"(position kept in {cursor_file}; Ctrl-C to stop)", file=out, flush=True)
    try:
        while not stopping.asked:
            try:
                page = listener.fetch()
            except ConnectionFailed as away:  # Cauri restarting, say: wait for it
                print(f"cauri-client: {away}; trying again", file=out, flush=True)
                time.sleep(RETRY_AFTER)
                continue
            with stopping.deferred():
                for forwarded in listener.forward(page):
                    print(forwarded.line(), file=out, flush=True)
    except KeyboardInterrupt:
        pass  # while waiting for events, or asked twice: the cursor kept says what was done
    finally:
        listener.close()
    return 0


class _Stopping:
    """Ctrl-C stops at once while the listener waits for events, and after the page while
    it forwards one (so that the cursor kept says exactly what was forwarded)."""

    def __init__(self) -> None:
        self.asked = False
        self._forwarding = False
        signal.signal(signal.SIGINT, self._on_interrupt)

    def _on_interrupt(self, signum: int, frame: FrameType | None) -> None:
        if not self._forwarding or self.asked:  # asked twice: now
            self.asked = True
            raise KeyboardInterrupt
        self.asked = True

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        self._forwarding = True
        try:
            yield
        finally:
            self._forwarding = False


if __name__ == "__main__":
    sys.exit(main())
