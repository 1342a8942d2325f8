"""What every campaign shares besides its processes (fleet.py): its breaches, with a few
examples of each, how it shows them, and its command line (`--long`, `--seed`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn


@dataclass
class Verdict:
    breaches: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    figures: dict[str, Any] = field(default_factory=dict)

    def breach(self, check: str, detail: str) -> None:
        self.breaches[check] += 1
        if len(self.examples[check]) < 5:
            self.examples[check].append(detail)

    @property
    def count(self) -> int:
        return sum(self.breaches.values())


def show(verdict: Verdict, figures: dict[str, Any], logs: Path) -> None:
    """The figures as JSON, then each breach with its examples; the processes' logs kept (and
    named) on a breach, removed otherwise."""
    print(json.dumps(figures | {"breaches": dict(verdict.breaches)}, indent=2, ensure_ascii=False))
    for check, examples in verdict.examples.items():
        for example in examples:
            print(f"breach {check}: {example}")
    if verdict.count:
        print(f"logs of Cauri's processes: {logs}")
    else:
        shutil.rmtree(logs)


def run(
    program: str,
    description: str | None,
    recorded_in: str,
    campaign: Callable[[bool, int], Coroutine[Any, Any, int]],
) -> NoReturn:
    """`program [--long] [--seed N]`: the campaign, short or long, its exit status the
    process's; the seed drawn when none is given."""
    parser = argparse.ArgumentParser(prog=program, description=description)
    parser.add_argument("--long", action="store_true", help=f"the recorded run ({recorded_in})")
    parser.add_argument("--seed", type=int, default=None, help="the random draws' seed")
    arguments = parser.parse_args()
    seed = arguments.seed if arguments.seed is not None else random.SystemRandom().randrange(10**6)
    sys.exit(asyncio.run(campaign(arguments.long, seed)))
