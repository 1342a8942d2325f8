"""An account's test events followed as they commit (`GET /api/v1/events/feed`, which
`cauri-client listen` reads to forward them to a developer's machine).

Events commit out of the order of their ids and times: a transaction that began first may
commit last. Each event carries the id of the transaction that wrote it (migration 0036), and
a read takes only the events of transactions older than every transaction still running
(the snapshot's xmin), in (transaction, id) order: no later commit can land behind what such
a read has passed, so a cursor (the last event's transaction and id) misses nothing and
repeats nothing.

Readers that wait share one poller per process: while anyone waits, it asks every TICK which
accounts have new test events and wakes their readers. A waiting reader holds no database
connection.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass

import structlog
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from cauri.kit.errors import InvalidRequest
from cauri.models import Event

log = structlog.get_logger("cauri.events.feed")

_NIL = uuid.UUID(int=0)  # before every event of a transaction

TICK = 0.2  # seconds between the poller's looks, while anyone waits
# A reader also looks again this often on its own: a wake-up lost to a race costs this much.
RECHECK = 2.0
LIMIT = 100  # events per answer

# Every transaction below it has ended: what it wrote is all visible, or was rolled back.
_HORIZON = "pg_snapshot_xmin(pg_current_snapshot())"
_NOW = text(f"SELECT CAST(CAST({_HORIZON} AS text) AS bigint)")
# The poller's look: the new horizon, and the accounts with test events below it since `since`.
_MOVED = text(
    "SELECT CAST(CAST(h AS text) AS bigint), ARRAY(SELECT DISTINCT merchant_id FROM events "  # noqa: S608
    "  WHERE NOT livemode AND txid IS NOT NULL "
    "  AND txid >= CAST(CAST(:since AS text) AS xid8) AND txid < h) "
    f"FROM (SELECT {_HORIZON} AS h) AS now"
)


@dataclass(frozen=True, order=True)
class Cursor:
    """Where a reader is: after the event `event_id` of transaction `txid` (a nil id: before
    every event of that transaction)."""

    txid: int
    event_id: uuid.UUID

    def token(self) -> str:
        raw = f"{self.txid}.{self.event_id.hex}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def parse(cls, token: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            txid, event_id = raw.split(".")
            cursor = cls(int(txid), uuid.UUID(hex=event_id))
            if not 0 <= cursor.txid < 2**63:  # PostgreSQL's bigint, which the cast goes by
                raise ValueError(txid)
            return cursor
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise InvalidRequest.field(
                "cursor", "Curseur invalide : reprenez celui de la dernière réponse."
            ) from None


@dataclass(frozen=True)
class Followed:
    events: Sequence[Event]
    cursor: Cursor


async def _now(session: AsyncSession) -> Cursor:
    """A cursor before every event not yet below the horizon: from now on (and, when a
    transaction older than the last commits still runs, a few that committed just before)."""
    return Cursor(int((await session.execute(_NOW)).scalar_one()), _NIL)


# A page: the horizon, and the account's test events after the cursor below it, in one
# statement (one snapshot: what the page leaves out below the horizon does not exist).
_PAGE = text(
    "SELECT CAST(CAST(now.h AS text) AS bigint), page.id, "  # noqa: S608 (constants only)
    "  CAST(CAST(page.txid AS text) AS bigint) "
    f"FROM (SELECT {_HORIZON} AS h) AS now LEFT JOIN LATERAL ("
    # Written as the partial index's predicate (`NOT livemode`, not `IS false`), which
    # PostgreSQL must match to use it.
    "  SELECT id, txid FROM events WHERE merchant_id = :merchant AND NOT livemode "
    "  AND txid IS NOT NULL AND txid < now.h "
    "  AND (txid, id) > (CAST(CAST(:after_txid AS text) AS xid8), CAST(:after_id AS uuid)) "
    "  ORDER BY txid, id LIMIT :limit) AS page ON true"
)


def page_parameters(merchant_id: str, cursor: Cursor) -> dict[str, object]:
    return {
        "merchant": merchant_id,
        "after_txid": str(cursor.txid),
        "after_id": cursor.event_id,
        "limit": LIMIT,
    }


async def _read(session: AsyncSession, merchant_id: str, cursor: Cursor) -> Followed:
    rows = (await session.execute(_PAGE, page_parameters(merchant_id, cursor))).all()
    horizon = int(rows[0][0])
    found = [(event_id, int(txid)) for _, event_id, txid in rows if event_id is not None]
    # All of the account below the horizon read: the next read starts there, not at the last
    # event (a quiet account's reads would otherwise cover more and more of the others').
    whole = len(found) < LIMIT
    after = Cursor(horizon, _NIL) if whole else Cursor(found[-1][1], found[-1][0])
    if not found:
        return Followed((), after)
    loaded = await session.scalars(select(Event).where(Event.id.in_([i for i, _ in found])))
    by_id = {event.id: event for event in loaded}
    return Followed([by_id[event_id] for event_id, _ in found], after)


class Feed:
    """The process's readers of test events and the poller that wakes them."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self._sessionmaker = sessionmaker
        self._waiting: dict[str, set[asyncio.Event]] = {}
        self._poller: asyncio.Task[None] | None = None
        self._looked_up_to: int | None = None  # the horizon of the poller's last look
        self.looking = asyncio.Event()  # set once the poller has taken its first horizon

    async def follow(
        self,
        session: AsyncSession,
        merchant_id: str,
        cursor: Cursor | None,
        wait: float,
        gone: Callable[[], Awaitable[bool]],
    ) -> Followed:
        """The account's test events after `cursor` (None: from now on), as soon as there
        is one, or none once `wait` seconds have passed or the reader is `gone` (asked after
        each look). Ends `session`'s transaction before waiting, and after each look."""
        start = cursor or await _now(session)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        with self._registered(merchant_id) as woken:
            while True:
                woken.clear()  # before the look: a wake-up during it is not lost
                found = await _read(session, merchant_id, start)
                await session.commit()  # nothing held while waiting
                left = deadline - loop.time()
                if found.events or left <= 0 or await gone():
                    return found
                start = found.cursor  # the next look starts where this one ended
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(min(left, RECHECK)):
                        await woken.wait()

    @contextlib.contextmanager
    def _registered(self, merchant_id: str) -> Iterator[asyncio.Event]:
        woken = asyncio.Event()
        self._waiting.setdefault(merchant_id, set()).add(woken)
        if self._poller is None or self._poller.done():  # done: cancelled with its loop
            self._poller = asyncio.create_task(self._poll())
        try:
            yield woken
        finally:
            waiters = self._waiting[merchant_id]
            waiters.discard(woken)
            if not waiters:
                del self._waiting[merchant_id]

    async def _poll(self) -> None:
        self._looked_up_to = None
        self.looking.clear()
        while self._waiting:
            try:
                async with self._sessionmaker() as session:
                    if self._looked_up_to is None:
                        self._looked_up_to = (await _now(session)).txid
                        self.looking.set()
                    else:
                        since = str(self._looked_up_to)
                        row = (await session.execute(_MOVED, {"since": since})).one()
                        self._looked_up_to, moved = int(row[0]), row[1]
                        for merchant_id in moved:
                            for woken in self._waiting.get(merchant_id, ()):
                                woken.set()
            except Exception:  # a database that is away: readers still look on their own
                log.warning("events.feed_poll_failed", exc_info=True)
            await asyncio.sleep(TICK)
        # No await since the loop's test: a reader registering from now on starts a new one.
        self._poller = None
