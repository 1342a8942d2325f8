"""The development key: CAURI_SECRET_KEY for a service that serves on loopback only and was
given none. `cauri serve` makes it once in the data directory (mode 0600); every process
started there (servers, workers, the command line) then uses it, so that what one sealed
(webhook signing secrets, connector credentials, TOTP secrets) the others can open. A
deployment sets its own key; serving off loopback without one is refused."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

FILE_NAME = "secret_key"


class UnsafeKeyFile(Exception):
    """A key file this process must not trust: someone else could have written or read it."""


def read(data_dir: Path) -> str | None:
    """The key kept in `data_dir`, None if there is none (or it is empty). Only a regular
    file of this user's that nobody else may read or write, never through a link: a key
    planted by another account would seal every secret with a key it knows."""
    path = data_dir / FILE_NAME
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as error:  # a symbolic link (ELOOP), or unreadable
        raise UnsafeKeyFile(f"{path} cannot be read safely ({error.strerror}).") from None
    with os.fdopen(descriptor) as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_uid != os.getuid():
            raise UnsafeKeyFile(f"{path} is not a file of this user's.")
        if status.st_mode & 0o077:
            raise UnsafeKeyFile(f"{path} may be read or written by others (chmod 600 it).")
        return file.read().strip() or None


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
        kept = read(data_dir)
        if kept is None:  # empty: a process died between making and writing it
            raise UnsafeKeyFile(f"{data_dir / FILE_NAME} is empty: delete it.") from None
        return kept, False
    with os.fdopen(descriptor, "w") as file:
        file.write(key + "\n")
    return key, True
