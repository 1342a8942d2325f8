"""Cauri's own processes under a campaign: one `cauri serve --no-worker` (of one or more server
processes) and workers, each a real subprocess with its own log, killed with SIGKILL (no
chance to clean up) and started again."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import httpx

CAURI = str(Path(sys.executable).with_name("cauri"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Process:
    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.popen = subprocess.Popen(  # noqa: S603 (our own program, our arguments)
                self.argv, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )

    def kill(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
            self.popen.wait()

    def stop(self) -> None:
        """The end of the campaign: a polite stop, SIGKILL if it does not come."""
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.terminate()
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    @property
    def exited_on_its_own(self) -> int | None:
        """The exit code of a process that ended without the campaign killing it."""
        return None if self.popen is None else self.popen.poll()


@dataclass
class Fleet:
    """The API and its workers, sharing one environment (CAURI_* settings)."""

    env: dict[str, str]
    logs: Path
    port: int = field(default_factory=free_port)
    workers: int = 2
    api_processes: int = 1  # `cauri serve --workers N`: N server processes on one port
    processes: list[Process] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __post_init__(self) -> None:
        env = {**os.environ, **self.env}
        serve = [CAURI, "serve", "--no-worker", "--port", str(self.port)]
        serve += ["--workers", str(self.api_processes)]
        self.processes = [Process("serve", serve, env, self.logs / "serve.log")]
        self.processes += [
            Process(f"worker-{n}", [CAURI, "worker"], env, self.logs / f"worker-{n}.log")
            for n in range(1, self.workers + 1)
        ]

    @property
    def api(self) -> Process:
        return self.processes[0]

    async def start(self) -> None:
        for process in self.processes:
            process.start()
        await self.serving()

    async def serving(self) -> None:
        """Until the API answers /health (its start-up applies migrations and imports)."""
        async with asyncio.timeout(90), httpx.AsyncClient(base_url=self.base_url) as client:
            while True:
                status = self.api.exited_on_its_own
                if status is not None:
                    raise RuntimeError(f"cauri serve exited with {status}: see {self.api.log}")
                try:
                    if (await client.get("/health", timeout=2)).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)

    def crashed(self) -> list[str]:
        """Processes that died without being killed: a crash, not chaos."""
        return [
            f"{p.name} exited with {p.exited_on_its_own} (log: {p.log})"
            for p in self.processes
            if p.exited_on_its_own is not None
        ]

    def stop(self) -> None:
        for process in self.processes:
            process.stop()
