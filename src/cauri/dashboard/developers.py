"""The developers' page of each environment: the API keys (by their hint; a new one shown
once), made, rotated with a grace period and revoked; the webhook endpoint (its address, its
signing secret rotated and shown once, a test event) and the log of its deliveries, each
resent at will; the API's last refusals of the account's requests (what, never a body).
Every change goes through the staff's own audited actions, with the member
as actor. Test keys are the developers' and owners'; live keys the owners' alone; nothing
live changes while the merchant is not active."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.dashboard.acting import actor, caller
from cauri.dashboard.auth import SignedIn, check, checked_csrf, require
from cauri.dashboard.rendering import DashboardRoute, render
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.db import attempt
from cauri.kit.errors import CauriError, InvalidRequest, NotFound
from cauri.kit.ids import parse_uuid
from cauri.kit.pagination import Page
from cauri.merchants import api_errors
from cauri.merchants.caller import Caller
from cauri.merchants.keys import GRACES
from cauri.models import ApiKey, WebhookDelivery
from cauri.signin.forms import posted
from cauri.staff import actions
from cauri.team.roles import Permission, allows
from cauri.webhooks import service as webhooks

# The log's last deliveries shown (the API's `GET /webhooks/deliveries` pages them all).
DELIVERIES = 20
API_ERRORS = 20

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)
Developer = Annotated[SignedIn, Depends(require(Permission.DEVELOP))]
CSRF = [Depends(checked_csrf)]


def _keys_permission(livemode: bool) -> Permission:
    return Permission.LIVE_KEYS if livemode else Permission.DEVELOP


async def _keys(session: AsyncSession, merchant_id: str, livemode: bool) -> list[ApiKey]:
    statement = (
        select(ApiKey)
        .where(ApiKey.merchant_id == merchant_id, ApiKey.livemode == livemode)
        .order_by(ApiKey.id.desc())
    )
    return list((await session.scalars(statement)).all())


@dataclass(frozen=True)
class Shown:
    """What an action leaves to show: its refusal, or what it made (once), or what it did."""

    refusal: CauriError | None = None
    new_key: str | None = None
    new_secret: str | None = None
    done: str | None = None


async def _page(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    livemode: bool,
    shown: Shown = Shown(),
) -> Response:
    refusal = shown.refusal
    yours = Caller(member.merchant_id, livemode)
    deliveries, _ = await webhooks.list_deliveries(session, yours, Page(1, DELIVERIES), None)
    context = {
        "livemode": livemode,
        "keys": await _keys(session, member.merchant_id, livemode),
        "may_manage_keys": allows(member.role, _keys_permission(livemode)),
        "graces": GRACES,
        "endpoint": await webhooks.endpoint(session, yours),
        "deliveries": deliveries,
        "api_errors": await api_errors.latest(session, member.merchant_id, livemode, API_ERRORS),
        "refusal": refusal,
        "new_key": shown.new_key,
        "new_secret": shown.new_secret,
        "done": shown.done,
    }
    status = refusal.http_status if refusal else 200
    return render(request, "dashboard/developers.html", context, status)


async def _key_action(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    livemode: bool,
    change: Callable[[], Awaitable[str | ApiKey]],
) -> Response:
    """A key action: refused for a role without the environment's keys (403 page), else its
    outcome on the page (a new key shown once, or the refusal saying why)."""
    check(member, _keys_permission(livemode))
    outcome = await attempt(session, change)
    if isinstance(outcome, CauriError):
        return await _page(request, member, session, livemode, Shown(refusal=outcome))
    new_key = outcome if isinstance(outcome, str) else None
    return await _page(request, member, session, livemode, Shown(new_key=new_key))


async def _webhook_action(
    request: Request,
    member: SignedIn,
    session: AsyncSession,
    livemode: bool,
    change: Callable[[], Awaitable[Shown]],
) -> Response:
    outcome = await attempt(session, change)
    if isinstance(outcome, CauriError):
        outcome = Shown(refusal=outcome)
    return await _page(request, member, session, livemode, outcome)


def _register(mode_path: str, livemode: bool) -> None:
    path = mode_path + "/developers"

    @router.get(path)
    async def developers(request: Request, member: Developer, session: SessionDep) -> Response:
        return await _page(request, member, session, livemode)

    @router.post(path + "/keys", dependencies=CSRF)
    async def create_key(
        request: Request, member: Developer, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        async def create() -> str:
            merchant = (await caller(session, member, livemode)).merchant_id
            return await actions.create_key(
                session, runtime, actor(member), merchant, livemode=livemode, expires_at=None
            )

        return await _key_action(request, member, session, livemode, create)

    @router.post(path + "/keys/rotate", dependencies=CSRF)
    async def rotate_keys(
        request: Request, member: Developer, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        grace = (await posted(request)).get("grace", "")

        async def rotate() -> str:
            if grace not in GRACES:
                raise InvalidRequest.field("grace", f"Délai inconnu : {grace}.")
            merchant = (await caller(session, member, livemode)).merchant_id
            return await actions.rotate_keys(
                session, runtime, actor(member), merchant, livemode=livemode, grace=GRACES[grace][1]
            )

        return await _key_action(request, member, session, livemode, rotate)

    @router.post(path + "/keys/{key_id}/revoke", dependencies=CSRF)
    async def revoke_key(
        request: Request, member: Developer, session: SessionDep, runtime: RuntimeDep, key_id: str
    ) -> Response:
        owned = {str(key.id) for key in await _keys(session, member.merchant_id, livemode)}
        if key_id not in owned:  # another merchant's, or the other environment's
            raise NotFound(f"Clé introuvable : {key_id}.")

        async def revoke() -> ApiKey:
            return await actions.revoke_key(session, runtime, actor(member), key_id)

        return await _key_action(request, member, session, livemode, revoke)


def _register_webhooks(mode_path: str, livemode: bool) -> None:
    path = mode_path + "/developers/webhook"

    @router.post(path, dependencies=CSRF)
    async def set_endpoint(
        request: Request, member: Developer, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        """An empty address stops the environment's notifications."""
        url = (await posted(request)).get("url") or None

        async def set_url() -> Shown:
            merchant = (await caller(session, member, livemode)).merchant_id
            await actions.set_webhook_endpoint(
                session, runtime, actor(member), merchant, livemode=livemode, url=url
            )
            return Shown(done="Adresse des notifications enregistrée.")

        return await _webhook_action(request, member, session, livemode, set_url)

    @router.post(path + "/secret", dependencies=CSRF)
    async def rotate_secret(
        request: Request, member: Developer, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        async def rotate() -> Shown:
            merchant = (await caller(session, member, livemode)).merchant_id
            secret = await actions.rotate_webhook_secret(
                session, runtime, actor(member), merchant, livemode=livemode
            )
            return Shown(new_secret=secret)

        return await _webhook_action(request, member, session, livemode, rotate)

    @router.post(path + "/test", dependencies=CSRF)
    async def send_test(
        request: Request, member: Developer, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        async def send() -> Shown:
            result = await webhooks.send_test(
                session, runtime, await caller(session, member, livemode)
            )
            if not result.sent:
                return Shown(done="Événement de test enregistré : aucune adresse où l'envoyer.")
            return Shown(done=f"Événement de test envoyé à {result.url}.")

        return await _webhook_action(request, member, session, livemode, send)

    @router.post(path + "/deliveries/{delivery_id}/resend", dependencies=CSRF)
    async def resend(
        request: Request,
        member: Developer,
        session: SessionDep,
        runtime: RuntimeDep,
        delivery_id: str,
    ) -> Response:
        key = parse_uuid(delivery_id)
        found = None if key is None else await session.get(WebhookDelivery, key)
        if found is None or (found.merchant_id, found.livemode) != (member.merchant_id, livemode):
            raise NotFound("Livraison introuvable.")

        async def again() -> Shown:
            await caller(session, member, livemode)
            await actions.resend_webhook_delivery(session, runtime, actor(member), delivery_id)
            return Shown(done="Livraison renvoyée.")

        return await _webhook_action(request, member, session, livemode, again)


for _mode_path, _livemode in (("", True), ("/test", False)):
    _register(_mode_path, _livemode)
    _register_webhooks(_mode_path, _livemode)
