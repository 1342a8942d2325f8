"""The customer's checkout page (`url` of a checkout session, issue 25): plain forms and
links, no script needed, French.

1. `GET /checkout/{ref}`: the merchant, the amount, and the modes open for the chosen
   country (a GET form: the country, then a button per mode).
2. `GET /checkout/{ref}?operator=…`: that mode's form (the number; the OTP with how to get
   it, where the mode needs one; the card holder, where the session lacks it), posted to
   `POST /checkout/{ref}` with the contract's field names.
3. The attempt's page, `GET /checkout/{ref}/attempts/{payment}`: it refreshes itself while
   the payment waits ("validez le paiement sur votre téléphone"), then shows the receipt and
   the way back to the merchant, or the failure and another try. A card (or an operator's
   own page) is paid there, and comes back through `/checkout/{ref}/return`.

CSRF: a form's token is bound to a random nonce in a SameSite=Strict cookie and to the
session (an HMAC of the reference under the nonce); a page of another site can neither read
nor send that cookie. The session's reference itself (128 random bits) is what grants access
to the page, as a payment link's code does elsewhere.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.catalogue.prediction import predict
from cauri.checkout.service import (
    MAX_ATTEMPTS,
    AttemptForm,
    checkout_sessions,
    international_number,
)
from cauri.http import RuntimeDep, SessionDep
from cauri.kit import phone, public_url
from cauri.kit.errors import Conflict, InvalidRequest, NotFound, PaymentFailed
from cauri.kit.failures import failure_fields
from cauri.kit.ids import parse_uuid
from cauri.kit.tokens import same
from cauri.models import CheckoutSession, InstallmentPlan, Merchant, Payment
from cauri.models.checkout import SessionStatus
from cauri.operators import catalogue
from cauri.operators.catalogue import COUNTRY_NAMES, PaymentMode
from cauri.operators.protocol import Outcome
from cauri.plans.service import plans
from cauri.runtime import Runtime
from cauri.web.language import ENGLISH, FIELD_HINTS, OTP_HINT, language_of
from cauri.web.otp_help import otp_instructions
from cauri.web.rendering import PageRoute, format_amount, merchant_shown, page

router = APIRouter(route_class=PageRoute, include_in_schema=False)

PREFIX = "/checkout"
SCRIPT_PATH = f"{PREFIX}/static/checkout.js"
SCRIPT = (Path(__file__).parent / "static" / "checkout.js").read_bytes()
NONCE_COOKIE = "cauri_checkout"
CSRF_FIELD = "csrf"
# How often the attempt's page asks again while the payment waits (seconds).
REFRESH_EVERY = 3
# How long the receipt shows before the customer goes on to the merchant's return_url.
RECEIPT_SECONDS = 8


def nonce_of(request: Request) -> str:
    return request.cookies.get(NONCE_COOKIE) or secrets.token_urlsafe(32)


def form_token(nonce: str, reference: str) -> str:
    return hmac.new(nonce.encode(), reference.encode(), hashlib.sha256).hexdigest()


def token_valid(request: Request, reference: str, sent: str | None) -> bool:
    nonce = request.cookies.get(NONCE_COOKIE)
    return nonce is not None and same(sent, form_token(nonce, reference))


def with_nonce(response: Response, nonce: str) -> Response:
    # Secure: browsers treat http://127.0.0.1 and localhost as secure, so it holds in
    # development too. Strict: no other site's page can make a request that carries it.
    # Path /: a payment link's page (/l/…) posts with it too.
    response.set_cookie(
        NONCE_COOKIE, nonce, path="/", secure=True, httponly=True, samesite="strict"
    )
    return response


def base_url_of(request: Request, runtime: Runtime) -> str | None:
    return public_url.public_base_url(runtime.settings, request.scope.get("server"))


def back_to_merchant(checkout: CheckoutSession) -> str | None:
    """The merchant's return_url with `checkout_session=REF` added to its query; None for a
    payment link's session without one (the receipt ends the way)."""
    if checkout.return_url is None:
        return None
    separator = "&" if "?" in checkout.return_url else "?"
    return f"{checkout.return_url}{separator}checkout_session={checkout.reference}"


