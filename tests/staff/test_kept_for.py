"""Console sessions and sign-in attempts are kept a month (who was signed in, a guessing
campaign) and no longer: the next session opened, the next attempt recorded, deletes those
past it, and nothing younger."""

from __future__ import annotations

from datetime import timedelta

from cauri.kit.db import unit_of_work
from cauri.people import accounts, sessions, throttle
from cauri.people.realm import STAFF
from cauri.runtime import Runtime
from tests.support import scalar


async def test_a_month_is_kept_and_what_is_older_goes(runtime: Runtime) -> None:
    now = runtime.clock.now()
    month_ago = now - timedelta(days=30, hours=13)  # its session expired 30 days ago and more
    recent = now - timedelta(days=29)
    async with unit_of_work(runtime.sessionmaker) as session:
        account = await accounts.create(
            session, STAFF, email="awa@cauri.example", role="viewer", now=now
        )
        for at in (month_ago, recent):
            await sessions.open_session(
                session, account, pending=None, ip="10.0.0.1", now=at, settings=runtime.settings
            )
            await throttle.record(session, STAFF, account.email, "10.0.0.1", at, succeeded=False)
    assert await scalar(runtime, "SELECT count(*) FROM user_sessions") == 2
    assert await scalar(runtime, "SELECT count(*) FROM sign_in_attempts") == 2

    async with unit_of_work(runtime.sessionmaker) as session:
        await sessions.open_session(
            session, account, pending=None, ip="10.0.0.2", now=now, settings=runtime.settings
        )
        await throttle.record(session, STAFF, account.email, "10.0.0.2", now, succeeded=True)
    kept_sessions = "SELECT array_agg(ip ORDER BY created_at) FROM user_sessions"
    kept_attempts = "SELECT array_agg(ip ORDER BY at) FROM sign_in_attempts"
    assert await scalar(runtime, kept_sessions) == ["10.0.0.1", "10.0.0.2"]
    assert await scalar(runtime, kept_attempts) == ["10.0.0.1", "10.0.0.2"]
    assert await scalar(runtime, "SELECT min(created_at) FROM user_sessions") == recent
