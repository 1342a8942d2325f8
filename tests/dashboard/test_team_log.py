"""Issue 26: the team's audit log (owners): its members' actions with who, when, before and
after, searched by action and period, exported as CSV (the export audited); never another
team's entries, never the staff's."""

from __future__ import annotations

import csv
import io

from cauri.audit.actor import Actor
from cauri.kit.db import unit_of_work
from cauri.runtime import Runtime
from cauri.team import actions
from tests.console.builders import ConsoleClient, make_member
from tests.support import make_merchant, scalar

LOG = "/dashboard/team/log"


async def _invite(runtime: Runtime, merchant_id: str, by: Actor, email: str) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        await actions.invite(session, runtime, by, merchant_id, email=email, role="viewer")


async def test_the_team_log_shows_the_team_s_own_entries_and_exports_them(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    shop, other = await make_merchant(runtime), await make_merchant(runtime, name="Autre")
    owner = await make_member(runtime, shop.id, "o@shop.example", "owner")
    stranger = await make_member(runtime, other.id, "o@other.example", "owner")
    ids = {
        email: await scalar(runtime, "SELECT id FROM users WHERE email = :e", e=email)
        for email in (owner.email, stranger.email)
    }
    await _invite(runtime, shop.id, Actor.member(owner.email, ids[owner.email]), "v@shop.example")
    await _invite(
        runtime, other.id, Actor.member(stranger.email, ids[stranger.email]), "v@other.example"
    )
    await _invite(runtime, shop.id, Actor.cli(), "staff-made@shop.example")  # the staff's
    await dashboard.signed_in_as(owner)

    page = await dashboard.get(LOG)
    assert page.status_code == 200
    assert 'id="log-total">Entrées trouvées : 1' in page.text
    assert "team.invite" in page.text and "v@shop.example" in page.text
    assert "other.example" not in page.text and "staff-made" not in page.text
    assert "(tableau de bord)" in page.text
    none = await dashboard.get(f"{LOG}?action=payment.refund")
    assert 'id="log-total">Entrées trouvées : 0' in none.text
    assert (await dashboard.get(f"{LOG}?from=hier")).status_code == 422

    download = await dashboard.get(f"{LOG}/csv?action=team.invite")
    assert download.status_code == 200 and download.headers["content-type"].startswith("text/csv")
    [row] = list(csv.DictReader(io.StringIO(download.text)))
    assert (row["actor_name"], row["action"]) == (owner.email, "team.invite")
    exported = "SELECT count(*) FROM audit_log WHERE action = 'dashboard.export'"
    assert await scalar(runtime, exported) == 1
    # The export is the team's too: the log now shows it.
    assert 'id="log-total">Entrées trouvées : 2' in (await dashboard.get(LOG)).text


async def test_only_owners_read_the_team_log(runtime: Runtime, dashboard: ConsoleClient) -> None:
    shop = await make_merchant(runtime)
    await dashboard.signed_in_as(await make_member(runtime, shop.id, "f@shop.example", "finance"))
    for address in (LOG, f"{LOG}/csv"):
        refused = await dashboard.get(address)
        assert refused.status_code == 403 and "gérer l&#39;équipe" in refused.text