async def _common(
    session: AsyncSession, runtime: Runtime, checkout: CheckoutSession
) -> dict[str, Any]:
    """What every page of a session shows: who is paid, what for, how much."""
    merchant = await session.get(Merchant, checkout.merchant_id)
    return {
        "checkout": checkout,
        **merchant_shown(merchant),
        "amount": None
        if checkout.amount is None
        else format_amount(checkout.amount, checkout.currency),
        "plan": await _plan_progress(session, checkout),
        "test_mode": not checkout.livemode,
        "back_url": back_to_merchant(checkout),
        "expired": checkout.status == SessionStatus.EXPIRED
        or runtime.clock.now() >= checkout.expires_at,
    }


async def _plan_progress(session: AsyncSession, checkout: CheckoutSession) -> dict[str, str] | None:
    """A plan's session shows how far the plan is, and the bounds of this instalment."""
    if checkout.plan_id is None:
        return None
    plan = await session.get(InstallmentPlan, checkout.plan_id)
    assert plan is not None  # the foreign key guarantees it
    least, most = await plans.instalment_bounds(session, plan)
    currency = plan.currency
    return {
        "paid": format_amount(plan.paid_amount, currency),
        "target": format_amount(plan.target_amount, currency),
        "least": format_amount(least, currency),
        "most": format_amount(most, currency),
    }


def _countries(modes: list[PaymentMode]) -> list[tuple[str, str]]:
    present = {mode.country_code for mode in modes if mode.country_code}
    return [(code, name) for code, name in COUNTRY_NAMES.items() if code in present]


def _chosen_country(checkout: CheckoutSession, asked: str | None, modes: list[PaymentMode]) -> str:
    codes = [code for code, _ in _countries(modes)]
    for candidate in (asked, checkout.country):
        if candidate and candidate.upper() in codes:
            return candidate.upper()
    return codes[0] if codes else ""


def _option(mode: PaymentMode) -> dict[str, Any]:
    return {"operator": mode.operator, "name": mode.name, "card": mode.is_card}


@router.get(SCRIPT_PATH)
async def script() -> Response:
    """The page's only script: it improves what works without it (the outcome shown as soon
    as it is known, the operator predicted as the customer types)."""
    return Response(
        SCRIPT, media_type="text/javascript", headers={"Cache-Control": "public, max-age=3600"}
    )


@router.get("/checkout/{reference}")
async def checkout_page(
    request: Request,
    reference: str,
    session: SessionDep,
    runtime: RuntimeDep,
    country: Annotated[str | None, Query(max_length=8)] = None,
    operator: Annotated[str | None, Query(max_length=64)] = None,
    phone_number: Annotated[str | None, Query(max_length=32)] = None,
) -> Response:
    checkout = await checkout_sessions.find(session, reference)
    context = await _common(session, runtime, checkout)
    if checkout.status == SessionStatus.COMPLETE or context["expired"]:
        return await _closed(request, session, runtime, checkout, context)
    modes = await checkout_sessions.offered(session, runtime, checkout)
    chosen = catalogue.find(operator) if operator else None
    typed = {"phone_number": phone_number} if phone_number else {}
    if chosen is not None and chosen in modes:
        return await _form(request, session, runtime, checkout, context, chosen, typed, {})
    picked = _chosen_country(checkout, country, modes)
    guess = _guess(phone_number, picked, modes)
    if guess.country:
        picked = guess.country
    options = [_option(m) for m in modes if m.country_code == picked]
    options.sort(key=lambda option: option["operator"] != guess.operator)
    context |= {
        "step": "choose",
        "countries": _countries(modes),
        "country": picked,
        "options": options,
        "cards": [_option(m) for m in modes if m.is_card],
        "typed_number": phone_number or "",
        "guess": guess,
    }
    return page(request, "checkout.html", context)


@dataclass(frozen=True)
class Guess:
    """What the number typed on the choice page says: its country and likely operator (a
    hint: with portability the customer may be elsewhere), or why it says nothing."""

    country: str | None = None
    operator: str | None = None
    operator_name: str | None = None
    error: str | None = None


def _guess(typed: str | None, country: str, modes: list[PaymentMode]) -> Guess:
    number = international_number(typed, country)
    if number is None:
        return Guess()
    try:
        prediction = predict(number)
    except InvalidRequest as refused:
        return Guess(error=refused.message)
    offered = {mode.operator: mode for mode in modes}
    mode = offered.get(prediction.operator or "")
    if mode is None:
        return Guess(country=prediction.country_code)
    return Guess(prediction.country_code, mode.operator, mode.name)


