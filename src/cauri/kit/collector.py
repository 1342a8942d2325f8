"""Python's cycle collector, set for a long-running server process."""

from __future__ import annotations

import gc


def spare_what_lives_on() -> None:
    """What a process has made once it is ready to serve (modules, routes, models,
    validators, handlers) lives as long as it does. Left to the collector, every full
    collection walks all of it again: a pause of the whole process, and of every request or
    job in it, of up to 100 ms and more under load (bench/README.md, 2026-11-26). Frozen,
    it is never walked again; what is made afterwards is collected as before."""
    gc.collect()
    gc.freeze()
