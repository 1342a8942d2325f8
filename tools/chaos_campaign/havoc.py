"""What goes wrong during the campaign, at random moments drawn from its seed: the operators'
faults (armed for their next request), their notices dropped, delayed, duplicated and
reordered, notices forged by someone else, and Cauri's processes killed with SIGKILL."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass, field

from tools.chaos_campaign.fleet import Fleet
from tools.chaos_campaign.operators import NOTICE_MODES, Rig


@dataclass
class Havoc:
    rigs: list[Rig]
    fleet: Fleet
    rng: random.Random
    public_url: str
    fault_every: float  # seconds between two faults armed, on average
    kill_every: float  # seconds between two kills, on average
    recent: list[str] = field(default_factory=list)  # references forged notices name
    counts: Counter[str] = field(default_factory=Counter)

    async def run(self, stop: asyncio.Event) -> None:
        await asyncio.gather(self._faults(stop), self._notices(stop), self._kills(stop))

    async def _pause(self, mean: float, stop: asyncio.Event) -> bool:
        """Waits about `mean` seconds; False once the campaign's traffic is over."""
        try:
            await asyncio.wait_for(stop.wait(), self.rng.expovariate(1 / mean))
        except TimeoutError:
            return True
        return False

    async def _faults(self, stop: asyncio.Event) -> None:
        while await self._pause(self.fault_every, stop):
            rig = self.rng.choice(self.rigs)
            kind = self.rng.choice(rig.faults)
            rig.fault(kind)
            self.counts[f"fault {kind}"] += 1

    async def _notices(self, stop: asyncio.Event) -> None:
        while await self._pause(2.0, stop):
            rig = self.rng.choice(self.rigs)
            mode = self.rng.choice(NOTICE_MODES)
            rig.notices(mode)
            self.counts[f"notices {mode}"] += 1
            if self.recent:
                reference = self.rng.choice(self.recent[-50:])
                await asyncio.to_thread(rig.forge, self.public_url, reference)
                self.counts["forged notice"] += 1
        for rig in self.rigs:
            rig.notices("send")

    async def _kills(self, stop: asyncio.Event) -> None:
        while await self._pause(self.kill_every, stop):
            process = self.rng.choice(self.fleet.processes)
            # Back at once or after a while: a crash loop, or a host that reboots.
            down = self.rng.choice((0.0, 0.0, 0.5, 2.0))
            process.kill()
            self.counts[f"SIGKILL {process.name.split('-')[0]}"] += 1
            await asyncio.sleep(down)
            process.start()
        await self.fleet.serving()
