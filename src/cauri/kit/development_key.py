"""The development key: CAURI_SECRET_KEY for a service that serves on loopback only and was
given none. `cauri serve` makes it once in the data directory (mode 0600); every process
started there (servers, workers, the command line) then uses it, so that what one sealed
(webhook signing secrets, connector credentials, TOTP secrets) the others can open. A
deployment sets its own key; serving off loopback without one is refused."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

FILE_NAME = "secret_key"


def read(data_dir: Path) -> str | None:
    try:
        return (data_dir / FILE_NAME).read_text().strip() or None
    except FileNotFoundError:
        return None


def made(data_dir: Path) -> tuple[str, bool]:
    """The key, made now if there was none; whether it was made now."""
    kept = read(data_dir)
    if kept is not None:
        return kept, False
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    # Created with its mode, never readable by others even for an instant; a second process
    # making it at the same moment fails here and reads the first one's.
    try:
        descriptor = os.open(data_dir / FILE_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return made(data_dir)
    with os.fdopen(descriptor, "w") as file:
        file.write(key + "\n")
    return key, True
