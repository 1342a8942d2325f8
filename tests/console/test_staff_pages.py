"""Issue 14, staff management from the console over real HTTP: an administrator creates an
account and sees its one-time link on that answer only (never in an address), and the link
works; a new link likewise; disabling asks for a confirmation and ends the person's sessions
at once. Other roles, and forms without their CSRF token, are refused with nothing
written."""

from __future__ import annotations

import re

import httpx

from cauri.runtime import Runtime
from tests.console.builders import ConsoleClient, make_staff
from tests.console.test_actions import audit_entries, post_form, signed_in
from tests.console.test_read_pages import _text
from tests.console.test_session_ends import assert_sent_to_sign_in
from tests.support import scalar

STAFF = "/console/staff"
NEW = "nouveau@cauri.example"
WRITTEN = """SELECT (SELECT count(*) FROM users WHERE disabled_at IS NOT NULL)
    + (SELECT count(*) FROM users) + (SELECT count(*) FROM sign_in_links)
    + (SELECT count(*) FROM audit_log)"""


def _link(answer: httpx.Response) -> str:
    found = re.search(r'id="new-link"[^>]*>([^<]+)<', answer.text)
    assert found is not None, answer.text
    return found.group(1)


async def _welcome_answers(console: ConsoleClient, link: str) -> int:
    async with console.another() as newcomer:
        return (await newcomer.get(link)).status_code


async def test_created_account_gets_its_link_once_and_it_works(
    console: ConsoleClient, runtime: Runtime
) -> None:
    await signed_in(console, runtime, "admin", "ali")
    answer = await post_form(console, STAFF, STAFF, {"email": NEW, "role": "support"})
    assert answer.status_code == 200, answer.text  # the link is on this answer, no redirect
    link = _link(answer)
    assert link.startswith(str(console.http.base_url) + "/console/welcome/")
    assert f"Lien de connexion de {NEW}" in _text(answer)
    token = link.rsplit("/", 1)[1]
    assert token not in (await console.get(STAFF)).text  # shown once
    assert await _welcome_answers(console, link) == 200
    assert await audit_entries(runtime, "staff.create") == [("staff", "ali@cauri.example", True)]
    audit = await scalar(
        runtime, "SELECT string_agg(row_to_json(audit_log)::text, ' ') FROM audit_log"
    )
    assert token not in audit

    # A new link replaces it: the first stops working, the new one works.
    again = await post_form(console, STAFF, f"{STAFF}/link", {"email": NEW})
    assert again.status_code == 200, again.text
    assert await _welcome_answers(console, link) == 404
    assert await _welcome_answers(console, _link(again)) == 200
    assert await audit_entries(runtime, "staff.link") == [("staff", "ali@cauri.example", True)]


async def test_disabling_asks_a_confirmation_and_ends_the_sessions(
    console: ConsoleClient, runtime: Runtime
) -> None:
    member = await make_staff(runtime, "vi@cauri.example", "viewer")
    async with console.another() as theirs:
        await theirs.signed_in_as(member)
        await signed_in(console, runtime, "admin", "ali")
        unconfirmed = await post_form(console, STAFF, f"{STAFF}/disable", {"email": member.email})
        assert unconfirmed.status_code == 422
        assert "Cochez la case de confirmation" in _text(unconfirmed)
        assert (await theirs.get("/console/")).status_code == 200

        done = await post_form(
            console, STAFF, f"{STAFF}/disable", {"email": member.email, "confirm": "on"}
        )
        assert done.status_code == 303, done.text
        assert "Compte désactivé" in _text(await console.get(done.headers["location"]))
        await assert_sent_to_sign_in(theirs)
    assert await audit_entries(runtime, "staff.disable") == [("staff", "ali@cauri.example", True)]


async def test_other_roles_and_forms_without_csrf_are_refused(
    console: ConsoleClient, runtime: Runtime
) -> None:
    await make_staff(runtime, "vi@cauri.example", "viewer")
    async with console.another() as admin:
        await signed_in(admin, runtime, "admin", "ali")
        for action, data in (
            (STAFF, {"email": NEW, "role": "admin"}),
            (f"{STAFF}/link", {"email": "vi@cauri.example"}),
            (f"{STAFF}/disable", {"email": "vi@cauri.example", "confirm": "on"}),
        ):
            written = await scalar(runtime, WRITTEN)
            answer = await admin.post(action, data)  # no CSRF token
            assert answer.status_code == 403 and "Ce formulaire a expiré" in _text(answer)
            assert await scalar(runtime, WRITTEN) == written
    await signed_in(console, runtime, "finance", "fa")
    assert (await console.get(STAFF)).status_code == 403
    written = await scalar(runtime, WRITTEN)
    for action in (STAFF, f"{STAFF}/link", f"{STAFF}/disable"):
        data = {"email": "vi@cauri.example", "role": "admin", "confirm": "on"}
        answer = await post_form(console, "/console/", action, data)
        assert answer.status_code == 403 and "gérer le personnel" in _text(answer)
    assert await scalar(runtime, WRITTEN) == written
