"""Issue 26: a merchant's first owner is invited by the payment company (`cauri merchants
invite`), sets a password on the one-time link's page, enrolls TOTP (owners must), and lands
on the dashboard's home; the dashboard's door and the console's never open each other."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pyotp

from cauri.runtime import Runtime
from tests.console.builders import NEW_PASSWORD, ConsoleClient, cli, make_member, make_staff
from tests.support import make_merchant, scalar

_SECRET = re.compile(r'id="totp-secret">([A-Z2-7 ]+)<')


async def _invite(database_url: str, merchant_id: str, email: str, role: str = "owner") -> str:
    shown = (
        await cli(
            database_url,
            "merchants",
            "invite",
            merchant_id,
            "--email",
            email,
            "--role",
            role,
            "--json",
        )
    ).json()
    assert shown["email"] == email.lower() and shown["role"] == role
    assert shown["merchant_id"] == merchant_id
    return urlsplit(shown["link"]).path


async def _welcomed(dashboard: ConsoleClient, path: str) -> str:
    """The link's page posted with a new password: the next step of the sign-in follows."""
    assert path.startswith("/dashboard/welcome/")
    csrf = await dashboard.csrf_of(path)
    answer = await dashboard.post(
        path, {"csrf": csrf, "password": NEW_PASSWORD, "confirmation": NEW_PASSWORD}
    )
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


async def test_an_invited_owner_sets_a_password_enrolls_totp_and_sees_the_balances(
    dashboard: ConsoleClient, runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime, name="Boutique Awa")
    path = await _invite(database_url, merchant.id, "Awa@Boutique.example")
    # The owner must enroll a second factor before anything else.
    assert await _welcomed(dashboard, path) == "/dashboard/two-factor"
    enrollment = await dashboard.get("/dashboard/two-factor")
    found = _SECRET.search(enrollment.text)
    assert found is not None, enrollment.text
    code = pyotp.TOTP(found.group(1).replace(" ", "")).at(dashboard.clock.now())
    csrf = await dashboard.csrf_of("/dashboard/two-factor")
    answer = await dashboard.post("/dashboard/two-factor", {"csrf": csrf, "code": code})
    assert answer.headers["location"] == "/dashboard/"

    home = await dashboard.get("/dashboard/")
    assert home.status_code == 200, home.text
    assert "Boutique Awa" in home.text and 'id="balances"' in home.text
    assert "awa@boutique.example · propriétaire" in home.text
    assert 'id="test-mode"' not in home.text
    test_home = await dashboard.get("/dashboard/test")
    assert test_home.status_code == 200 and 'id="test-mode"' in test_home.text
    # The link served once.
    again = await dashboard.get(path)
    assert again.status_code == 404
    audited = "SELECT count(*) FROM audit_log WHERE action = 'merchant.invite_member'"
    assert await scalar(runtime, audited) == 1


async def test_a_viewer_needs_no_second_factor(
    dashboard: ConsoleClient, runtime: Runtime, database_url: str
) -> None:
    merchant = await make_merchant(runtime)
    path = await _invite(database_url, merchant.id, "lecteur@boutique.example", "viewer")
    assert await _welcomed(dashboard, path) == "/dashboard/"
    assert (await dashboard.get("/dashboard/")).status_code == 200


async def test_without_a_session_the_dashboard_sends_to_its_sign_in_page(
    dashboard: ConsoleClient,
) -> None:
    for path in ("/dashboard/", "/dashboard/test"):
        answer = await dashboard.get(path)
        assert answer.status_code == 303 and answer.headers["location"] == "/dashboard/sign-in"
    page = await dashboard.get("/dashboard/sign-in")
    assert page.status_code == 200 and "propriétaire de votre compte marchand" in page.text


async def test_a_staff_session_never_opens_the_dashboard_nor_a_members_the_console(
    dashboard: ConsoleClient, console: ConsoleClient, runtime: Runtime, database_url: str
) -> None:
    staff = await make_staff(runtime, "ali@cauri.example", "viewer")
    await console.signed_in_as(staff)
    merchant = await make_merchant(runtime)
    await _welcomed(dashboard, await _invite(database_url, merchant.id, "m@b.example", "viewer"))

    # Each cookie carried to the other door, as a hand-made request would.
    dashboard.cookies["cauri_dashboard"], console.cookies["cauri_console"] = (
        console.cookies["cauri_console"],
        dashboard.cookies["cauri_dashboard"],
    )
    assert (await dashboard.get("/dashboard/")).headers["location"] == "/dashboard/sign-in"
    assert (await console.get("/console/")).headers["location"] == "/console/sign-in"
    # Nor does the staff's password open the dashboard: the same email is another account.
    await make_staff(runtime, "m@b.example", "viewer")
    answer = await dashboard.sign_in(staff)
    assert answer.status_code == 401