@router.get("/checkout/{reference}/predict")
async def predicted_operator(
    reference: str,
    session: SessionDep,
    runtime: RuntimeDep,
    phone_number: Annotated[str, Query(max_length=32)],
    country: Annotated[str | None, Query(max_length=8)] = None,
) -> JSONResponse:
    """The script's question as the customer types: the operator of that number among the
    modes offered here, if the numbering plan names one."""
    checkout = await checkout_sessions.find(session, reference)
    modes = await checkout_sessions.offered(session, runtime, checkout)
    guess = _guess(phone_number, (country or checkout.country or "").upper(), modes)
    return JSONResponse(
        {"country": guess.country, "operator": guess.operator, "name": guess.operator_name},
        headers={"Cache-Control": "no-store"},
    )


@router.get("/checkout/{reference}/attempts/{payment_reference}/status")
async def attempt_status(
    reference: str, payment_reference: str, session: SessionDep
) -> JSONResponse:
    """The script's question while the customer approves: is the attempt final yet?"""
    checkout = await checkout_sessions.find(session, reference)
    payment = await _attempt_of(session, checkout, payment_reference)
    return JSONResponse({"status": payment.status}, headers={"Cache-Control": "no-store"})


async def _form(
    request: Request,
    session: AsyncSession,
    runtime: Runtime,
    checkout: CheckoutSession,
    context: dict[str, Any],
    mode: PaymentMode,
    values: dict[str, str],
    errors: dict[str, list[str]],
    status_code: int = 200,
) -> Response:
    nonce = nonce_of(request)
    customer = checkout.customer
    fee = await checkout_sessions.commission(session, runtime, checkout, mode)
    number = values.get("phone_number") or customer.get("phone_number") or ""
    context |= {
        "step": "pay",
        "mode": _option(mode),
        "dial_code": phone.DIAL_CODES.get(mode.country_code or ""),
        "otp_help": _otp_help(request, mode),
        "hints": FIELD_HINTS,
        "holder_fields": [
            name for name in ("firstname", "lastname", "email") if not customer.get(name)
        ]
        if mode.is_card
        else [],
        "values": values | {"phone_number": number},
        "errors": errors,
        # What no field of this form shows (the mode itself, the form's token, …).
        "summary": [
            message
            for name, messages in errors.items()
            if name not in _SHOWN_BESIDE_A_FIELD
            for message in messages
        ],
        "csrf": form_token(nonce, checkout.reference),
        "test_numbers": not checkout.livemode and not mode.is_card,
        "fee": format_amount(fee, checkout.currency) if fee else None,
        "total": None
        if checkout.amount is None
        else format_amount(checkout.amount + fee, checkout.currency),
    }
    return with_nonce(page(request, "checkout.html", context, status_code), nonce)


_SHOWN_BESIDE_A_FIELD = {"phone_number", "otp", "amount", "firstname", "lastname", "email"}


def _otp_help(request: Request, mode: PaymentMode) -> str | None:
    if not mode.requires_otp:
        return None
    return OTP_HINT if language_of(request) == ENGLISH else otp_instructions(mode.operator)


async def _closed(
    request: Request,
    session: AsyncSession,
    runtime: Runtime,
    checkout: CheckoutSession,
    context: dict[str, Any],
) -> Response:
    """A complete session shows its receipt; an expired one says so."""
    paid = await session.get(Payment, checkout.payment_id) if checkout.payment_id else None
    context |= {"step": "closed", "paid": _shown_payment(paid) if paid else None}
    return page(request, "checkout.html", context, 200 if paid else 410)


def _shown_payment(payment: Payment) -> dict[str, Any]:
    """What the customer sees of an attempt: the number masked (issue 25)."""
    mode = catalogue.find(payment.operator)
    return {
        "reference": payment.identifier,
        "status": payment.status,
        "mode_name": mode.name if mode else payment.operator,
        "number": phone.mask(payment.phone_number) if payment.phone_number else None,
        "total": format_amount(payment.total_amount, payment.currency),
        "fee": format_amount(payment.fee_amount, payment.currency)
        if payment.fee_bearer == "customer" and payment.fee_amount
        else None,
        "failure_message": failure_fields(payment.status, payment.failure_reason)[
            "failure_message"
        ],
    }


