"""Staff accounts made for tests, and a console client over real HTTP.

The console's cookies are Secure. Chromium keeps them on http://127.0.0.1 (loopback counts as
secure), but Python's cookie jar never sends a Secure cookie over http: the client keeps its
own cookies from each Set-Cookie and sends them itself."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from http.cookies import SimpleCookie
from typing import Any

import httpx
import pyotp

from cauri.kit.clock import Clock, SystemClock
from cauri.kit.db import unit_of_work
from cauri.people import accounts, totp
from cauri.people.realm import MERCHANT, STAFF, Realm
from cauri.runtime import Runtime
from tests.cli import CliResult
from tests.conftest import TEST_SECRET_KEY
from tests.foundation.builders import run_cli
from tests.support import ServerThread

PASSWORD = "correct horse battery staple"
NEW_PASSWORD = "une phrase de passe neuve"  # what a one-time link's page is given
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass(frozen=True)
class Member:
    email: str
    role: str
    password: str
    secret: str | None  # the TOTP secret, when enrolled

    def code(self, at: datetime | None = None, steps_ahead: int = 0) -> str:
        """A code of the step `steps_ahead` after `at` (now): the next step's code is still
        accepted, and is not the one a sign-in just used."""
        assert self.secret is not None
        moment = (at or datetime.now().astimezone()) + timedelta(seconds=30 * steps_ahead)
        return pyotp.TOTP(self.secret).at(moment)

    def wrong_code(self) -> str:
        return "000000" if self.code() != "000000" else "111111"


async def make_staff(
    runtime: Runtime,
    email: str = "awa@cauri.example",
    role: str = "viewer",
    *,
    password: str | None = PASSWORD,
    enrolled: bool | None = None,
) -> Member:
    """An account with a password; enrolled in TOTP if its role needs it (or `enrolled`)."""
    return await make_account(runtime, STAFF, email, role, password=password, enrolled=enrolled)


async def make_member(
    runtime: Runtime, merchant_id: str, email: str, role: str = "viewer"
) -> Member:
    """A member of the merchant's team, with a password; enrolled in TOTP if its role needs
    it."""
    return await make_account(runtime, MERCHANT, email, role, merchant_id=merchant_id)


async def make_account(
    runtime: Runtime,
    realm: Realm,
    email: str,
    role: str,
    *,
    merchant_id: str | None = None,
    password: str | None = PASSWORD,
    enrolled: bool | None = None,
) -> Member:
    now = runtime.clock.now()
    with_totp = enrolled if enrolled is not None else realm.requires_totp(role)
    secret = totp.new_secret() if with_totp else None
    async with unit_of_work(runtime.sessionmaker) as session:
        account = await accounts.create(
            session, realm, email=email, role=role, now=now, merchant_id=merchant_id
        )
        if password is not None:
            await accounts.set_password(session, account, password)
        if secret is not None:
            account.totp_secret = totp.seal(runtime.settings.secret_key, account.id, secret)
            account.totp_enabled_at = now
    return Member(account.email, role, password or "", secret)


async def cli(database_url: str, *args: str) -> CliResult:
    """The CLI with the servers' secret key: it unseals the accounts' TOTP secrets (`--as
    EMAIL --totp CODE`)."""
    return await run_cli(database_url, *args, env_vars={"CAURI_SECRET_KEY": TEST_SECRET_KEY})


async def welcome_path(runtime: Runtime, email: str, at: datetime | None = None) -> str:
    """The page of a new one-time link of the account, issued `at` (now)."""
    async with unit_of_work(runtime.sessionmaker) as session:
        account = await accounts.get(session, STAFF, email)
        link = await accounts.issue_link(session, account, at or runtime.clock.now())
    return f"/console/welcome/{link.token}"


class ConsoleClient:
    """A browser of the console without JavaScript: its cookies, its forms' CSRF tokens."""

    def __init__(self, base_url: str, clock: Clock | None = None, prefix: str = "/console") -> None:
        """`clock`: the served app's, for the TOTP codes it will accept (the real time if
        none is given); `prefix`: the door's (the dashboard's pages sign in alike)."""
        self.prefix = prefix
        self.http = httpx.AsyncClient(base_url=base_url, timeout=30)
        self.clock = clock or SystemClock()
        self.cookies: dict[str, str] = {}

    @classmethod
    def of(cls, server: ServerThread) -> ConsoleClient:
        return cls(server.base_url, server.clock)

    def another(self) -> ConsoleClient:
        """Another person's client of the same console."""
        return ConsoleClient(str(self.http.base_url), self.clock, self.prefix)

    async def __aenter__(self) -> ConsoleClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.http.aclose()

    def _remember(self, response: httpx.Response) -> httpx.Response:
        for line in response.headers.get_list("set-cookie"):
            parsed = SimpleCookie()
            parsed.load(line)
            for name, morsel in parsed.items():
                if morsel["max-age"] == "0" or morsel.value == "":
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value
        return response

    def _headers(self) -> dict[str, str]:
        cookie = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        return {"Cookie": cookie} if cookie else {}

    async def get(self, path: str) -> httpx.Response:
        return self._remember(await self.http.get(path, headers=self._headers()))

    async def post(self, path: str, data: dict[str, Any]) -> httpx.Response:
        return self._remember(await self.http.post(path, data=data, headers=self._headers()))

    async def csrf_of(self, path: str) -> str:
        """The CSRF token of the form on the page at `path`."""
        page = await self.get(path)
        assert page.status_code == 200, page.text
        found = _CSRF.search(page.text)
        assert found is not None, page.text
        return found.group(1)

    async def sign_in(self, member: Member, password: str | None = None) -> httpx.Response:
        """Posts the sign-in form, as the page gives it."""
        csrf = await self.csrf_of(f"{self.prefix}/sign-in")
        data = {"csrf": csrf, "email": member.email, "password": password or member.password}
        return await self.post(f"{self.prefix}/sign-in", data)

    async def give_code(self, code: str, path: str | None = None) -> httpx.Response:
        path = path or f"{self.prefix}/sign-in/code"
        csrf = await self.csrf_of(path)
        return await self.post(path, {"csrf": csrf, "code": code})

    async def signed_in_as(self, member: Member) -> None:
        """Signs in all the way (the code of the next step if the account has TOTP)."""
        answer = await self.sign_in(member)
        assert answer.status_code == 303, answer.text
        if member.secret is not None:
            assert answer.headers["location"] == f"{self.prefix}/sign-in/code"
            answer = await self.give_code(member.code(self.clock.now(), steps_ahead=1))
        assert answer.headers["location"] == f"{self.prefix}/", answer.text
