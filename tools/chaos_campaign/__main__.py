"""`tools/chaos [--long] [--seed N]`: the campaign, its figures, and as its last line
`chaos: N operations, B breaches`; the exit status is 1 on any breach."""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

from cauri.config import Settings
from cauri.runtime import Runtime
from tests.databases import fresh_database
from tools.chaos_campaign import campaign
from tools.chaos_campaign.campaign import Verdict
from tools.chaos_campaign.fleet import Fleet, free_port
from tools.chaos_campaign.havoc import Havoc
from tools.chaos_campaign.operators import Moved, Rig, operators
from tools.chaos_campaign.traffic import Merchant, Tally
from tools.chaos_campaign.verdict import judge, waiting_untold
from tools.chaos_campaign.wiring import Schedule, environment, wire


@dataclass(frozen=True)
class Scale:
    flows: int  # merchant flows: a payment (and its refunds), a payout, a plan
    concurrency: int
    settle_wait: float  # how long a flow waits for an outcome before moving on
    fault_every: float
    kill_every: float
    converge_within: float
    schedule: Schedule


SHORT = Scale(
    flows=150,
    concurrency=10,
    settle_wait=15,
    fault_every=0.5,
    kill_every=6,
    converge_within=90,
    schedule=Schedule(operator_timeout=2, poll_delays="1,2,3", poll_interval=3, poll_horizon=40),
)
LONG = Scale(
    flows=900,
    concurrency=16,
    settle_wait=30,
    fault_every=0.4,
    kill_every=8,
    converge_within=300,
    schedule=Schedule(
        operator_timeout=2, poll_delays="1,2,4,8", poll_interval=10, poll_horizon=120
    ),
)
# Jobs that make what the verdict waits on (a late instalment's refund, a plan's refund, an
# approved payout, a batch's payouts), due or running: until they have run, a quiet moment
# is no convergence (a customer who paid a page late made a refund the job had yet to write).
MAKING = text(
    "SELECT count(*) FROM jobs WHERE kind IN ('plans.refund', 'plans.refund_late_instalment', "
    "'checkout.refund_late_attempt', 'payouts.send_approved', 'payout_batches.process') "
    "AND (status = 'running' OR (status = 'queued' AND run_at <= now()))"
)
PAGES_GIVEN = text(
    "SELECT id::text FROM payments WHERE livemode AND status = 'pending' "
    "AND payment_url IS NOT NULL"
)
# Which flows the merchants run, in what proportion.
MIX = (("payment", 6), ("payout", 3), ("plan", 2))


async def main(scale: Scale, seed: int) -> int:
    rng = random.Random(seed)
    logs = Path(".cauri/chaos") / time.strftime("%Y%m%d-%H%M%S")
    logs.mkdir(parents=True, exist_ok=True)
    port = free_port()
    public_url = f"http://127.0.0.1:{port}"
    secret_key = secrets.token_hex(32)
    started = time.monotonic()
    async with fresh_database("cauri_chaos") as url:
        with operators(public_url) as rigs:
            runtime = Runtime.build(Settings(database_url=url, secret_key=secret_key), url=url)
            try:
                merchant_id, live_key = await wire(runtime, rigs)
                env = environment(url, secret_key, public_url, scale.schedule)
                fleet = Fleet(env, logs, port=port)
                try:
                    await fleet.start()
                    verdict, tally, havoc, converged = await _campaign(
                        scale, rng, rigs, fleet, runtime, merchant_id, live_key
                    )
                    crashed = fleet.crashed()
                finally:
                    fleet.stop()
            finally:
                await runtime.close()
    for crash in crashed:
        verdict.breach("crashed", crash)
    _report(scale, seed, verdict, tally, havoc, converged, time.monotonic() - started, logs)
    return 1 if verdict.count else 0


