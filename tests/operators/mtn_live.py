"""Live mode wired to MTN's contract fake, as the staff would wire it to MTN's sandbox: a
connector account of kind `mtn_momo` (sandbox, EUR) and routes for mtn's three operations,
with Cauri's callback route served over real HTTP for the fake to call back."""

from __future__ import annotations

from cauri.runtime import Runtime
from tests.fakes.mtn_momo import MtnMomoFake
from tests.operators.live import connect

CONNECTOR = "mtn-sandbox"
API_USER = "5f1c4a2e-8d3b-4c6a-9e7f-0a1b2c3d4e5f"
API_KEY = "mtn-api-key-of-the-sandbox-user"
SUBSCRIPTION_KEYS = {"collection": "collection-primary-key", "disbursement": "disb-primary-key"}
SECRETS = {
    "api_user": API_USER,
    "api_key": API_KEY,
    "collection_subscription_key": SUBSCRIPTION_KEYS["collection"],
    "disbursement_subscription_key": SUBSCRIPTION_KEYS["disbursement"],
}
NUMBER = "22997123456"


def mtn_fake() -> MtnMomoFake:
    return MtnMomoFake(api_user=API_USER, api_key=API_KEY, subscription_keys=SUBSCRIPTION_KEYS)


async def wire(runtime: Runtime, fake: MtnMomoFake, operator: str = "mtn") -> None:
    """`cauri connectors add … --kind mtn_momo` and `cauri routes set`, in process."""
    await connect(
        runtime,
        name=CONNECTOR,
        kind="mtn_momo",
        base_url=fake.base_url,
        settings={"target_environment": "sandbox", "currency": "EUR"},
        secrets=SECRETS,
        operators=[operator],
    )
