"""`tools/failover [--long] [--seed N]`: the campaign, its figures, and as its last line
`failover: N acknowledged, L lost, D duplicated`; the exit status is 1 on a loss, a
duplicate or any other breach (verdict.py)."""

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

from cauri.config import Settings
from cauri.kit import migrate
from cauri.kit.db import as_asyncpg, unit_of_work
from cauri.runtime import Runtime
from tools.chaos_campaign import campaign
from tools.chaos_campaign.campaign import Verdict
from tools.chaos_campaign.fleet import Fleet, free_port
from tools.chaos_campaign.wiring import Schedule, environment, funded_merchant
from tools.failover_campaign.clients import Merchant, Tally
from tools.failover_campaign.cluster import Cluster
from tools.failover_campaign.receiver import Receiver, receiving
from tools.failover_campaign.verdict import State, judge, read_state


@dataclass(frozen=True)
class Scale:
    clients: int  # merchants' integrations sending at once
    failovers: int
    before: float  # seconds of traffic before each kill (the standby made anew first)
    after: float  # seconds of traffic after the last promotion
    settle_within: float  # seconds for the queue to drain once the traffic is over


SHORT = Scale(clients=8, failovers=1, before=8, after=6, settle_within=60)
LONG = Scale(clients=16, failovers=4, before=45, after=30, settle_within=180)
# Test mode's outcomes are the simulator's; the operators' schedule plays no part.
SCHEDULE = Schedule(operator_timeout=2, poll_delays="1,2,3", poll_interval=3, poll_horizon=40)


@dataclass
class Failover:
    killed: float  # the loop's clock
    promoted: float


async def main(scale: Scale, seed: int) -> int:
    rng = random.Random(seed)
    logs = Path(".cauri/failover") / time.strftime("%Y%m%d-%H%M%S")
    logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    cluster = Cluster.make()
    try:
        await cluster.start()
        url = cluster.url
        # Alembic, through the URL naming both servers; before the standby is copied, so
        # that its hundreds of statements wait for no standby.
        await migrate.upgrade_async(as_asyncpg(url))
        await cluster.add_standby()
        secret_key = secrets.token_hex(32)
        runtime = Runtime.build(Settings(database_url=url, secret_key=secret_key))
        try:
            with receiving() as receiver:
                verdict, tally, failovers, settled = await _campaign(
                    scale, rng, cluster, runtime, receiver, logs
                )
        finally:
            await runtime.close()
    finally:
        cluster.stop()
    _report(scale, seed, verdict, tally, failovers, settled, time.monotonic() - started, logs)
    return 1 if verdict.count else 0


async def _campaign(
    scale: Scale,
    rng: random.Random,
    cluster: Cluster,
    runtime: Runtime,
    receiver: Receiver,
    logs: Path,
) -> tuple[Verdict, Tally, list[Failover], float | None]:
    async with unit_of_work(runtime.sessionmaker) as session:
        merchant_id, test_key = await funded_merchant(
            session, runtime, "Boutique de la bascule", livemode=False
        )
    port = free_port()
    secret_key = runtime.settings.secret_key
    assert secret_key is not None
    env = environment(cluster.url, secret_key, f"http://127.0.0.1:{port}", SCHEDULE)
    env |= {
        "CAURI_TEST_SETTLE_DELAY": "1",
        "CAURI_WEBHOOK_ALLOW_LOOPBACK": "true",
        "CAURI_WEBHOOK_RETRY_DELAYS": "1,1,2,2,3,3,5,5,5,5",
        # One merchant's endpoint takes every notification: more of them at once than the
        # default 4, so that the deliveries keep up with the traffic.
        "CAURI_WEBHOOK_ENDPOINT_CONCURRENCY": "16",
    }
    fleet = Fleet(env, logs, port=port, workers=2, api_processes=2)
    try:
        await fleet.start()
        headers = {"Authorization": f"Bearer {test_key}"}
        async with httpx.AsyncClient(base_url=fleet.base_url, headers=headers) as client:
            endpoint = await client.put("/api/v1/webhooks/endpoint", json={"url": receiver.url})
            endpoint.raise_for_status()
            tally = Tally()
            stop = asyncio.Event()
            merchants = [
                Merchant(client, random.Random(rng.random()), tally) for _ in range(scale.clients)
            ]
            traffic = [asyncio.create_task(m.run(stop)) for m in merchants]
            failovers = await _failovers(scale, cluster)
            await asyncio.sleep(scale.after)
            stop.set()
            await asyncio.gather(*traffic)
        state, settled = await _settle(runtime, merchant_id, receiver, scale.settle_within)
        verdict = await judge(state, tally, receiver.delivered(), cluster.url)
        for crash in fleet.crashed():
            verdict.breach("crashed", crash)
    finally:
        fleet.stop()
    return verdict, tally, failovers, settled


async def _failovers(scale: Scale, cluster: Cluster) -> list[Failover]:
    """Each round: traffic for a while, the primary killed, fenced, its standby promoted; then
    a new standby in the dead primary's slot, synchronous again, for the next round."""
    loop = asyncio.get_running_loop()
    done: list[Failover] = []
    for round_ in range(scale.failovers):
        if round_:
            await cluster.add_standby()
        await asyncio.sleep(scale.before)
        killed = loop.time()
        cluster.kill_primary()
        cluster.fence()
        await cluster.promote()
        done.append(Failover(killed, loop.time()))
    return done


async def _settle(
    runtime: Runtime, merchant_id: str, receiver: Receiver, within: float
) -> tuple[State, float | None]:
    """The state once every operation is final, every event delivered and the queue empty;
    how long that took (None: not within `within`, the verdict says what is left)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while True:
        state = await read_state(runtime.engine, merchant_id)
        if state.settled(receiver.delivered()):
            return state, loop.time() - start
        if loop.time() - start > within:
            return state, None
        await asyncio.sleep(0.5)


def _outage(failover: Failover, tally: Tally) -> float | None:
    """Seconds from the SIGKILL until a request sent after it was acknowledged."""
    after = [ack.answered for ack in tally.acknowledged if ack.sent > failover.killed]
    return round(min(after) - failover.killed, 2) if after else None


def _report(
    scale: Scale,
    seed: int,
    verdict: Verdict,
    tally: Tally,
    failovers: list[Failover],
    settled: float | None,
    elapsed: float,
    logs: Path,
) -> None:
    acknowledged = Counter(ack.kind for ack in tally.acknowledged)
    shown: dict[str, Any] = {
        "seed": seed,
        "seconds": round(elapsed, 1),
        "clients": scale.clients,
        "acknowledged": dict(sorted(acknowledged.items())),
        "acknowledged after a retry": tally.retried,
        "answers": dict(sorted(tally.answers.items())),
        "failovers": [
            {
                "promoted after the kill (s)": round(f.promoted - f.killed, 2),
                "seconds without service": _outage(f, tally),
            }
            for f in failovers
        ],
        "settled after the traffic (s)": None if settled is None else round(settled, 1),
        **verdict.figures,
    }
    campaign.show(verdict, shown, logs)
    lost, duplicated = verdict.breaches["lost"], verdict.breaches["duplicated"]
    print(f"failover: {len(tally.acknowledged)} acknowledged, {lost} lost, {duplicated} duplicated")


if __name__ == "__main__":
    campaign.run(
        "tools/failover",
        __doc__,
        "docs/SCALING.md",
        lambda long, seed: main(LONG if long else SHORT, seed),
    )
