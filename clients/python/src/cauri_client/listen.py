"""`cauri-client listen`: an account's test events forwarded to a URL on this machine, signed
as Cauri's deliveries are, without a tunnel: the listener follows the account's event feed
(`GET /api/v1/events/feed`, long polling from here to Cauri) and posts each event to the
local URL itself.

The feed's cursor is kept in a file after each page: a listener restarted after a break
forwards what it missed, once. Stopped (Ctrl-C) while it forwards a page, it finishes that
page first. The local answer is printed, never retried: the receiver's errors are the
developer's to see.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from cauri_client.client import Cauri
from cauri_client.resources import Event, FeedPage
from cauri_client.webhooks import signature_header

# What Cauri's deliveries carry (the receiver may check it).
USER_AGENT = "Service-Webhooks/1.0"
WAIT = 25  # seconds the feed holds a request open when there is nothing new
LOCAL_TIMEOUT = 10.0  # seconds for the local receiver's answer, as a delivery's


def serialize(sent: Mapping[str, Any]) -> bytes:
    """The event's body as Cauri delivers it: compact JSON, in the order it was sent."""
    return json.dumps(sent, ensure_ascii=False, separators=(",", ":")).encode()


def delivery_headers(sent: Mapping[str, Any], body: bytes, secret: str, at: int) -> dict[str, str]:
    """The headers of a delivery of `sent` (its id is the delivery's)."""
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Service-Event": str(sent["event"]),
        "X-Service-Delivery": str(sent["id"]),
        "X-Service-Signature": signature_header(body, secret, at),
    }


@dataclass(frozen=True)
class Forwarded:
    event: Event
    answer: str  # the local status code, or why nothing answered

    def line(self) -> str:
        event = self.event
        return f"{event.created_at:%H:%M:%S} {event.event} {event.id} → {self.answer}"


class Listener:
    """Follows the feed of `cauri`'s key and forwards each event to `forward_to`."""

    def __init__(
        self,
        cauri: Cauri,
        forward_to: str,
        secret: str,
        *,
        cursor_file: Path | None = None,
        local: httpx.Client | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._cauri = cauri
        self._forward_to = forward_to
        self._secret = secret
        self._cursor_file = cursor_file
        self._local = local or httpx.Client(timeout=LOCAL_TIMEOUT)
        self._clock = clock
        kept = self._kept_cursor()
        if kept is None:
            # Kept at once: stopped before its first event, it resumes from here all the same.
            self._keep(cauri.events.follow().cursor)
        else:
            self.cursor = kept

    def _kept_cursor(self) -> str | None:
        if self._cursor_file is None or not self._cursor_file.exists():
            return None
        return self._cursor_file.read_text().strip() or None

    def _keep(self, cursor: str) -> None:
        self.cursor = cursor
        if self._cursor_file is None:
            return
        # Written aside then renamed: a listener killed while writing keeps the last cursor.
        aside = self._cursor_file.with_name(self._cursor_file.name + ".new")
        aside.write_text(cursor + "\n")
        os.replace(aside, self._cursor_file)

    def fetch(self, wait: int = WAIT) -> FeedPage:
        """The events after the cursor, waiting up to `wait` seconds for one."""
        return self._cauri.events.follow(cursor=self.cursor, wait=wait)

    def forward(self, page: FeedPage) -> list[Forwarded]:
        """Forwards the page's events, then keeps the cursor after them."""
        pairs = zip(page.events, page.sent, strict=True)
        forwarded = [self._forward(event, sent) for event, sent in pairs]
        self._keep(page.cursor)
        return forwarded

    def _forward(self, event: Event, sent: Mapping[str, Any]) -> Forwarded:
        body = serialize(sent)
        headers = delivery_headers(sent, body, self._secret, int(self._clock()))
        try:
            answer = self._local.post(self._forward_to, content=body, headers=headers)
        except (httpx.HTTPError, httpx.InvalidURL) as error:
            return Forwarded(event, f"no answer ({type(error).__name__})")
        return Forwarded(event, str(answer.status_code))

    def close(self) -> None:
        self._local.close()
