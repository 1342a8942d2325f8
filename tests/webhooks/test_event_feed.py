"""`GET /api/v1/events/feed` (issue 27, what `cauri-client listen` follows): an account's test
events in the order their transactions committed, resumable with a cursor that misses no
event even when a transaction that began first commits last."""

from __future__ import annotations

import asyncio
import base64
import uuid
from typing import Any

import httpx
from sqlalchemy import text

from cauri.events.feed import _PAGE, Cursor, Feed, page_parameters
from cauri.runtime import Runtime
from tests.payments.builders import pay
from tests.support import assert_error, make_merchant, momo_body

FEED = "/api/v1/events/feed"
# The longest a read waits for what a test just committed: a transaction of the cluster older
# than it (another test process's) holds it back until it ends.
WAIT = 60


async def _follow(
    client: httpx.AsyncClient, headers: dict[str, str], cursor: str | None, wait: float = 0
) -> dict[str, Any]:
    params: dict[str, Any] = {"wait": wait} | ({"cursor": cursor} if cursor else {})
    response = await client.get(FEED, params=params, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def _insert_event(connection: Any, merchant_id: str, kind: str) -> uuid.UUID:
    event_id = uuid.uuid4()
    await connection.execute(
        text(
            "INSERT INTO events (id, merchant_id, livemode, type, data, created_at) "
            "VALUES (:id, :merchant, false, :type, '{}', now())"
        ),
        {"id": event_id, "merchant": merchant_id, "type": kind},
    )
    return event_id


async def test_the_feed_starts_now_and_reads_on_from_its_cursor(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    start = await _follow(client, merchant.headers(), None)
    assert start["data"] == []
    paid = (await pay(client, merchant.headers(), momo_body(phone_number="22997000000"))).json()
    # Waits: another process's transaction, older than the payment, may still run.
    answer = await _follow(client, merchant.headers(), start["cursor"], wait=WAIT)
    assert [(e["event"], e["data"]["reference"]) for e in answer["data"]] == [
        ("payment.succeeded", paid["data"]["reference"])
    ]
    assert answer["data"][0]["livemode"] is False
    # The same cursor reads the same events again; the new one reads nothing more.
    again = await _follow(client, merchant.headers(), start["cursor"], wait=WAIT)
    assert again["data"] == answer["data"]
    assert (await _follow(client, merchant.headers(), answer["cursor"]))["data"] == []
    # Another account's events are not in it.
    other = await make_merchant(runtime)
    await pay(client, other.headers(), momo_body(phone_number="22997000000"))
    assert (await _follow(client, merchant.headers(), answer["cursor"]))["data"] == []


async def test_an_event_committed_late_is_read_in_its_place_never_skipped(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """A transaction that began first and commits last: until it ends, the feed stops
    before it (what committed after it waits); then both come, the first one first."""
    merchant = await make_merchant(runtime)
    start = (await _follow(client, merchant.headers(), None))["cursor"]
    async with runtime.engine.connect() as slow, runtime.engine.connect() as fast:
        await slow.begin()
        first = await _insert_event(slow, merchant.id, "payment.succeeded")
        await fast.begin()
        second = await _insert_event(fast, merchant.id, "payment.failed")
        await fast.commit()
        assert (await _follow(client, merchant.headers(), start))["data"] == []
        await slow.commit()
    answer = await _follow(client, merchant.headers(), start, wait=WAIT)
    assert [e["id"] for e in answer["data"]] == [str(first), str(second)]


async def test_a_waiting_reader_is_answered_when_an_event_commits(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    start = (await _follow(client, merchant.headers(), None))["cursor"]
    waiting = asyncio.create_task(_follow(client, merchant.headers(), start, wait=WAIT))
    await asyncio.sleep(0)  # the reader registers before the payment is made
    paid = (await pay(client, merchant.headers(), momo_body(phone_number="22997000000"))).json()
    answer = await waiting
    assert [e["data"]["reference"] for e in answer["data"]] == [paid["data"]["reference"]]


async def test_live_keys_and_forged_cursors_are_refused(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    live = await client.get(FEED, params={"wait": 0}, headers=merchant.headers(livemode=True))
    assert_error(live, 422, "invalid_request")
    huge = base64.urlsafe_b64encode(f"{2**63}.{uuid.UUID(int=0).hex}".encode()).decode()
    for forged in ("nope", "bm9wZQ", "MTIuYWJj", "x" * 201, huge):
        refused = await client.get(
            FEED, params={"wait": 0, "cursor": forged}, headers=merchant.headers()
        )
        assert_error(refused, 422, "invalid_request")
    too_long = await client.get(FEED, params={"wait": 61}, headers=merchant.headers())
    assert_error(too_long, 422, "invalid_request")


def test_a_cursor_reads_back_what_it_was() -> None:
    cursor = Cursor(123456789, uuid.uuid4())
    assert Cursor.parse(cursor.token()) == cursor


async def test_the_process_poller_wakes_the_readers_of_an_account_with_new_events(
    runtime: Runtime,
) -> None:
    """Only the poller sets a reader's wake-up (a reader's own looks do not): woken, it
    saw the event; the other account's reader stays asleep."""
    merchant, other = await make_merchant(runtime), await make_merchant(runtime)
    feed = Feed(runtime.sessionmaker)
    with feed._registered(merchant.id) as woken, feed._registered(other.id) as untouched:
        # The poller's first look: the event comes after it.
        await asyncio.wait_for(feed.looking.wait(), timeout=WAIT)
        async with runtime.engine.begin() as connection:
            await _insert_event(connection, merchant.id, "payment.succeeded")
        await asyncio.wait_for(woken.wait(), timeout=WAIT)
        assert not untouched.is_set()


async def test_a_read_of_the_feed_takes_its_index_not_the_accounts_whole_history(
    runtime: Runtime,
) -> None:
    """The partial index on test events (migration 0036), in each partition, is used only
    when the query says what its predicate says: `events.livemode IS false` took every test
    event of the account through the list's index instead."""
    parameters = page_parameters("mer_x", Cursor(1, uuid.UUID(int=0)))
    async with runtime.engine.connect() as connection:
        # On a near-empty table any plan costs nothing: steer away from scanning and sorting,
        # which only the feed's index (it gives the order) avoids, if the query can use it.
        await connection.execute(text("SET LOCAL enable_seqscan = off"))
        await connection.execute(text("SET LOCAL enable_sort = off"))
        explained = text(f"EXPLAIN {_PAGE.text}")
        plan = "\n".join((await connection.execute(explained, parameters)).scalars().all())
        # Each month's partition has its own copy of the index (migration 0041).
        copies = (
            await connection.execute(
                text(
                    "SELECT CAST(inhrelid AS regclass)::text FROM pg_inherits "
                    "WHERE inhparent = CAST('ix_events_feed' AS regclass)"
                )
            )
        ).scalars()
    assert any(f"using {index} on" in plan for index in copies), plan


async def test_a_quiet_accounts_cursor_moves_on_with_the_horizon(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """A review's finding: a read that found nothing gave back its cursor, and each next read
    of a quiet account covered every other account's events since."""
    quiet, busy = await make_merchant(runtime), await make_merchant(runtime)
    start = (await _follow(client, quiet.headers(), None))["cursor"]
    await pay(client, busy.headers(), momo_body(phone_number="22997000000"))
    later = start
    for _ in range(WAIT * 20):  # until the payment's transaction is below the horizon
        later = (await _follow(client, quiet.headers(), start))["cursor"]
        if Cursor.parse(later) > Cursor.parse(start):
            break
        await asyncio.sleep(0.05)
    assert Cursor.parse(later) > Cursor.parse(start)
