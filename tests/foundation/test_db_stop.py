"""`cauri db stop` (issue 12): stops the embedded PostgreSQL of CAURI_DATA_DIR, keeps its
data (the next command starts it again), and refuses to touch a configured database."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from cauri.kit import embedded_pg
from tests import cli
from tests.foundation.test_embedded_pg import connection_parameters


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Searchable by others: run as root, the server's own account must reach it.
    parent = Path(tempfile.mkdtemp(prefix="cauri-db-stop-"))
    parent.chmod(0o711)
    try:
        yield parent / "data"
    finally:
        embedded_pg.stop(parent / "data")
        shutil.rmtree(parent)


async def cauri(*args: str, **env: str) -> tuple[int, str, str]:
    result = await cli.run(*args, env=env, stdin=None, process=False)
    return result.exit_code, result.stdout, result.stderr


async def connect(data_dir: Path, url: str) -> asyncpg.Connection:
    password = (data_dir / "password").read_text().strip()
    return await asyncpg.connect(**connection_parameters(url), password=password)


async def test_db_stop_stops_the_embedded_server_and_keeps_its_data(data_dir: Path) -> None:
    url = embedded_pg.start(data_dir)
    connection = await connect(data_dir, url)
    await connection.execute("CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)")
    await connection.close()

    code, out, err = await cauri("db", "stop", CAURI_DATA_DIR=str(data_dir))
    assert code == 0, err
    assert f"stopped the embedded PostgreSQL of {data_dir}" in out
    assert not (data_dir / "pgdata" / "postmaster.pid").exists()
    with pytest.raises(OSError):
        await connect(data_dir, url)

    code, out, err = await cauri("db", "stop", CAURI_DATA_DIR=str(data_dir))
    assert code == 0, err
    assert "no embedded PostgreSQL runs" in out

    # The next command that needs it starts it again, with its data.
    again = embedded_pg.start(data_dir)
    connection = await connect(data_dir, again)
    try:
        assert await connection.fetchval("SELECT n FROM kept") == 42
    finally:
        await connection.close()


async def test_db_stop_leaves_a_configured_database_alone(data_dir: Path) -> None:
    code, out, err = await cauri(
        "db",
        "stop",
        CAURI_DATA_DIR=str(data_dir),
        CAURI_DATABASE_URL="postgresql://cauri:secret@db.example/cauri",
    )
    assert code == 1
    assert "CAURI_DATABASE_URL is set" in err
    assert "secret" not in out + err
    assert not (data_dir / "pgdata").exists()  # nothing was started there