async def _campaign(
    scale: Scale,
    rng: random.Random,
    rigs: list[Rig],
    fleet: Fleet,
    runtime: Runtime,
    merchant_id: str,
    live_key: str,
) -> tuple[Verdict, Tally, Havoc, float | None]:
    headers = {"Authorization": f"Bearer {live_key}"}
    async with httpx.AsyncClient(base_url=fleet.base_url, headers=headers) as client:
        tally = Tally()
        merchant = Merchant(client, rigs, rng, tally, scale.settle_wait)
        havoc = Havoc(
            rigs, fleet, rng, fleet.base_url, scale.fault_every, scale.kill_every, tally.references
        )
        stop = asyncio.Event()
        chaos = asyncio.create_task(havoc.run(stop))
        await _traffic(merchant, scale, rng)
        stop.set()
        await chaos  # every process is serving again
        converged = await _converge(runtime, rigs, scale.converge_within)

        async def read_balance() -> int:
            balances = await merchant.read("/api/v1/balance")
            [live] = [b for b in balances if b["livemode"] and b["currency"] == "XOF"]
            return int(live["available"])

        async def read_moved() -> list[Moved]:
            return [item for rig in rigs for item in await asyncio.to_thread(rig.moved)]

        verdict = await judge(runtime.engine, read_moved, merchant_id, read_balance)
        verdict.breaches.update(
            {"server_error": len(tally.server_errors)} if tally.server_errors else {}
        )
        for error in tally.server_errors[:5]:
            verdict.examples["server_error"].append(error)
    return verdict, tally, havoc, converged


async def _traffic(merchant: Merchant, scale: Scale, rng: random.Random) -> None:
    kinds = [kind for kind, weight in MIX for _ in range(weight)]
    flows = [rng.choice(kinds) for _ in range(scale.flows)]
    gate = asyncio.Semaphore(scale.concurrency)

    async def one(kind: str) -> None:
        async with gate:
            await getattr(merchant, kind)()

    await asyncio.gather(*(one(kind) for kind in flows))


async def _converge(runtime: Runtime, rigs: list[Rig], within: float) -> float | None:
    """Seconds until nothing waits untold (every operation final, or flagged for a person)
    and no job that makes something to wait on is due; None if that did not happen within
    `within`. Meanwhile the customers who were given a
    payment page and have not paid yet (their flow moved on, or its answer was replayed) pay:
    a payment whose page no customer was given stays for Cauri to settle."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while loop.time() - start < within:
        async with runtime.engine.connect() as connection:
            waiting = await waiting_untold(connection)
            if not waiting and not await connection.scalar(MAKING):
                return loop.time() - start
            given_a_page = await connection.scalars(PAGES_GIVEN)
            for reference in given_a_page:
                for rig in rigs:
                    await asyncio.to_thread(rig.customer_acts, reference, True)
        await asyncio.sleep(0.5)
    return None


def _report(
    scale: Scale,
    seed: int,
    verdict: Verdict,
    tally: Tally,
    havoc: Havoc,
    converged: float | None,
    elapsed: float,
    logs: Path,
) -> None:
    subjects: Counter[str] = verdict.figures["subjects"]
    operations = sum(subjects.values())
    shown: dict[str, Any] = {
        "seed": seed,
        "flows": scale.flows,
        "seconds": round(elapsed, 1),
        "converged after traffic (s)": None if converged is None else round(converged, 1),
        "requests started": dict(sorted(tally.started.items())),
        "answers": dict(sorted(tally.answers.items())),
        "payments' creation answers": dict(sorted(tally.created.items())),
        "replayed after the API went away": tally.replays,
        "outcome unknown, not replayable": tally.unknown,
        "havoc": dict(sorted(havoc.counts.items())),
        "final states": dict(sorted(subjects.items())),
        "operator operations": dict(sorted(verdict.figures["operations"].items())),
        "flagged for review": verdict.figures["flagged"],
        "moved at the operators": dict(sorted(verdict.figures["moved at the operators"].items())),
        "ledger": verdict.figures["ledger"],
    }
    campaign.show(verdict, shown, logs)
    print(f"chaos: {operations} operations, {verdict.count} breaches")


if __name__ == "__main__":
    campaign.run(
        "tools/chaos",
        __doc__,
        "docs/RELIABILITY.md",
        lambda long, seed: main(LONG if long else SHORT, seed),
    )