async def test_a_staff_link_is_worth_nothing_on_the_dashboards_welcome_page(
    dashboard: ConsoleClient, runtime: Runtime, database_url: str
) -> None:
    await make_staff(runtime, "ali@cauri.example", "viewer", password=None)
    link = (await cli(database_url, "staff", "link", "ali@cauri.example", "--json")).json()
    token = urlsplit(link["link"]).path.rsplit("/", 1)[1]
    assert (await dashboard.get(f"/dashboard/welcome/{token}")).status_code == 404


async def test_an_invitation_names_a_merchant_that_exists_and_a_role_of_a_team(
    runtime: Runtime, database_url: str
) -> None:
    unknown = await cli(database_url, "merchants", "invite", "mer_nobody", "--email", "a@b.example")
    assert unknown.exit_code != 0
    merchant = await make_merchant(runtime)
    wrong = await cli(
        database_url,
        "merchants",
        "invite",
        merchant.id,
        "--email",
        "a@b.example",
        "--role",
        "admin",
    )
    assert wrong.exit_code != 0 and "owner, developer, finance ou viewer" in wrong.stderr
    assert await scalar(runtime, "SELECT count(*) FROM users WHERE realm = 'merchant'") == 0


async def test_the_console_invites_an_owner_and_the_staff_reset_one(
    console: ConsoleClient, dashboard: ConsoleClient, runtime: Runtime, database_url: str
) -> None:
    """The staff console's same action as `cauri merchants invite`, and an owner's reset
    (`cauri merchants link-member`): a new link that ends the password and the second
    factor, audited."""
    admin = await make_staff(runtime, "ali@cauri.example", "admin")
    await console.signed_in_as(admin)
    merchant = await make_merchant(runtime)
    page = f"/console/merchants/{merchant.id}/actions"
    csrf = await console.csrf_of(page)
    shown = await console.post(
        f"{page}/team", {"csrf": csrf, "email": "o@b.example", "role": "owner"}
    )
    assert shown.status_code == 200, shown.text
    found = re.search(r'id="new-link" class="wrap">([^<]+)<', shown.text)
    assert found is not None, shown.text
    assert await _welcomed(dashboard, urlsplit(found.group(1)).path) == "/dashboard/two-factor"

    args = ("merchants", "link-member", merchant.id, "--email", "o@b.example", "--json")
    reset = (await cli(database_url, *args)).json()
    assert await _welcomed(dashboard.another(), urlsplit(reset["link"]).path) == (
        "/dashboard/two-factor"
    )
    logged = "SELECT string_agg(action, ',' ORDER BY id) FROM audit_log"
    assert await scalar(runtime, logged) == "merchant.invite_member,merchant.link_member"
    unknown = await cli(
        database_url, "merchants", "link-member", merchant.id, "--email", "x@b.example"
    )
    assert unknown.exit_code != 0


async def test_a_viewer_may_ask_for_a_second_factor_and_then_signs_in_with_it(
    dashboard: ConsoleClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    viewer = await make_member(runtime, merchant.id, "v@shop.example")
    await dashboard.signed_in_as(viewer)
    home = await dashboard.get("/dashboard/")
    assert 'id="start-two-factor"' in home.text
    csrf = await dashboard.csrf_of("/dashboard/")
    started = await dashboard.post("/dashboard/two-factor/start", {"csrf": csrf})
    assert started.headers["location"] == "/dashboard/two-factor"
    found = _SECRET.search((await dashboard.get("/dashboard/two-factor")).text)
    assert found is not None
    secret = found.group(1).replace(" ", "")
    code = pyotp.TOTP(secret).at(dashboard.clock.now())
    csrf = await dashboard.csrf_of("/dashboard/two-factor")
    answer = await dashboard.post("/dashboard/two-factor", {"csrf": csrf, "code": code})
    assert answer.headers["location"] == "/dashboard/"
    assert 'id="start-two-factor"' not in (await dashboard.get("/dashboard/")).text
    # The next sign-in asks for a code.
    other = dashboard.another()
    async with other:
        assert (await other.sign_in(viewer)).headers["location"] == "/dashboard/sign-in/code"
