"""Issue 14: every console form carries a CSRF token; a missing or wrong one is a 403 page
and nothing is written (no attempt counted, no session, no link spent, no sign-out)."""

from __future__ import annotations

import httpx
import pytest

from cauri.runtime import Runtime
from tests.console.builders import NEW_PASSWORD, ConsoleClient, make_staff, welcome_path
from tests.support import scalar

NOTHING_WRITTEN = """SELECT (SELECT count(*) FROM sign_in_attempts)
    + (SELECT count(*) FROM user_sessions)
    + (SELECT count(*) FROM users WHERE last_sign_in_at IS NOT NULL)"""


def assert_refused(answer: httpx.Response) -> None:
    assert answer.status_code == 403
    assert "Ce formulaire a expiré ou ne vient pas de la console" in answer.text


@pytest.mark.parametrize("sent", [None, "", "forged", "\u00e9t\u00e9"])
async def test_sign_in_without_its_token_is_refused(
    console: ConsoleClient, runtime: Runtime, sent: str | None
) -> None:
    member = await make_staff(runtime)
    await console.csrf_of("/console/sign-in")  # the form cookie is set
    data = {"email": member.email, "password": member.password}
    answer = await console.post("/console/sign-in", data | ({} if sent is None else {"csrf": sent}))
    assert_refused(answer)
    assert "cauri_console" not in console.cookies
    assert await scalar(runtime, NOTHING_WRITTEN) == 0


async def test_sign_in_token_is_bound_to_its_cookie(
    console: ConsoleClient, runtime: Runtime
) -> None:
    """Someone else's valid pair does not pass with this browser's cookie."""
    member = await make_staff(runtime)
    async with console.another() as attacker:
        their_token = await attacker.csrf_of("/console/sign-in")
    await console.csrf_of("/console/sign-in")
    data = {"csrf": their_token, "email": member.email, "password": member.password}
    answer = await console.post("/console/sign-in", data)
    assert_refused(answer)
    # Without the cookie at all.
    console.cookies.clear()
    answer = await console.post("/console/sign-in", data)
    assert_refused(answer)
    assert await scalar(runtime, NOTHING_WRITTEN) == 0


async def test_sign_out_without_the_session_token_keeps_the_session(
    console: ConsoleClient, runtime: Runtime
) -> None:
    await console.signed_in_as(await make_staff(runtime))
    async with console.another() as other:
        form_token = await other.csrf_of("/console/sign-in")
    for data in ({}, {"csrf": "forged"}, {"csrf": form_token}):
        answer = await console.post("/console/sign-out", data)
        assert_refused(answer)
    assert await scalar(runtime, "SELECT count(*) FROM user_sessions WHERE revoked_at IS NULL") == 1
    assert (await console.get("/console/")).status_code == 200

    signed_out = await console.post(
        "/console/sign-out", {"csrf": await console.csrf_of("/console/")}
    )
    assert signed_out.status_code == 303 and signed_out.headers["location"] == "/console/sign-in"
    assert await scalar(runtime, "SELECT count(*) FROM user_sessions WHERE revoked_at IS NULL") == 0


async def test_code_without_the_session_token_is_not_checked(
    console: ConsoleClient, runtime: Runtime
) -> None:
    admin = await make_staff(runtime, role="admin")
    await console.sign_in(admin)
    answer = await console.post("/console/sign-in/code", {"code": admin.code()})
    assert_refused(answer)
    assert await scalar(runtime, "SELECT count(*) FROM sign_in_attempts") == 0
    assert await scalar(runtime, "SELECT totp_last_step FROM users") is None


async def test_welcome_without_its_token_spends_nothing(
    console: ConsoleClient, runtime: Runtime
) -> None:
    member = await make_staff(runtime, password=None)
    path = await welcome_path(runtime, member.email)
    await console.csrf_of(path)
    answer = await console.post(path, {"password": NEW_PASSWORD, "confirmation": NEW_PASSWORD})
    assert_refused(answer)
    assert await scalar(runtime, "SELECT used_at FROM sign_in_links") is None
    assert await scalar(runtime, "SELECT password_hash FROM users") is None
    assert await scalar(runtime, NOTHING_WRITTEN) == 0
