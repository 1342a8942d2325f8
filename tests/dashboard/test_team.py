"""Issue 26: owners run their team from the dashboard: a teammate invited (a one-time link)
who then signs in, a role changed, a member disabled or given a new link; the team keeps an
active owner; another merchant's member is a 404; a viewer is refused the page; all audited."""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

import httpx

from cauri.runtime import Runtime
from tests.console.builders import NEW_PASSWORD, ConsoleClient, make_member
from tests.support import make_merchant, scalar

PAGE = "/dashboard/team"
_LINK = re.compile(r'id="sign-in-link" class="wrap">([^<]+)<')


async def _post(dashboard: ConsoleClient, action: str, **fields: str) -> httpx.Response:
    csrf = await dashboard.csrf_of(PAGE)
    return await dashboard.post(f"{PAGE}{action}", {"csrf": csrf, **fields})


async def _member_id(runtime: Runtime, email: str) -> str:
    return str(await scalar(runtime, "SELECT id FROM users WHERE email = :e", e=email))


async def test_an_owner_invites_a_teammate_who_signs_in(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@s.example", "owner"))
    invited = await _post(dashboard, "", email="dev@s.example", role="developer")
    assert invited.status_code == 200, invited.text
    found = _LINK.search(invited.text)
    assert found is not None, invited.text
    path = urlsplit(html.unescape(found.group(1))).path
    teammate = dashboard.another()
    csrf = await teammate.csrf_of(path)
    answer = await teammate.post(
        path, {"csrf": csrf, "password": NEW_PASSWORD, "confirmation": NEW_PASSWORD}
    )
    assert answer.headers["location"] == "/dashboard/"
    assert "dev@s.example · développeur" in (await teammate.get("/dashboard/")).text
    assert await scalar(runtime, "SELECT merchant_id FROM users WHERE email = 'dev@s.example'") == (
        merchant.id
    )


async def test_roles_change_members_are_disabled_and_the_team_keeps_an_owner(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@s.example", "owner"))
    await make_member(runtime, merchant.id, "v@s.example")
    viewer = await _member_id(runtime, "v@s.example")
    changed = await _post(dashboard, f"/{viewer}/role", role="finance")
    assert changed.status_code == 200 and 'id="action-done"' in changed.text
    assert await scalar(runtime, "SELECT role FROM users WHERE email = 'v@s.example'") == "finance"
    disabled = await _post(dashboard, f"/{viewer}/disable")
    assert disabled.status_code == 200
    assert await scalar(
        runtime, "SELECT disabled_at IS NOT NULL FROM users WHERE email = 'v@s.example'"
    )
    # The only owner cannot be demoted (nor disable themselves: no form for it, and refused).
    owner = await _member_id(runtime, "o@s.example")
    kept = await _post(dashboard, f"/{owner}/role", role="viewer")
    assert kept.status_code == 409 and "au moins un propriétaire" in html.unescape(kept.text)
    kept = await _post(dashboard, f"/{owner}/disable")
    assert kept.status_code == 409
    actions = "SELECT string_agg(action || ' ' || actor_kind, ',' ORDER BY id) FROM audit_log"
    assert await scalar(runtime, actions) == "team.set_role member,team.disable member"


async def test_another_merchants_member_is_a_404_and_a_viewer_is_refused_the_page(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    await make_member(runtime, other.id, "x@autre.example", "owner")
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@s.example", "owner"))
    theirs = await _member_id(runtime, "x@autre.example")
    for action in (f"/{theirs}/disable", f"/{theirs}/link", f"/{theirs}/role"):
        assert (await _post(dashboard, action, role="viewer")).status_code == 404, action
    assert "x@autre.example" not in (await dashboard.get(PAGE)).text
    viewer = dashboard.another()
    await viewer.signed_in_as(await make_member(runtime, merchant.id, "v@s.example"))
    assert (await viewer.get(PAGE)).status_code == 403


async def test_a_new_link_resets_the_password_and_second_factor(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@s.example", "owner"))
    await make_member(runtime, merchant.id, "f@s.example", "finance")
    finance = await _member_id(runtime, "f@s.example")
    answer = await _post(dashboard, f"/{finance}/link")
    assert _LINK.search(answer.text) is not None
    reset = "SELECT totp_enabled_at IS NULL FROM users WHERE email = 'f@s.example'"
    assert await scalar(runtime, reset)
