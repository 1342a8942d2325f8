"""Where the time goes, from py-spy's collapsed stacks (`py-spy record --format raw`).

Prints the share of the samples spent in each package (by the innermost frame), each
function on its own (self), by the innermost frame of Cauri's own code, and each function
with what it calls (inclusive, a stack counted once). py-spy leaves out idle threads (a
server waiting in epoll) unless told `--idle`; a thread inside a socket send that woke
PostgreSQL and lost the CPU to it counts as busy in the frame that sent.

    uv run python bench/top_frames.py cauri.collapsed [--top 25]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

# "function (path/to/file.py:123)"; py-spy's process and thread frames do not match.
FRAME = re.compile(r"^(?P<function>.+?) \((?P<path>[^()]+?)(?::(?P<line>\d+))?\)$")


def where(path: str) -> str:
    """A file's package or module: py-spy names files from their import root
    (`asyncpg/prepared_stmt.py`, `uuid.py`), or in full for a path it could not shorten."""
    parts = Path(path).parts
    if "site-packages" in parts:
        parts = parts[parts.index("site-packages") + 1 :]
    return parts[0].removesuffix(".py") if parts else path


def frames(stack: str) -> list[tuple[str, str]]:
    """The stack's Python frames, outermost first, as (package, function in its file)."""
    found = []
    for raw in stack.split(";"):
        match = FRAME.match(raw)
        if match is None:
            continue
        path = match["path"]
        found.append((where(path), f"{match['function']} ({Path(path).name})"))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collapsed", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    packages: Counter[str] = Counter()
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    # Whose code is running, on Cauri's side: the innermost frame of Cauri's own (its
    # middleware, dependencies, services), with whatever library code runs under it.
    step: Counter[str] = Counter()
    total = 0
    for line in args.collapsed.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        samples = int(count)
        found = frames(stack)
        if not found:
            continue
        total += samples
        package, function = found[-1]
        packages[package] += samples
        own[f"{package}: {function}"] += samples
        for name in {f"{p}: {f}" for p, f in found}:
            inclusive[name] += samples
        mine = [f for p, f in found if p == "cauri"]
        step[mine[-1] if mine else f"(outside Cauri's code) {package}"] += samples
    if not total:
        raise SystemExit("no Python samples in the file")
    print(f"{total} samples")
    for title, counter in (
        ("by package (innermost frame)", packages),
        ("self, by function", own),
        ("by innermost Cauri frame (library code under it included)", step),
        ("inclusive, by function", inclusive),
    ):
        print(f"\n{title}")
        for name, samples in counter.most_common(args.top):
            print(f"  {100 * samples / total:5.1f} %  {name}")


if __name__ == "__main__":
    main()
