"""`alembic upgrade head` for the configured database, run by `cauri migrate` and `serve`."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).resolve().parents[3] / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["database_url"] = url
    return config


def upgrade(url: str) -> None:
    command.upgrade(alembic_config(url), "head")


async def upgrade_async(url: str) -> None:
    # Alembic's env.py runs its own event loop; keep it off the caller's.
    await asyncio.to_thread(upgrade, url)


@functools.cache
def head() -> str:
    """The revision the code expects the database at."""
    revision = ScriptDirectory.from_config(alembic_config("")).get_current_head()
    assert revision is not None
    return revision
