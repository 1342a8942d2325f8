"""What the failover must not have broken, read on the new primary once everything settled:

- `lost`: an operation a client saw acknowledged (2xx) that the database does not hold;
- `duplicated`: one external_id made more than once (two rows, or two references given);
- `unknown`: a row no client asked for;
- `refused`, `abandoned`: a request refused with a 4xx, or never acknowledged (the service
  did not come back within clients.GIVE_UP_AFTER);
- `stuck`: a payment or payout still pending once the queue drained;
- `ledger`: `cauri ledger check` did not pass (run as an operator runs it, on the same URL);
- `undelivered`: an event whose webhook was not delivered, or that the receiver never got;
- `phantom`: a notification received for an event the new primary does not hold;
- `queue_not_drained`: jobs due, running or failed;
- `crashed`: one of Cauri's processes died on its own.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter, defaultdict
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tools.chaos_campaign.campaign import Verdict
from tools.chaos_campaign.fleet import CAURI
from tools.failover_campaign.clients import Tally

OPERATIONS = text(
    "SELECT 'payment', external_id, id::text, status FROM payments "
    "WHERE merchant_id = :merchant AND NOT livemode "
    "UNION ALL SELECT 'payout', external_id, reference, status FROM payouts "
    "WHERE merchant_id = :merchant AND NOT livemode"
)
EVENTS = text(
    "SELECT e.id::text, d.status FROM events e "
    "LEFT JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.merchant_id = :merchant"
)
# Jobs still to run now, running, or given up on; those due later (none here) are left.
UNFINISHED = text(
    "SELECT status, count(*) FROM jobs WHERE status <> 'queued' OR run_at <= now() GROUP BY status"
)
PENDING = "pending"


@dataclass(frozen=True)
class State:
    """The new primary as it stands: operations by external_id, events and their delivery."""

    rows: dict[str, list[tuple[str, str, str]]]  # external_id: (kind, reference, status)
    events: dict[str, str | None]  # event id: its delivery's status
    jobs: dict[str, int]

    def settled(self, received: set[str]) -> bool:
        pending = any(status == PENDING for rows in self.rows.values() for *_, status in rows)
        delivered = all(
            status == "success" and event in received for event, status in self.events.items()
        )
        return not pending and delivered and not self.jobs


async def read_state(engine: AsyncEngine, merchant: str) -> State:
    async with engine.connect() as connection:
        rows: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
        for kind, external_id, reference, status in await connection.execute(
            OPERATIONS, {"merchant": merchant}
        ):
            rows[external_id].append((kind, reference, status))
        events: dict[str, str | None] = {
            event: status
            for event, status in await connection.execute(EVENTS, {"merchant": merchant})
        }
        jobs: dict[str, int] = {
            status: count for status, count in await connection.execute(UNFINISHED)
        }
    return State(dict(rows), events, jobs)


async def judge(state: State, tally: Tally, received: set[str], url: str) -> Verdict:
    verdict = Verdict()
    check_operations(verdict, state, tally)
    check_notifications(verdict, state, received)
    for status, count in state.jobs.items():
        verdict.breach("queue_not_drained", f"{count} jobs {status}")
    await _ledger(verdict, url)
    return verdict


def check_operations(verdict: Verdict, state: State, tally: Tally) -> None:
    given: dict[str, set[str]] = defaultdict(set)
    for ack in tally.acknowledged:
        given[ack.external_id].add(ack.reference)
        if ack.reference not in {
            reference for _, reference, _ in state.rows.get(ack.external_id, [])
        }:
            verdict.breach("lost", f"{ack.kind} {ack.external_id} ({ack.reference})")
    for external_id, rows in state.rows.items():
        if len(rows) > 1 or len(given[external_id]) > 1:
            verdict.breach(
                "duplicated", f"{external_id}: {rows}, acknowledged {given[external_id]}"
            )
        if external_id not in tally.sent:
            verdict.breach("unknown", f"{external_id}: {rows}")
        for kind, reference, status in rows:
            if status == PENDING:
                verdict.breach("stuck", f"{kind} {reference}")
    for refused in tally.refused:
        verdict.breach("refused", refused)
    for abandoned in tally.abandoned:
        verdict.breach("abandoned", abandoned)
    verdict.figures["final states"] = Counter(
        f"{kind} {status}" for rows in state.rows.values() for kind, _, status in rows
    )


def check_notifications(verdict: Verdict, state: State, received: set[str]) -> None:
    for event, status in state.events.items():
        if status != "success" or event not in received:
            verdict.breach("undelivered", f"event {event}: delivery {status}")
    for event in received - set(state.events):
        verdict.breach("phantom", f"event {event}")
    verdict.figures["events delivered"] = len(state.events)


async def _ledger(verdict: Verdict, url: str) -> None:
    """`cauri ledger check`, as an operator runs it, through the URL naming both servers."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAURI_")}
    process = await asyncio.create_subprocess_exec(
        CAURI,
        "ledger",
        "check",
        "--json",
        env=environment | {"CAURI_DATABASE_URL": url},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    if process.returncode != 0:
        verdict.breach("ledger", (out or err).decode()[-500:])
        return
    checked = json.loads(out)
    verdict.figures["ledger"] = (
        f"{checked['transactions']} transactions, {checked['postings']} postings, "
        f"{checked['accounts']} account heads: passed"
    )
