"""A live checkout session paid through an operator's network, end to end over real HTTP
(issue 25): a push operator (MTN MoMo: the customer approves on the phone while the page
waits) and a redirect operator (Wave: the customer approves on Wave's page and comes back to
Cauri's, which trusts nothing it is given). Each through the contract fake, as POST /payments
goes; each ends with the ledger reconciled (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from cauri.app import create_app
from cauri.calls.availability import MIN_EXCHANGES
from cauri.runtime import Runtime
from cauri.worker.runner import Worker
from tests.checkout.builders import event_types, fetch, open_session, page_path, submit
from tests.checkout.test_attempts import attempt_of
from tests.checkout.test_page_http import buttons
from tests.fakes.mtn_momo import MtnMomoFake
from tests.fakes.wave import WaveFake
from tests.operators.end_to_end.test_wave import API_KEY, CONNECTOR, WEBHOOK_SECRET
from tests.operators.end_to_end.test_wave import NUMBER as WAVE_NUMBER
from tests.operators.live import callbacks_received, connect, run
from tests.operators.mtn_live import NUMBER, mtn_fake, wire
from tests.payments.builders import merchant_available, pay
from tests.support import ServerThread, make_merchant, momo_body, with_settings

PUBLIC_URL = "https://pay.cauri.example"


@pytest.fixture
def mtn() -> Iterator[MtnMomoFake]:
    with mtn_fake() as fake:
        yield fake


@pytest.fixture
def wave(callbacks: ServerThread) -> Iterator[WaveFake]:
    url = f"{callbacks.base_url}/api/v1/operator-callbacks/{CONNECTOR}"
    with WaveFake(API_KEY, webhook_secret=WEBHOOK_SECRET, webhook_url=url) as fake:
        yield fake


async def test_a_push_operator_is_approved_on_the_phone_while_the_page_waits(
    client: httpx.AsyncClient,
    runtime: Runtime,
    worker: Worker,
    mtn: MtnMomoFake,
    callbacks: ServerThread,
) -> None:
    await wire(runtime, mtn)
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, livemode=True, amount=1000)
    assert checkout["url"] == f"{callbacks.base_url}/checkout/{checkout['reference']}"
    attempt = attempt_of(await submit(client, checkout, "mtn", phone_number=NUMBER[3:]))
    [request] = mtn.posts("collect")
    assert request.headers["x-reference-id"] == attempt
    assert request.body["payer"] == {"partyIdType": "MSISDN", "partyId": NUMBER}
    waiting = await client.get(f"{page_path(checkout)}/attempts/{attempt}")
    assert "Validez le paiement sur votre téléphone" in waiting.text
    await callbacks_received(runtime)
    await run(runtime, worker)
    found = await fetch(client, merchant, checkout["reference"], livemode=True)
    assert (found["status"], found["payment"]) == ("complete", attempt)
    assert await merchant_available(runtime, merchant.id, livemode=True) == 1000
    assert await event_types(runtime, checkout["reference"]) == ["checkout_session.completed"]
    receipt = await client.get(f"{page_path(checkout)}/attempts/{attempt}")
    assert "Paiement réussi" in receipt.text and "mode test" not in receipt.text.lower()


@pytest.fixture
async def https_client(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    """Cauri under an https public URL, as a live deployment is: Wave takes https return
    addresses only (tests/fakes/wave.py, from Wave's documentation)."""
    app = create_app(with_settings(runtime, public_url=PUBLIC_URL))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        yield client


async def test_a_redirect_operator_sends_the_customer_there_and_back(
    https_client: httpx.AsyncClient, runtime: Runtime, worker: Worker, wave: WaveFake
) -> None:
    client = https_client
    await connect(
        runtime,
        name=CONNECTOR,
        kind="wave",
        environment="production",
        base_url=wave.base_url,
        settings={"return_url": "https://shop.example/merci"},
        secrets={"api_key": wave.api_key, "webhook_secret": WEBHOOK_SECRET},
        operators=["wave_sn"],
    )
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, livemode=True, amount=1000, country="SN")
    sent = await submit(client, checkout, "wave_sn", phone_number=WAVE_NUMBER)
    assert sent.status_code == 303, sent.text
    [request] = wave.posts("checkout")
    back = f"{PUBLIC_URL}/checkout/{checkout['reference']}/return"
    assert (request.body["success_url"], request.body["error_url"]) == (back, back)
    [session] = wave.sessions.values()
    assert sent.headers["location"] == wave.view_session(session)["wave_launch_url"]
    # Coming back before Wave has said anything: the page shows the payment waiting.
    early = await client.get(httpx.URL(back).path, params={"status": "succeeded"})
    assert early.status_code == 303
    waiting = await client.get(early.headers["location"])
    assert "Validez le paiement" in waiting.text
    wave.pay(session.id)
    await callbacks_received(runtime)
    await run(runtime, worker)
    found = await fetch(client, merchant, checkout["reference"], livemode=True)
    assert found["status"] == "complete"
    shown = await client.get((await client.get(httpx.URL(back).path)).headers["location"])
    assert "Paiement réussi" in shown.text


async def test_a_mode_whose_route_is_closed_is_not_offered(
    client: httpx.AsyncClient, runtime: Runtime, mtn: MtnMomoFake
) -> None:
    await wire(runtime, mtn)
    merchant = await make_merchant(runtime)
    checkout = await open_session(client, merchant, livemode=True, amount=1000)
    choice = await client.get(page_path(checkout))
    assert buttons(choice.text) == ["mtn"]  # live: only what a route carries
    old_tab = await client.get(page_path(checkout), params={"operator": "mtn"})
    # MTN fails every request (500, before accepting anything): its route closes.
    mtn.callback_mode = "drop"
    mtn.fault("error_500", times=MIN_EXCHANGES, path="requesttopay")
    headers = merchant.headers(livemode=True)
    for _ in range(MIN_EXCHANGES):
        response = await pay(client, headers, momo_body(phone_number=NUMBER))
        assert response.status_code == 201, response.text
    page = await client.get(page_path(checkout))
    assert buttons(page.text) == []
    assert "Aucun moyen de paiement n&#39;est disponible" in page.text
    # The form of an old tab, posted anyway: refused, MTN not asked again.
    token = old_tab.text.split('name="csrf" value="')[1].split('"')[0]
    forced = await client.post(
        page_path(checkout),
        data={"operator": "mtn", "csrf": token, "phone_number": NUMBER},
        headers={"Cookie": old_tab.headers["set-cookie"].split(";")[0]},
    )
    assert forced.status_code == 422 and "n&#39;est pas proposé" in forced.text
    assert len(mtn.posts("collect")) == MIN_EXCHANGES
