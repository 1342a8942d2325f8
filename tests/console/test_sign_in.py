"""Issue 14, signing in to the console over real HTTP: passwords, TOTP, one-time links,
cookies, security headers, roles. (CSRF, throttling and session ends: their own files.)"""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from cauri.app import create_app
from cauri.people import accounts
from cauri.runtime import Runtime
from tests.console.builders import (
    NEW_PASSWORD,
    PASSWORD,
    ConsoleClient,
    Member,
    make_staff,
    welcome_path,
)
from tests.support import scalar, with_settings

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def assert_secured(response: httpx.Response) -> None:
    assert response.headers["content-security-policy"] == CSP
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["referrer-policy"] == "same-origin"


async def test_viewer_signs_in_with_a_password(console: ConsoleClient, runtime: Runtime) -> None:
    member = await make_staff(runtime, "Awa@Cauri.example", "viewer")
    signed = await console.sign_in(member)
    assert signed.status_code == 303 and signed.headers["location"] == "/console/"
    cookie = next(
        line for line in signed.headers.get_list("set-cookie") if line.startswith("cauri_console=")
    )
    attributes = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "secure", "samesite=strict", "path=/console"} <= attributes

    home = await console.get("/console/")
    assert home.status_code == 200
    assert "awa@cauri.example" in home.text and "lecture seule" in home.text
    assert 'href="/console/"' in home.text and 'href="/console/staff"' not in home.text
    assert await scalar(runtime, "SELECT last_sign_in_at IS NOT NULL FROM users")
    # Stored: the digest of the cookie's token, never the token.
    token = console.cookies["cauri_console"]
    stored = "SELECT count(*) FROM user_sessions WHERE token_hash = :token"
    assert await scalar(runtime, stored, token=token) == 0


async def test_wrong_password_and_unknown_account_get_the_same_answer(
    console: ConsoleClient, runtime: Runtime
) -> None:
    member = await make_staff(runtime)
    wrong = await console.sign_in(member, password="not the password at all")
    unknown = await console.sign_in(Member("nobody@cauri.example", "viewer", PASSWORD, None))
    no_password_yet = await make_staff(runtime, "koffi@cauri.example", password=None)
    unset = await console.sign_in(no_password_yet, password="")
    for answer in (wrong, unknown, unset):
        assert answer.status_code == 401
        assert "Adresse e-mail ou mot de passe incorrect." in answer.text
        assert_secured(answer)
    assert "cauri_console" not in console.cookies
    assert await scalar(runtime, "SELECT count(*) FROM user_sessions") == 0
    assert await scalar(runtime, "SELECT count(*) FROM sign_in_attempts") == 3


async def test_admin_signs_in_with_a_code_never_reused(
    console: ConsoleClient, runtime: Runtime
) -> None:
    admin = await make_staff(runtime, "admin@cauri.example", "admin")
    first = await console.sign_in(admin)
    assert first.headers["location"] == "/console/sign-in/code"
    # The password alone opens nothing.
    held = await console.get("/console/")
    assert held.status_code == 303 and held.headers["location"] == "/console/sign-in"

    await console.sign_in(admin)
    wrong = await console.give_code(admin.wrong_code())
    assert wrong.status_code == 401 and "Code incorrect" in wrong.text
    code = admin.code(steps_ahead=1)
    passed = await console.give_code(code)
    assert passed.status_code == 303 and passed.headers["location"] == "/console/"
    home = await console.get("/console/")
    assert home.status_code == 200 and 'href="/console/staff"' in home.text

    async with console.another() as other:
        await other.sign_in(admin)
        replayed = await other.give_code(code)
        assert replayed.status_code == 401
        assert (await other.get("/console/")).headers["location"] == "/console/sign-in"


async def test_one_time_link_sets_the_password_once(
    console: ConsoleClient, runtime: Runtime
) -> None:
    member = await make_staff(runtime, "sika@cauri.example", "support", password=None)
    path = await welcome_path(runtime, member.email)

    csrf = await console.csrf_of(path)
    short = await console.post(path, {"csrf": csrf, "password": "court", "confirmation": "court"})
    assert short.status_code == 422 and "12" in short.text
    assert await scalar(runtime, "SELECT used_at FROM sign_in_links") is None

    welcomed = await console.post(
        path, {"csrf": csrf, "password": NEW_PASSWORD, "confirmation": NEW_PASSWORD}
    )
    assert welcomed.status_code == 303 and welcomed.headers["location"] == "/console/"
    assert (await console.get("/console/")).status_code == 200

    spent = await console.get(path)
    assert spent.status_code == 404 and "plus valable" in spent.text
    async with console.another() as other:
        signed = await other.sign_in(member, password=NEW_PASSWORD)
        assert signed.headers["location"] == "/console/"


async def test_expired_link_is_refused(console: ConsoleClient, runtime: Runtime) -> None:
    member = await make_staff(runtime, password=None)
    past = runtime.clock.now() - accounts.LINK_LIFETIME - timedelta(seconds=1)
    answer = await console.get(await welcome_path(runtime, member.email, past))
    assert answer.status_code == 404 and "plus valable" in answer.text
    assert (await console.get("/console/welcome/not-a-token")).status_code == 404


async def test_viewer_is_refused_an_admin_page(console: ConsoleClient, runtime: Runtime) -> None:
    await console.signed_in_as(await make_staff(runtime, role="viewer"))
    refused = await console.get("/console/staff")
    assert refused.status_code == 403
    assert "Votre rôle (lecture seule) ne permet pas de gérer le personnel." in refused.text
    assert_secured(refused)


async def test_every_console_response_is_secured_and_outside_the_api(
    console: ConsoleClient, runtime: Runtime
) -> None:
    sign_in = await console.get("/console/sign-in")
    redirected = await console.get("/console/")
    stylesheet = await console.get("/console/static/console.css")
    missing = await console.get("/console/nowhere")
    posted = await console.post("/console/nowhere", {})
    for response in (sign_in, redirected, stylesheet, missing, posted):
        assert_secured(response)
    assert redirected.status_code == 303
    assert stylesheet.headers["content-type"].startswith("text/css")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")
    assert "Page introuvable" in missing.text and posted.status_code == 404
    # Unknown query parameters are no API error: browsers add what they like.
    assert (await console.get("/console/sign-in?utm_source=mail")).status_code == 200
    document = (await console.http.get("/api/v1/openapi.json")).json()
    assert not [path for path in document["paths"] if path.startswith("/console")]


@pytest.mark.parametrize("prefix", ["/console", "/dashboard"])
async def test_without_a_secret_key_the_sign_in_says_what_to_set_not_a_looping_500(
    runtime: Runtime, prefix: str
) -> None:
    """Issue 27, friction 2: a service started without CAURI_SECRET_KEY (only possible
    outside `cauri serve`, which makes one on loopback and refuses to start without one
    elsewhere) answers 503 with what to set and to restart, and no link back to itself."""
    app = create_app(with_settings(runtime, secret_key=None))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://127.0.0.1") as browser:
        answer = await browser.get(f"{prefix}/sign-in")
    assert answer.status_code == 503
    assert "CAURI_SECRET_KEY" in answer.text and "redémarrez" in answer.text
    assert f'href="{prefix}/sign-in"' not in answer.text
