"""A primary and its synchronous standby, Debian's PostgreSQL 15, on free ports under a
temporary directory: killed with SIGKILL, fenced, and replaced by its standby, as an
operator (or an HA manager) does it.

PostgreSQL refuses to run as root: run as root, its programs run as the embedded PostgreSQL's
system account (cauri.kit.embedded_pg.SERVER_ACCOUNT, made with `useradd --system` when
missing), switched to by subprocess (setuid and setgid, no supplementary groups), and the
temporary directory is that account's."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import signal
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

from cauri.kit.embedded_pg import run_as, server_account
from tools.chaos_campaign.fleet import free_port

PROGRAMS = Path("/usr/lib/postgresql/15/bin")
SUPERUSER = "postgres"
DATABASE = "cauri"
# Each of Cauri's processes pools up to 40 connections (cauri.kit.db.make_engine).
MAX_CONNECTIONS = 400
WAIT = 60  # seconds pg_ctl waits for a start, a stop or a promotion


class ClusterError(RuntimeError):
    """A PostgreSQL program failed; the message carries what it said."""


@dataclass
class Node:
    """One server: a slot (its port) that keeps its address when a new server takes it."""

    port: int
    data: Path | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


@dataclass
class Cluster:
    root: Path
    account: pwd.struct_passwd | None
    primary: Node = field(default_factory=lambda: Node(free_port()))
    standby: Node = field(default_factory=lambda: Node(free_port()))
    generation: int = 0  # data directories made, each under a name of its own

    @classmethod
    def make(cls) -> Cluster:
        if not (PROGRAMS / "initdb").exists():
            raise ClusterError(f"Debian's PostgreSQL 15 is needed ({PROGRAMS}/initdb)")
        account = server_account()
        root = Path(tempfile.mkdtemp(prefix="cauri-failover-"))
        if account is not None:
            os.chown(root, account.pw_uid, account.pw_gid)
        return cls(root, account)

    @property
    def url(self) -> str:
        """libpq's form, as a deployment writes it: both servers, the writable one taken."""
        hosts = f"{self.primary.address},{self.standby.address}"
        return f"postgresql://{SUPERUSER}@{hosts}/{DATABASE}?target_session_attrs=read-write"

    async def start(self) -> None:
        """The primary and its database, empty (its standby comes with `add_standby`)."""
        self.primary.data = self._directory()
        self._run(
            "initdb",
            "--pgdata",
            str(self.primary.data),
            "--username",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--no-instructions",
        )
        self._start(self.primary)
        await self._sql(self.primary, f'CREATE DATABASE "{DATABASE}"')

    async def add_standby(self) -> None:
        """A standby copied from the primary into the standby's slot, made synchronous once
        it streams: from then on no commit is acknowledged before the standby has it."""
        self.standby.data = self._directory()
        self._run(
            "pg_basebackup",
            "--pgdata",
            str(self.standby.data),
            f"--dbname=host=127.0.0.1 port={self.primary.port} user={SUPERUSER}",
            "--wal-method=stream",
            "--write-recovery-conf",
            "--checkpoint=fast",
        )
        self._start(self.standby)
        await self._sql(self.primary, "ALTER SYSTEM SET synchronous_standby_names = '*'")
        await self._sql(self.primary, "SELECT pg_reload_conf()")
        async with asyncio.timeout(WAIT):
            # Another process's state: polled, nothing here can be awaited for it.
            while await self._sql(self.primary, SYNC_STATE) != "sync":  # noqa: ASYNC110
                await asyncio.sleep(0.1)

    def kill_primary(self) -> None:
        """The primary's machine dies: the postmaster stopped first (it forks nothing more),
        then it and every process it started get SIGKILL, nothing flushed or sent after."""
        assert self.primary.data is not None
        postmaster = int((self.primary.data / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, signal.SIGSTOP)
        for pid in [*_children(postmaster), postmaster]:
            with contextlib.suppress(ProcessLookupError):  # a backend ending on its own
                os.kill(pid, signal.SIGKILL)

    def fence(self) -> Path:
        """The dead primary can never come back writable: its data directory is renamed, and
        nothing here ever starts a server on it again."""
        assert self.primary.data is not None
        fenced = self.primary.data.with_name(self.primary.data.name + ".fenced")
        self.primary.data.rename(fenced)
        self.primary.data = None
        return fenced

    async def promote(self) -> None:
        """The standby becomes the primary, with no synchronous standby of its own (its
        commits would wait for one forever); the dead primary's slot is the next standby's."""
        await self._sql(self.standby, "ALTER SYSTEM RESET synchronous_standby_names")
        await self._sql(self.standby, "SELECT pg_reload_conf()")
        assert self.standby.data is not None
        self._run("pg_ctl", "promote", "--wait", f"--timeout={WAIT}", "-D", str(self.standby.data))
        self.primary, self.standby = self.standby, self.primary

    def stop(self) -> None:
        for node in (self.primary, self.standby):
            if node.data is not None and (node.data / "postmaster.pid").exists():
                self._run("pg_ctl", "stop", "-m", "immediate", "-D", str(node.data), check=False)
        shutil.rmtree(self.root, ignore_errors=True)

    def _directory(self) -> Path:
        self.generation += 1
        return self.root / f"node-{self.generation}"

    def _start(self, node: Node) -> None:
        assert node.data is not None
        # TCP only: a socket file's lock would name the killed server, whose process may
        # linger unreaped, and refuse the next server of its slot.
        options = (
            f"-p {node.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
            f"-c max_connections={MAX_CONNECTIONS}"
        )
        log = node.data.with_suffix(".log")
        self._run(
            "pg_ctl", "start", "--wait", f"--timeout={WAIT}", "-D", str(node.data), "-l", str(log),
            "-o", options,
        )  # fmt: skip

    async def _sql(self, node: Node, statement: str) -> object:
        connection = await asyncpg.connect(
            host="127.0.0.1", port=node.port, user=SUPERUSER, database="postgres"
        )
        try:
            return await connection.fetchval(statement)
        finally:
            await connection.close()

    def _run(self, program: str, *args: str, check: bool = True) -> None:
        status, said = run_as(self.account, [str(PROGRAMS / program), *args], self.root)
        if check and status != 0:
            raise ClusterError(f"{program} {' '.join(args)}: {said}")


SYNC_STATE = "SELECT sync_state FROM pg_stat_replication LIMIT 1"


def _children(parent: int) -> list[int]:
    """The processes whose parent is `parent` (PostgreSQL's children each lead a session of
    their own: no process group holds them all)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # ended meanwhile
        # The command sits in parentheses and may hold spaces: fields follow the last ")".
        if int(stat.rpartition(")")[2].split()[1]) == parent:
            found.append(int(entry.name))
    return found