@router.post("/checkout/{reference}")
async def attempt(
    request: Request,
    reference: str,
    session: SessionDep,
    runtime: RuntimeDep,
    operator: Annotated[str, Form(max_length=64)],
    csrf: Annotated[str | None, Form(max_length=128)] = None,
    phone_number: Annotated[str | None, Form(max_length=32)] = None,
    otp: Annotated[str | None, Form(max_length=32)] = None,
    amount: Annotated[str | None, Form(max_length=32)] = None,
    firstname: Annotated[str | None, Form(max_length=255)] = None,
    lastname: Annotated[str | None, Form(max_length=255)] = None,
    email: Annotated[str | None, Form(max_length=255)] = None,
) -> Response:
    checkout = await checkout_sessions.find(session, reference)
    context = await _common(session, runtime, checkout)
    if checkout.status == SessionStatus.COMPLETE or context["expired"]:
        return await _closed(request, session, runtime, checkout, context)
    mode = catalogue.find(operator)
    if mode is None:
        raise NotFound("Ce moyen de paiement n'existe pas.")
    form = AttemptForm(operator, phone_number, otp, amount, firstname, lastname, email)
    values = {k: v for k, v in vars(form).items() if isinstance(v, str) and k != "otp"}
    # The same form again, with what was typed and what is wrong with it.
    again = partial(_form, request, session, runtime, checkout, context, mode, values)
    if not token_valid(request, reference, csrf):
        return await again(
            {"form": ["Le formulaire a expiré : vérifiez et envoyez-le de nouveau."]}, 403
        )
    try:
        payment = await checkout_sessions.attempt(
            session, runtime, reference, form, base_url_of(request, runtime)
        )
    except InvalidRequest as invalid:
        return await again(invalid.details or {"form": [invalid.message]}, 422)
    except Conflict as refused:  # too many attempts, or closed meanwhile
        return await again({"form": [refused.message]}, 409)
    except PaymentFailed:
        # Refused at once: the failed attempt is recorded (kept), the session's latest.
        payment = (await checkout_sessions.attempts(session, checkout))[-1]
    if payment.status == Outcome.PENDING and payment.payment_url:
        return RedirectResponse(payment.payment_url, status_code=303)
    return RedirectResponse(f"{PREFIX}/{reference}/attempts/{payment.id}", status_code=303)


@router.get("/checkout/{reference}/attempts/{payment_reference}")
async def attempt_page(
    request: Request,
    reference: str,
    payment_reference: str,
    session: SessionDep,
    runtime: RuntimeDep,
) -> Response:
    checkout = await checkout_sessions.find(session, reference)
    payment = await _attempt_of(session, checkout, payment_reference)
    context = await _common(session, runtime, checkout)
    shown = _shown_payment(payment)
    tried = len(await checkout_sessions.attempts(session, checkout))
    completed = checkout.payment_id == payment.id
    context |= {
        "step": "attempt",
        "attempt": shown,
        "completed_by_it": completed,
        "can_retry": checkout.status == SessionStatus.OPEN
        and not context["expired"]
        and tried < MAX_ATTEMPTS,
        "refresh": _refresh(payment, context["back_url"] if completed else None),
        "status_url": f"{PREFIX}/{reference}/attempts/{payment.id}/status"
        if payment.status == Outcome.PENDING
        else None,
    }
    return page(request, "checkout.html", context)


def _refresh(payment: Payment, back_url: str | None) -> str | None:
    """The page's own refresh: asked again every few seconds while the payment waits; once
    it completed the session, on to the merchant after the receipt has been seen."""
    if payment.status == Outcome.PENDING:
        return str(REFRESH_EVERY)
    if back_url is not None:
        return f"{RECEIPT_SECONDS};url={back_url}"
    return None


async def _attempt_of(
    session: AsyncSession, checkout: CheckoutSession, payment_reference: str
) -> Payment:
    payment_id = parse_uuid(payment_reference)
    payment = await session.get(Payment, payment_id) if payment_id else None
    if payment is None or payment.checkout_session != checkout.reference:
        raise NotFound("Cette tentative de paiement n'existe pas.")
    return payment


@router.api_route("/checkout/{reference}/return", methods=["GET", "POST"])
async def back_from_payment_page(reference: str, session: SessionDep) -> Response:
    """Where a card's page or an operator's page sends the customer back; nothing it
    sends is trusted: the latest attempt, as Cauri knows it."""
    checkout = await checkout_sessions.find(session, reference)
    tried = await checkout_sessions.attempts(session, checkout)
    if not tried:
        return RedirectResponse(f"{PREFIX}/{reference}", status_code=303)
    return RedirectResponse(f"{PREFIX}/{reference}/attempts/{tried[-1].id}", status_code=303)
