"""Issue 14, connectors and routes from the console over real HTTP: an administrator adds an
MTN MoMo account (against MTN's contract fake), checks it, edits it keeping its credentials
and routes an operation to it; its credentials appear in no page and no audit entry. A
viewer reads the lists and is refused every form; a form without its CSRF token is
refused. Each refusal writes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from cauri.runtime import Runtime
from tests.connectors.builders import cauri
from tests.console.builders import ConsoleClient
from tests.console.test_actions import audit_entries, post_form, signed_in
from tests.console.test_read_pages import _text
from tests.fakes.mtn_momo import MtnMomoFake
from tests.operators.mtn_live import SECRETS, mtn_fake
from tests.support import scalar

LIST = "/console/connectors"
NAME = "mtn-bj"
WRITTEN = """SELECT (SELECT count(*) FROM connector_accounts)
    + (SELECT count(*) FROM operator_routes) + (SELECT count(*) FROM audit_log)"""


@pytest.fixture
def fake() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        yield fake


def _account_form(fake: MtnMomoFake, secrets: dict[str, str]) -> dict[str, str]:
    return {
        "kind": "mtn_momo",
        "name": NAME,
        "environment": "sandbox",
        "base_url": fake.base_url,
        "setting.target_environment": "sandbox",
        "setting.currency": "EUR",
    } | {f"secret.{name}": value for name, value in secrets.items()}


def assert_no_secret(text: str) -> None:
    for value in SECRETS.values():
        assert value not in text


async def test_admin_adds_checks_edits_and_routes_a_connector(
    console: ConsoleClient, runtime: Runtime, fake: MtnMomoFake, database_url: str
) -> None:
    await signed_in(console, runtime, "admin", "ali")
    seen: list[httpx.Response] = []

    form = await console.get(f"{LIST}/new?kind=mtn_momo")
    assert form.status_code == 200 and 'type="password"' in form.text
    added = await post_form(console, LIST, LIST, _account_form(fake, SECRETS))
    assert added.status_code == 303, added.text
    page = await console.get(added.headers["location"])
    seen.append(page)
    text = _text(page)
    assert "Connecteur enregistré." in text and NAME in text
    assert "api_key : défini" in text and "jamais vérifié" in text

    checked = await post_form(console, LIST, f"{LIST}/{NAME}/check")
    assert checked.status_code == 303, checked.text
    page = await console.get(checked.headers["location"])
    seen.append(page)
    assert "réussie" in _text(page) and "authenticated on collection" in _text(page)

    # Edited with every credential left empty but a wrong API key: the others are kept.
    edit = await console.get(f"{LIST}/{NAME}/edit")
    seen.append(edit)
    assert ": défini" in _text(edit)
    edited = await post_form(
        console, LIST, LIST, _account_form(fake, {"api_key": "wrong"}) | {"editing": "1"}
    )
    assert edited.status_code == 303, edited.text
    await post_form(console, LIST, f"{LIST}/{NAME}/check")
    page = await console.get(LIST)
    seen.append(page)
    assert "échec" in _text(page)
    # The right key again, the rest still kept: the check passes.
    await post_form(
        console, LIST, LIST, _account_form(fake, {"api_key": SECRETS["api_key"]}) | {"editing": "1"}
    )
    await post_form(console, LIST, f"{LIST}/{NAME}/check")
    assert "réussie" in _text(await console.get(LIST))

    routed = await post_form(
        console,
        LIST,
        "/console/routes",
        {"operator": "mtn", "action": "collect", "connector": NAME},
    )
    assert routed.status_code == 303, routed.text
    page = await console.get(routed.headers["location"])
    seen.append(page)
    assert "Route enregistrée." in _text(page)
    listed = await cauri(database_url, "routes", "list", "--json")
    assert json.loads(listed.stdout) == [
        {"operator": "mtn", "collect": NAME, "disburse": None, "refund": None}
    ]

    for answer in seen:
        assert_no_secret(answer.text)
    audit = await scalar(
        runtime, "SELECT string_agg(row_to_json(audit_log)::text, ' ') FROM audit_log"
    )
    assert_no_secret(audit)
    assert "wrong" not in audit
    for action in ("connector.add", "connector.check", "route.set"):
        entries = await audit_entries(runtime, action)
        assert entries and all(e == ("staff", "ali@cauri.example", True) for e in entries)


async def test_a_refused_account_is_not_kept_nor_its_secrets_shown(
    console: ConsoleClient, runtime: Runtime, fake: MtnMomoFake
) -> None:
    await signed_in(console, runtime, "admin", "ali")
    missing = {k: v for k, v in SECRETS.items() if k != "api_key"}
    answer = await post_form(console, LIST, LIST, _account_form(fake, missing))
    assert answer.status_code == 422
    assert "Secret manquant pour le type mtn_momo : api_key" in _text(answer)
    assert_no_secret(answer.text)
    assert await scalar(runtime, WRITTEN) == 0


async def test_an_edit_moving_the_base_url_asks_for_the_credentials_again(
    console: ConsoleClient, runtime: Runtime, fake: MtnMomoFake
) -> None:
    """Issue 23: an administrator cannot point the stored credentials at a host of theirs
    (then press « vérifier »): a new base URL needs every credential typed again, and a
    production account speaks https."""
    await signed_in(console, runtime, "admin", "ali")
    added = await post_form(console, LIST, LIST, _account_form(fake, SECRETS))
    assert added.status_code == 303, added.text
    before = await scalar(runtime, "SELECT row_to_json(c)::text FROM connector_accounts c")
    moved = _account_form(fake, {}) | {"editing": "1", "base_url": "https://attacker.example"}
    refused = await post_form(console, LIST, LIST, moved)
    assert refused.status_code == 422
    assert "saisissez-les de nouveau" in _text(refused) and "api_key" in _text(refused)
    assert_no_secret(refused.text)
    plain = _account_form(fake, SECRETS) | {
        "editing": "1",
        "environment": "production",
        "base_url": "http://attacker.example",
    }
    refused = await post_form(console, LIST, LIST, plain)
    assert refused.status_code == 422 and "https:// obligatoire" in _text(refused)
    assert_no_secret(refused.text)
    after = await scalar(runtime, "SELECT row_to_json(c)::text FROM connector_accounts c")
    assert after == before
    # Typed again, the credentials go with the new address.
    again = _account_form(fake, SECRETS) | {"editing": "1", "base_url": fake.base_url + "/"}
    assert (await post_form(console, LIST, LIST, again)).status_code == 303


async def test_a_viewer_reads_the_lists_and_is_refused_every_form(
    console: ConsoleClient, runtime: Runtime, fake: MtnMomoFake
) -> None:
    async with console.another() as admin:
        await signed_in(admin, runtime, "admin", "ali")
        await post_form(admin, LIST, LIST, _account_form(fake, SECRETS))
    await signed_in(console, runtime, "viewer", "vi")
    page = await console.get(LIST)
    assert page.status_code == 200 and NAME in page.text
    assert "Vérifier" not in page.text and "Enregistrer la route" not in page.text
    assert_no_secret(page.text)
    written = await scalar(runtime, WRITTEN)
    for action, data in (
        (LIST, _account_form(fake, SECRETS) | {"name": "other"}),
        (f"{LIST}/{NAME}/check", {}),
        ("/console/routes", {"operator": "mtn", "action": "collect", "connector": NAME}),
    ):
        answer = await post_form(console, LIST, action, data)
        assert answer.status_code == 403, action
        assert "ne permet pas" in _text(answer)
    assert (await console.get(f"{LIST}/new?kind=mtn_momo")).status_code == 403
    assert await scalar(runtime, WRITTEN) == written
    assert await scalar(runtime, "SELECT checked_at FROM connector_accounts") is None


async def test_a_form_without_its_csrf_token_is_refused(
    console: ConsoleClient, runtime: Runtime, fake: MtnMomoFake
) -> None:
    await signed_in(console, runtime, "admin", "ali")
    answer = await console.post(LIST, _account_form(fake, SECRETS))
    assert answer.status_code == 403
    assert "Ce formulaire a expiré" in _text(answer)
    assert await scalar(runtime, WRITTEN) == 0
