"""Issue 14: sign-in is throttled per account (5 failures in 15 min) and per address (20),
across server processes (the attempts are in the database): then 429, a French page that says
when to try again, even with the right password."""

from __future__ import annotations

from datetime import timedelta

import httpx

from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.people import throttle
from cauri.people.realm import STAFF
from cauri.runtime import Runtime
from tests.console.builders import ConsoleClient, Member, make_staff


def assert_throttled(refused: httpx.Response) -> None:
    assert refused.status_code == 429
    assert "Trop de tentatives de connexion" in refused.text and "réessayez" in refused.text
    retry_after = refused.headers.get("retry-after")
    assert retry_after is not None and 0 < int(retry_after) <= 15 * 60 + 1


async def test_five_failures_lock_the_account_not_the_others(
    console: ConsoleClient, runtime: Runtime
) -> None:
    member = await make_staff(runtime)
    other = await make_staff(runtime, "koffi@cauri.example")
    for _ in range(throttle.ACCOUNT_LIMIT):
        assert (await console.sign_in(member, password="wrong password!")).status_code == 401
    refused = await console.sign_in(member)  # the right password, too late
    assert_throttled(refused)
    assert "cauri_console" not in console.cookies
    # Same case-insensitive account.
    shouting = Member(member.email.upper(), member.role, member.password, None)
    assert (await console.sign_in(shouting)).status_code == 429
    assert (await console.sign_in(other)).status_code == 303


async def test_twenty_failures_lock_the_address(console: ConsoleClient, runtime: Runtime) -> None:
    member = await make_staff(runtime)
    for attempt in range(throttle.ADDRESS_LIMIT):
        guess = Member(f"guess{attempt}@cauri.example", "viewer", "wrong password!", None)
        assert (await console.sign_in(guess)).status_code == 401
    refused = await console.sign_in(member)
    assert_throttled(refused)


async def test_wrong_codes_count_like_wrong_passwords(
    console: ConsoleClient, runtime: Runtime
) -> None:
    admin = await make_staff(runtime, role="admin")
    await console.sign_in(admin)
    for _ in range(throttle.ACCOUNT_LIMIT):
        assert (await console.give_code(admin.wrong_code())).status_code == 401
    refused = await console.give_code(admin.code())
    assert_throttled(refused)


async def test_the_window_passes_and_a_success_starts_the_account_over(
    runtime: Runtime, clock: ManualClock
) -> None:
    email, ip = "awa@cauri.example", "192.0.2.1"

    async def attempt(succeeded: bool) -> None:
        async with unit_of_work(runtime.sessionmaker) as session:
            await throttle.check(session, STAFF, email, ip, clock.now())
            await throttle.record(session, STAFF, email, ip, clock.now(), succeeded=succeeded)

    for _ in range(throttle.ACCOUNT_LIMIT - 1):
        await attempt(False)
        clock.advance(seconds=60)
    await attempt(True)  # the account's count starts again
    clock.advance(seconds=1)
    first_of_five = clock.now()
    for _ in range(throttle.ACCOUNT_LIMIT):
        await attempt(False)
    async with unit_of_work(runtime.sessionmaker) as session:
        try:
            await throttle.check(session, STAFF, email, ip, clock.now())
        except throttle.Throttled as refused:
            assert refused.retry_at == first_of_five + throttle.WINDOW
        else:
            raise AssertionError("not throttled")
    clock.advance(throttle.WINDOW.total_seconds() + 1)
    async with unit_of_work(runtime.sessionmaker) as session:
        await throttle.check(session, STAFF, email, ip, clock.now())
    assert timedelta(minutes=15) == throttle.WINDOW
