"""Issue 26: the merchant's settings (owners): the business name and support email its
customers see on the checkout pages, its logo (PNG or JPEG only, re-encoded; never SVG), who
bears the commission (read only), and a payout account asked for that the staff validate;
each change audited."""

from __future__ import annotations

import io
import re

import httpx
from PIL import Image

from cauri.runtime import Runtime
from tests.checkout.builders import open_session, page_path
from tests.console.builders import ConsoleClient, make_member, make_staff
from tests.payouts.builders import set_payout_account
from tests.support import MerchantKeys, make_merchant, scalar

SETTINGS = "/dashboard/settings"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


def _image(kind: str, size: tuple[int, int] = (800, 400)) -> bytes:
    written = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(written, format=kind)
    return written.getvalue()


async def _csrf(client: ConsoleClient) -> str:
    found = _CSRF.search((await client.get(SETTINGS)).text)
    assert found is not None
    return found.group(1)


async def _upload(client: ConsoleClient, name: str, data: bytes, kind: str) -> httpx.Response:
    return client._remember(
        await client.http.post(
            f"{SETTINGS}/logo",
            data={"csrf": await _csrf(client)},
            files={"logo": (name, data, kind)},
            headers=client._headers(),
        )
    )


async def _owner(runtime: Runtime, dashboard: ConsoleClient) -> MerchantKeys:
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@shop.example", "owner"))
    return merchant


async def test_name_support_email_and_logo_reach_the_checkout_page(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await _owner(runtime, dashboard)
    saved = await dashboard.post(
        f"{SETTINGS}/profile",
        {
            "csrf": await _csrf(dashboard),
            "name": "Boutique Awa",
            "support_email": "aide@awa.example",
        },
    )
    assert saved.status_code == 303, saved.text
    sent = _image("JPEG")
    assert (await _upload(dashboard, "logo.jpg", sent, "image/jpeg")).status_code == 303
    stored = await dashboard.get(f"{SETTINGS}/logo.png")
    assert stored.status_code == 200 and stored.headers["content-type"] == "image/png"
    with Image.open(io.BytesIO(stored.content)) as image:
        assert image.format == "PNG" and max(image.size) == 512  # re-encoded, made smaller
    checkout = await open_session(client, merchant)
    page = await client.get(page_path(checkout))
    assert "Paiement à Boutique Awa" in page.text
    assert 'href="mailto:aide@awa.example"' in page.text
    found = re.search(r'<img src="(/logos/[^"]+)"', page.text)
    assert found is not None
    public = await client.get(found.group(1).replace("&amp;", "&"))
    assert public.status_code == 200 and public.content == stored.content
    trail = await scalar(runtime, "SELECT string_agg(action, ' ' ORDER BY id) FROM audit_log")
    assert trail == "merchant.profile merchant.logo"
    removed = await dashboard.post(
        f"{SETTINGS}/logo", {"csrf": await _csrf(dashboard), "remove": "1"}
    )
    assert removed.status_code == 303
    assert (await dashboard.get(f"{SETTINGS}/logo.png")).status_code == 404
    assert 'id="merchant-logo"' not in (await client.get(page_path(checkout))).text


async def test_only_a_png_or_a_jpeg_is_a_logo_and_a_bad_profile_is_refused(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    await _owner(runtime, dashboard)
    for name, data, kind in (
        ("logo.svg", SVG, "image/svg+xml"),
        ("logo.gif", _image("GIF"), "image/gif"),
        ("logo.png", b"\x89PNG\r\n\x1a\nnot really", "image/png"),
        ("logo.png", b"", "image/png"),
        ("big.png", b"\x89PNG" + b"0" * 200_001, "image/png"),
    ):
        refused = await _upload(dashboard, name, data, kind)
        assert refused.status_code == 422 and 'id="action-refused"' in refused.text, name
    for fields in ({"name": ""}, {"name": "x", "support_email": "pas une adresse"}):
        answer = await dashboard.post(
            f"{SETTINGS}/profile", {"csrf": await _csrf(dashboard), **fields}
        )
        assert answer.status_code == 422 and 'class="field-error"' in answer.text, fields
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0
    assert await scalar(runtime, "SELECT logo IS NULL FROM merchants") is True


async def test_a_payout_account_asked_for_waits_for_the_staff(
    runtime: Runtime, dashboard: ConsoleClient, console: ConsoleClient
) -> None:
    merchant = await _owner(runtime, dashboard)
    await set_payout_account(runtime, merchant.id, "22997110000", validated=True)
    asked = await dashboard.post(
        f"{SETTINGS}/payout-account",
        {"csrf": await _csrf(dashboard), "phone_number": "22996220000", "operator": "mtn"},
    )
    assert asked.status_code == 303
    page = (await dashboard.get(SETTINGS)).text
    assert 'id="payout-request"' in page and "22996220000" in page
    # Until the staff validate it, the validated account stays the one paid.
    assert await scalar(runtime, "SELECT payout_phone FROM merchants") == "22997110000"
    await console.signed_in_as(await make_staff(runtime, role="admin"))
    admin = await console.get(f"/console/merchants/{merchant.id}/actions")
    assert 'id="payout-request"' in admin.text
    found = _CSRF.search(admin.text)
    assert found is not None
    validated = await console.post(
        f"/console/merchants/{merchant.id}/actions/payout-account",
        {
            "csrf": found.group(1),
            "phone_number": "22996220000",
            "operator": "mtn",
            "validated": "on",
        },
    )
    assert validated.status_code in (200, 303), validated.text
    row = (
        "SELECT payout_phone || ' ' || payout_validated || ' ' || (payout_request_phone IS NULL) "
        "FROM merchants"
    )
    assert await scalar(runtime, row) == "22996220000 true true"
    refused = await dashboard.post(
        f"{SETTINGS}/payout-account",
        {"csrf": await _csrf(dashboard), "phone_number": "123", "operator": "nope"},
    )
    assert refused.status_code == 422


async def test_only_owners_change_settings(runtime: Runtime, dashboard: ConsoleClient) -> None:
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "f@shop.example", "finance")
    )
    refused = await dashboard.get(SETTINGS)
    assert refused.status_code == 403


async def test_review_a_small_file_declaring_a_huge_image_is_refused_before_decoding(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    """Review finding 3: a 12,000 px square of one colour weighs little as a file but a
    gigabyte once decoded, in the event loop."""
    await _owner(runtime, dashboard)
    written = io.BytesIO()
    Image.new("1", (12_000, 12_000)).save(written, format="PNG")
    huge = written.getvalue()
    assert len(huge) < 200_000
    refused = await _upload(dashboard, "huge.png", huge, "image/png")
    assert refused.status_code == 422 and "4096 pixels" in refused.text
    assert await scalar(runtime, "SELECT logo IS NULL FROM merchants") is True
