"""Issue 14: a session ends after CAURI_CONSOLE_IDLE_MINUTES without a request, after its
absolute lifetime, at sign-out, and when its account is disabled or given a new link; each
time the console sends back to the sign-in page."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import text

from cauri.kit.db import unit_of_work
from cauri.people import accounts
from cauri.people.realm import STAFF
from cauri.runtime import Runtime
from tests.console.builders import ConsoleClient, make_staff
from tests.support import scalar


async def _execute(runtime: Runtime, sql: str) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(text(sql))


async def assert_sent_to_sign_in(console: ConsoleClient) -> None:
    answer = await console.get("/console/")
    assert answer.status_code == 303 and answer.headers["location"] == "/console/sign-in"
    assert "cauri_console" not in console.cookies  # the dead cookie is cleared


async def test_idle_session_sends_back_to_sign_in(console: ConsoleClient, runtime: Runtime) -> None:
    assert runtime.settings.console_idle_minutes == 30
    await console.signed_in_as(await make_staff(runtime))
    await _execute(runtime, "UPDATE user_sessions SET last_seen_at = now() - interval '29 minutes'")
    assert (await console.get("/console/")).status_code == 200  # seen: the idle clock restarts
    seen = "SELECT now() - last_seen_at < interval '1 minute' FROM user_sessions"
    assert await scalar(runtime, seen)
    await _execute(runtime, "UPDATE user_sessions SET last_seen_at = now() - interval '31 minutes'")
    await assert_sent_to_sign_in(console)


async def test_session_ends_after_its_lifetime_however_busy(
    console: ConsoleClient, runtime: Runtime
) -> None:
    await console.signed_in_as(await make_staff(runtime))
    lifetime = "SELECT expires_at - created_at FROM user_sessions"
    assert await scalar(runtime, lifetime) == timedelta(hours=12)
    await _execute(runtime, "UPDATE user_sessions SET expires_at = now() - interval '1 second'")
    await assert_sent_to_sign_in(console)


async def test_disabled_account_is_refused_and_its_sessions_die(
    console: ConsoleClient, runtime: Runtime
) -> None:
    member = await make_staff(runtime)
    await console.signed_in_as(member)
    async with console.another() as second:
        await second.signed_in_as(member)
        async with unit_of_work(runtime.sessionmaker) as session:
            await accounts.disable(
                session, await accounts.get(session, STAFF, member.email), runtime.clock.now()
            )
        await assert_sent_to_sign_in(console)
        await assert_sent_to_sign_in(second)
    revoked = "SELECT bool_and(revoked_at IS NOT NULL) FROM user_sessions"
    assert await scalar(runtime, revoked)
    again = await console.sign_in(member)
    assert again.status_code == 401 and "mot de passe incorrect" in again.text


async def test_new_link_ends_the_sessions_and_the_totp_enrollment(
    console: ConsoleClient, runtime: Runtime
) -> None:
    admin = await make_staff(runtime, role="admin")
    await console.signed_in_as(admin)
    async with unit_of_work(runtime.sessionmaker) as session:
        await accounts.issue_link(
            session, await accounts.get(session, STAFF, admin.email), runtime.clock.now()
        )
    await assert_sent_to_sign_in(console)
    enrolled = "SELECT totp_secret IS NULL AND totp_enabled_at IS NULL FROM users"
    assert await scalar(runtime, enrolled)
    # The password still works; the role then asks for a new enrollment.
    answer = await console.sign_in(admin)
    assert answer.headers["location"] == "/console/two-factor"
