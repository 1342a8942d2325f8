"""CAURI_DATABASE_URL naming several servers as libpq does (issue 29: failover), and the
engine outliving its connections: the API, a worker's LISTEN and the command line all reach
the database through such a URL, and a request after every backend was terminated answers,
never hangs."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from cauri.cli.database import where
from cauri.config import Settings
from cauri.kit.db import engine_url
from cauri.runtime import Runtime
from cauri.worker.runner import LISTENER_NAME
from tests.conftest import TEST_SECRET_KEY
from tests.foundation.builders import run_cli
from tests.support import free_port, make_merchant, scalar
from tests.worker.builders import eventually
from tools.chaos_campaign.fleet import Fleet

FAILOVER = "postgresql://cauri:s%40cret@db1:5432,db2:5433/cauri?target_session_attrs=read-write"
# Each backend waited for until it has exited (5 s at most): its socket is closed by then.
TERMINATE_THE_OTHERS = (
    "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
)
LISTENER = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND application_name = :name"
)


def test_libpqs_host_list_becomes_the_dialects_host_parameters() -> None:
    url = engine_url(FAILOVER)
    assert url.drivername == "postgresql+asyncpg"
    assert (url.username, url.password, url.database) == ("cauri", "s@cret", "cauri")
    assert url.query == {"host": ("db1:5432", "db2:5433"), "target_session_attrs": "read-write"}
    _, arguments = url.get_dialect()().create_connect_args(url)
    assert arguments["host"] == ["db1", "db2"] and arguments["port"] == [5432, 5433]
    assert arguments["target_session_attrs"] == "read-write"


def test_serve_says_where_the_database_is_without_its_password() -> None:
    shown = where(Settings(database_url=FAILOVER))
    assert shown.startswith("postgresql://cauri:***@/cauri?host=db1%3A5432&host=db2%3A5433")
    assert "cret" not in shown


def test_a_listed_host_without_a_port_is_on_postgresqls() -> None:
    assert engine_url("postgres://u@db1,db2:6000/x").query["host"] == ("db1:5432", "db2:6000")


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u@127.0.0.1:5432/x",
        "postgresql+asyncpg://u:p@/x?host=/run/postgresql",
        "postgresql+asyncpg://u@/x?host=db1:5432&host=db2:5433",  # the dialect's own form
    ],
)
def test_one_host_or_the_dialects_form_is_read_as_before(url: str) -> None:
    assert engine_url(url) == make_url(url.replace("postgresql://", "postgresql+asyncpg://"))


@pytest.mark.parametrize("hosts", ["[::1]:5432,db2", "db1,,db2"])
def test_a_host_list_the_dialect_cannot_take_is_refused_clearly(hosts: str) -> None:
    with pytest.raises(ValueError, match="host"):
        engine_url(f"postgresql://u@{hosts}/x")


def _several_hosts(database_url: str) -> str:
    """The test database behind a first server that refuses connections, as a failed primary
    does: libpq's form, as an operator writes it."""
    url = make_url(database_url)
    listed = f"127.0.0.1:{free_port()},{url.host}:{url.port or 5432}"
    return f"postgresql://{url.username}@{listed}/{url.database}?target_session_attrs=read-write"


async def test_the_api_a_worker_and_the_cli_run_on_it_and_outlive_terminated_backends(
    runtime: Runtime, database_url: str, tmp_path: Path
) -> None:
    if make_url(database_url).host is None:
        pytest.skip("the test database is on a socket, not on a host and port")
    url = _several_hosts(database_url)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAURI_")}
    settings = {
        "CAURI_DATABASE_URL": url,
        "CAURI_DATA_DIR": str(tmp_path),
        "CAURI_SECRET_KEY": TEST_SECRET_KEY,
        "CAURI_WORKER_POLL_INTERVAL": "0.2",
    }
    fleet = Fleet(environment | settings, tmp_path, workers=1)
    merchant = await make_merchant(runtime)
    try:
        await fleet.start()  # `serve` migrated the database through that URL first
        first_listener = await eventually(lambda: scalar(runtime, LISTENER, name=LISTENER_NAME))
        async with httpx.AsyncClient(
            base_url=fleet.base_url, headers=merchant.headers(), timeout=10
        ) as client:

            async def pay(n: int) -> httpx.Response:
                body = {"amount": 1000, "operator": "mtn", "phone_number": "22997000000"}
                return await client.post("/api/v1/payments", json=body | {"external_id": f"o{n}"})

            assert (await pay(0)).status_code == 201
            assert await scalar(runtime, TERMINATE_THE_OTHERS) >= 2
            # The pool hands out no connection it knows closed (no round trip needed to know
            # it): every request is made, none answers 500, none hangs (the client's timeout).
            answers = [await pay(n) for n in range(1, 4)]
            assert [answer.status_code for answer in answers] == [201, 201, 201]

        async def listening_again() -> bool:
            pid = await scalar(runtime, LISTENER, name=LISTENER_NAME)
            return pid not in (None, first_listener)

        await eventually(listening_again, timeout=10)
        assert fleet.crashed() == []
    finally:
        fleet.stop()
    checked = await run_cli(url, "ledger", "check", "--json")
    assert checked.json()["passed"] is True
