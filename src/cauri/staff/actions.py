"""The staff's actions, used alike by the CLI (`cauri merchants set-status` …) and the staff
console. Each names the permission it needs (cauri.staff.roles gives permissions to roles;
the CLI, run on the server, has them all), reads the state it changes, has the domain
service change it (the rules live there, never here), reads the state again and records
both in the audit log, in the caller's transaction: the entry is kept exactly when the
change is. What is recorded never holds a secret: keys by their hint, connector
credentials by their names, no webhook secret."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, String, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.audit.log import AuditFilter, State, audited, record
from cauri.balance.service import credit, credit_amount
from cauri.calls import service as calls
from cauri.connectors.secrets import sealing_keyring
from cauri.connectors.service import AccountDefinition, RouteRow, connectors
from cauri.history import archive
from cauri.kit.db import unit_of_work
from cauri.kit.errors import CauriError, Conflict, InvalidRequest, MerchantInactive, NotFound
from cauri.kit.ids import parse_uuid
from cauri.kit.money import to_minor
from cauri.kit.months import Month
from cauri.ledger import holdings, periods
from cauri.ledger.movements import Counterpart, Part
from cauri.merchants.caller import Caller
from cauri.merchants.service import NewMerchant
from cauri.merchants.service import merchants as merchant_service
from cauri.models import (
    ApiKey,
    ConnectorAccount,
    FeeRule,
    InstallmentPlan,
    Merchant,
    MoneyApproval,
    OperatorOperation,
    OperatorRoute,
    Payout,
    PayoutBatch,
    PlanRefund,
    PlatformSettings,
    Reconciliation,
    User,
    WebhookDelivery,
    WebhookEndpoint,
)
from cauri.models.statements import Discrepancy
from cauri.operators import catalogue
from cauri.operators.protocol import CheckReport, Outcome
from cauri.payout_batches.schemas import PayoutBatchCreate
from cauri.payout_batches.service import payout_batches
from cauri.payouts.service import payouts
from cauri.people import accounts
from cauri.people.accounts import IssuedLink
from cauri.people.realm import MERCHANT, STAFF
from cauri.plans import resolution, settlement
from cauri.platform.service import check_currency, update_settings
from cauri.reconciliation import service as discrepancies
from cauri.runtime import Runtime
from cauri.staff import approvals, reconciliation
from cauri.staff.exports import ExportFilter
from cauri.webhooks import service as webhooks
from cauri.webhooks.schemas import EndpointUpdate

T = TypeVar("T")


@dataclass(frozen=True)
class StaffAction:
    name: str  # as the audit log records it
    permission: str  # what cauri.staff.roles must grant the staff member's role
    resource_type: str


CREATE_MERCHANT = StaffAction("merchant.create", "merchants.manage", "merchant")
SET_MERCHANT_STATUS = StaffAction("merchant.set_status", "merchants.manage", "merchant")
SET_PAYOUT_ACCOUNT = StaffAction("merchant.set_payout_account", "merchants.manage", "merchant")
SET_FEE = StaffAction("merchant.set_fee", "fees.manage", "merchant")
SET_FEE_BEARER = StaffAction("merchant.set_fee_bearer", "fees.manage", "merchant")
SET_LIMITS = StaffAction("merchant.set_limits", "limits.manage", "merchant")
CREDIT_BALANCE = StaffAction("merchant.credit", "balances.credit", "merchant")
CREATE_KEY = StaffAction("key.create", "keys.manage", "merchant")
ROTATE_KEYS = StaffAction("key.rotate", "keys.manage", "merchant")
REVOKE_KEY = StaffAction("key.revoke", "keys.manage", "api_key")
SET_SETTINGS = StaffAction("settings.set", "fees.manage", "platform_settings")
APPROVE_PAYOUT = StaffAction("payout.approve", "payouts.approve", "payout")
REJECT_PAYOUT = StaffAction("payout.reject", "payouts.approve", "payout")
# Payouts from a merchant's balance on the staff's word (`cauri payouts batch`): finance's.
CREATE_PAYOUT_BATCH = StaffAction("payout_batch.create", "payouts.approve", "payout_batch")
RESUME_PAYOUT_BATCH = StaffAction("payout_batch.resume", "payouts.approve", "payout_batch")
# A discrepancy resolved with money (a reason alone is finance's `exports`).
RESOLVE_DISCREPANCY = StaffAction("discrepancy.resolve", "balances.credit", "discrepancy")
# Both move a failed plan's escrow, or an operation's money, on a person's word: a credit.
REFUND_PLAN = StaffAction("plan.refund_to", "balances.credit", "plan")
RELEASE_PLAN = StaffAction("plan.release_to_merchant", "balances.credit", "plan")
SETTLE_OPERATION = StaffAction("operation.settle", "balances.credit", "operator_operation")
RESEND_NOTIFICATION = StaffAction(
    "operation.resend_notification", "webhooks.resend", "operator_operation"
)
ADD_CONNECTOR = StaffAction("connector.add", "connectors.manage", "connector")
CHECK_CONNECTOR = StaffAction("connector.check", "connectors.manage", "connector")
SET_ROUTES = StaffAction("route.set", "routes.manage", "route")
RESEND_WEBHOOK = StaffAction("webhook_delivery.resend", "webhooks.resend", "webhook_delivery")
SET_WEBHOOK_ENDPOINT = StaffAction("webhook_endpoint.set", "merchants.manage", "merchant")
ROTATE_WEBHOOK_SECRET = StaffAction(
    "webhook_endpoint.rotate_secret", "merchants.manage", "merchant"
)
CREATE_STAFF = StaffAction("staff.create", "staff.manage", "staff_account")
DISABLE_STAFF = StaffAction("staff.disable", "staff.manage", "staff_account")
LINK_STAFF = StaffAction("staff.link", "staff.manage", "staff_account")
INVITE_MEMBER = StaffAction("merchant.invite_member", "merchants.manage", "merchant")
LINK_MEMBER = StaffAction("merchant.link_member", "merchants.manage", "merchant")
# A live money action above the platform's dual-approval amount, asked by one person and
# done on another's approval (cauri.staff.approvals); whoever decides needs the permission
# of the action itself (APPROVABLE), finance's at least.
REQUEST_APPROVAL = StaffAction("approval.request", "balances.credit", "money_approval")
APPROVE_ACTION = StaffAction("approval.approve", "balances.credit", "money_approval")
REJECT_ACTION = StaffAction("approval.reject", "balances.credit", "money_approval")
# Reads that leave a trace: a file of the platform's data leaves it, a check is recorded.
EXPORT_DATA = StaffAction("export.download", "exports", "export")
EXPORT_AUDIT = StaffAction("audit.export", "exports", "audit_log")
RECONCILE = StaffAction("ledger.reconcile", "exports", "reconciliation")
# The history's upkeep (issue 29): a month's ledger closed, a partition archived.
CLOSE_LEDGER_MONTH = StaffAction("ledger.close_month", "exports", "ledger_period")
ARCHIVE_PARTITION = StaffAction(archive.ACTION, "exports", archive.RESOURCE)

ACTIONS = (
    CREATE_MERCHANT,
    SET_MERCHANT_STATUS,
    SET_PAYOUT_ACCOUNT,
    SET_FEE,
    SET_FEE_BEARER,
    SET_LIMITS,
    CREDIT_BALANCE,
    CREATE_KEY,
    ROTATE_KEYS,
    REVOKE_KEY,
    SET_SETTINGS,
    APPROVE_PAYOUT,
    REJECT_PAYOUT,
    CREATE_PAYOUT_BATCH,
    RESUME_PAYOUT_BATCH,
    RESOLVE_DISCREPANCY,
    REFUND_PLAN,
    RELEASE_PLAN,
    SETTLE_OPERATION,
    RESEND_NOTIFICATION,
    ADD_CONNECTOR,
    CHECK_CONNECTOR,
    SET_ROUTES,
    RESEND_WEBHOOK,
    SET_WEBHOOK_ENDPOINT,
    ROTATE_WEBHOOK_SECRET,
    CREATE_STAFF,
    DISABLE_STAFF,
    LINK_STAFF,
    INVITE_MEMBER,
    LINK_MEMBER,
    REQUEST_APPROVAL,
    APPROVE_ACTION,
    REJECT_ACTION,
    EXPORT_DATA,
    EXPORT_AUDIT,
    RECONCILE,
    CLOSE_LEDGER_MONTH,
    ARCHIVE_PARTITION,
)

APPROVABLE = {
    action.name: action
    for action in (
        CREDIT_BALANCE,
        REFUND_PLAN,
        RELEASE_PLAN,
        SET_SETTINGS,
        CREATE_PAYOUT_BATCH,
        RESOLVE_DISCREPANCY,
    )
}


async def _audited(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    action: StaffAction,
    resource_id: str,
    state: State,
    change: Callable[[], Awaitable[T]],
    reason: str | None = None,
) -> T:
    """A staff action, audited (audit.log.audited)."""
    resource = (action.resource_type, resource_id)
    return await audited(
        session, actor, action.name, resource, state, change, reason, at=runtime.clock.now()
    )


async def _rows(
    session: AsyncSession,
    columns: Sequence[Any],
    *where: ColumnElement[bool],
    order_by: Sequence[Any] = (),
    lock: bool = False,
) -> list[dict[str, Any]]:
    """Plain values read by a statement, not objects the session holds: a service may have
    changed the rows behind them (a bulk UPDATE)."""
    statement = select(*columns).where(*where).order_by(*order_by)
    result = await session.execute(statement.with_for_update() if lock else statement)
    return [dict(row) for row in result.mappings()]


def _row(session: AsyncSession, columns: Sequence[Any], *where: ColumnElement[bool]) -> State:
    async def read() -> Mapping[str, Any] | None:
        found = await _rows(session, columns, *where)
        return found[0] if found else None

    return read


# --- merchants ------------------------------------------------------------------------

_PROFILE = (Merchant.name, Merchant.status, Merchant.fee_bearer)
_PAYOUT_ACCOUNT = (Merchant.payout_phone, Merchant.payout_operator, Merchant.payout_validated)
_LIMITS = (Merchant.limit_per_payout, Merchant.limit_daily, Merchant.approval_threshold)
_FEE_AMOUNTS = (FeeRule.fixed, FeeRule.fixed_eur, FeeRule.fixed_usd)
_KEY = (ApiKey.id, ApiKey.merchant_id, ApiKey.livemode, ApiKey.key_hint)
_KEY_DATES = (ApiKey.created_at, ApiKey.expires_at, ApiKey.revoked_at)


def _merchant(session: AsyncSession, merchant_id: str, columns: Sequence[Any]) -> State:
    return _row(session, columns, Merchant.id == merchant_id)


async def _key_rows(session: AsyncSession, merchant_id: str) -> list[dict[str, Any]]:
    """The merchant's keys by their hint (the key itself is shown once, never kept)."""
    return await _rows(
        session, (*_KEY, *_KEY_DATES), ApiKey.merchant_id == merchant_id, order_by=(ApiKey.id,)
    )


def _keys(session: AsyncSession, merchant_id: str) -> State:
    async def read() -> Mapping[str, Any]:
        return {"keys": await _key_rows(session, merchant_id)}

    return read


async def create_merchant(
    session: AsyncSession, runtime: Runtime, actor: Actor, *, name: str, status: str
) -> NewMerchant:
    """merchants.manage. The new keys are in the answer, only their hints in the log."""
    new = await merchant_service.create(
        session,
        name=name,
        status=status,
        now=runtime.clock.now(),
        box=sealing_keyring(runtime.settings),
    )
    merchant_id = new.merchant.id
    [profile] = await _rows(session, _PROFILE, Merchant.id == merchant_id)
    await record(
        session,
        actor,
        CREATE_MERCHANT.name,
        CREATE_MERCHANT.resource_type,
        merchant_id,
        None,
        profile | {"keys": await _key_rows(session, merchant_id)},
        at=runtime.clock.now(),
    )
    return new


async def set_merchant_status(
    session: AsyncSession, runtime: Runtime, actor: Actor, merchant_id: str, status: str
) -> Merchant:
    """merchants.manage."""
    return await _audited(
        session,
        runtime,
        actor,
        SET_MERCHANT_STATUS,
        merchant_id,
        _merchant(session, merchant_id, (Merchant.status,)),
        lambda: merchant_service.set_status(session, merchant_id, status),
    )


async def set_fee_bearer(
    session: AsyncSession, runtime: Runtime, actor: Actor, merchant_id: str, bearer: str
) -> Merchant:
    """fees.manage."""
    return await _audited(
        session,
        runtime,
        actor,
        SET_FEE_BEARER,
        merchant_id,
        _merchant(session, merchant_id, (Merchant.fee_bearer,)),
        lambda: merchant_service.set_fee_bearer(session, merchant_id, bearer),
    )


async def set_fee(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    mode: str,
    percent: Decimal | None,
    fixed: Decimal | None,
    disabled: bool,
    currency: str,
) -> FeeRule:
    """fees.manage. The log holds every rule of the account, before and after."""

    async def rules() -> Mapping[str, Any]:
        found = await _rows(
            session,
            (FeeRule.mode, FeeRule.percent, *_FEE_AMOUNTS, FeeRule.disabled),
            FeeRule.merchant_id == merchant_id,
            order_by=(FeeRule.mode,),
        )
        return {"fee_rules": {rule.pop("mode"): rule for rule in found}}

    return await _audited(
        session,
        runtime,
        actor,
        SET_FEE,
        merchant_id,
        rules,
        lambda: merchant_service.set_fee(
            session,
            merchant_id,
            mode=mode,
            percent=percent,
            fixed=fixed,
            disabled=disabled,
            currency=currency,
        ),
    )


async def set_payout_account(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    phone_number: str,
    operator: str,
    validated: bool,
) -> Merchant:
    """merchants.manage."""
    return await _audited(
        session,
        runtime,
        actor,
        SET_PAYOUT_ACCOUNT,
        merchant_id,
        _merchant(session, merchant_id, _PAYOUT_ACCOUNT),
        lambda: merchant_service.set_payout_account(
            session, merchant_id, phone_number=phone_number, operator=operator, validated=validated
        ),
    )


async def set_limits(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    per_payout: int | None,
    daily: int | None,
    approval_threshold: int | None,
) -> Merchant:
    """limits.manage."""
    return await _audited(
        session,
        runtime,
        actor,
        SET_LIMITS,
        merchant_id,
        _merchant(session, merchant_id, _LIMITS),
        lambda: merchant_service.set_limits(
            session,
            merchant_id,
            per_payout=per_payout,
            daily=daily,
            approval_threshold=approval_threshold,
        ),
    )


async def credit_balance(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    livemode: bool,
    amount: Decimal,
    currency: str,
    reason: str,
) -> int | MoneyApproval:
    """balances.credit. Returns the new available balance (minor units); a live credit
    above the platform's dual-approval amount is only asked (cauri.staff.approvals)."""
    minor = await credit_amount(
        session, merchant_id, amount=amount, currency=currency, reason=reason
    )
    if await approvals.needs_two(session, livemode=livemode, amount=minor, currency=currency):
        return await _ask(
            session,
            runtime,
            actor,
            CREDIT_BALANCE,
            merchant_id,
            amount=minor,
            currency=currency,
            livemode=livemode,
            params={"amount": str(amount)},
            reason=reason,
        )
    return await _credit(
        session,
        runtime,
        actor,
        merchant_id,
        livemode=livemode,
        amount=amount,
        currency=currency,
        reason=reason,
    )


async def _credit(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    livemode: bool,
    amount: Decimal,
    currency: str,
    reason: str,
) -> int:
    async def available() -> Mapping[str, Any]:
        found = await holdings.available(session, merchant_id, livemode, [currency])
        return {"livemode": livemode, "currency": currency, "available": found[currency]}

    return await _audited(
        session,
        runtime,
        actor,
        CREDIT_BALANCE,
        merchant_id,
        available,
        lambda: credit(
            session,
            merchant_id,
            livemode=livemode,
            amount=amount,
            currency=currency,
            reason=reason,
            now=runtime.clock.now(),
        ),
        reason,
    )


# --- keys -----------------------------------------------------------------------------


async def create_key(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    livemode: bool,
    expires_at: datetime | None,
) -> str:
    """keys.manage. Returns the key, shown this once."""
    return await _audited(
        session,
        runtime,
        actor,
        CREATE_KEY,
        merchant_id,
        _keys(session, merchant_id),
        lambda: merchant_service.create_key(
            session, merchant_id, livemode=livemode, now=runtime.clock.now(), expires_at=expires_at
        ),
    )


async def rotate_keys(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    livemode: bool,
    grace: timedelta,
) -> str:
    """keys.manage. Returns the new key; the log shows the others' new expiry."""
    return await _audited(
        session,
        runtime,
        actor,
        ROTATE_KEYS,
        merchant_id,
        _keys(session, merchant_id),
        lambda: merchant_service.rotate_key(
            session, merchant_id, livemode=livemode, grace=grace, now=runtime.clock.now()
        ),
    )


async def revoke_key(session: AsyncSession, runtime: Runtime, actor: Actor, key_id: str) -> ApiKey:
    """keys.manage."""
    return await _audited(
        session,
        runtime,
        actor,
        REVOKE_KEY,
        key_id,
        # Compared as text: an id that is no number matches nothing (the service says 404).
        _row(session, (*_KEY, ApiKey.revoked_at), ApiKey.id.cast(String) == key_id),
        lambda: merchant_service.revoke_key(session, key_id, now=runtime.clock.now()),
    )


# --- platform settings ----------------------------------------------------------------


async def set_settings(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    changes: Mapping[str, Any],
    *,
    currency: str,
) -> PlatformSettings | MoneyApproval:
    """fees.manage (the settings are the default fees, plans' fees and the amount above
    which a payout needs two approvals). Raising that amount, or unsetting it, lets one
    person do more: it is only asked, on its own, and done on a second admin's approval
    (cauri.staff.approvals.loosens); lowering it or setting it where unset is done at once."""
    if approvals.SETTING in changes:
        check_currency(currency)
        value = changes[approvals.SETTING]
        wanted = None if value is None else to_minor(value, currency, approvals.SETTING)
        if approvals.loosens(await approvals.dual_above(session, currency), wanted):
            if len(changes) > 1:
                raise InvalidRequest.field(
                    approvals.SETTING,
                    "Relever ou retirer le montant de double approbation demande l'accord d'un "
                    "second administrateur : changez-le seul, les autres paramètres à part.",
                )
            return await _ask(
                session,
                runtime,
                actor,
                SET_SETTINGS,
                "platform",
                amount=wanted,
                currency=currency,
                livemode=True,
                params={"changes": {approvals.SETTING: None if value is None else str(value)}},
                reason=None,
            )
    return await _apply_settings(session, runtime, actor, changes, currency=currency)


async def _apply_settings(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    changes: Mapping[str, Any],
    *,
    currency: str,
) -> PlatformSettings:
    columns = [c for c in PlatformSettings.__table__.c if c.name != "id"]
    return await _audited(
        session,
        runtime,
        actor,
        SET_SETTINGS,
        "1",  # the one row
        _row(session, columns, PlatformSettings.id == 1),
        lambda: update_settings(session, dict(changes), runtime.clock.now(), currency=currency),
    )


# --- payouts --------------------------------------------------------------------------


def _payout(session: AsyncSession, reference: str) -> State:
    columns = (Payout.status, Payout.approval, Payout.debited, Payout.amount, Payout.currency)

    async def read() -> Mapping[str, Any] | None:
        # Locked (the service locks it first too): simultaneous approvals each record the
        # approvals they found, not those of a moment before another one's.
        found = await _rows(session, columns, Payout.reference == reference, lock=True)
        if not found:
            return None
        approvals = await payouts.approvals(session, reference)
        return found[0] | {"approvals": [approval.approver_name for approval in approvals]}

    return read


async def approve_payout(
    session: AsyncSession, runtime: Runtime, actor: Actor, reference: str, reason: str | None
) -> Payout:
    """payouts.approve. Above the platform's dual-approval amount the first approval leaves
    the payout held; the second, by someone else, pays it (cauri.payouts.service)."""
    return await _audited(
        session,
        runtime,
        actor,
        APPROVE_PAYOUT,
        reference,
        _payout(session, reference),
        lambda: payouts.approve(session, runtime, reference, actor),
        reason,
    )


async def reject_payout(
    session: AsyncSession, runtime: Runtime, actor: Actor, reference: str, reason: str | None
) -> Payout:
    """payouts.approve: whoever may approve may reject, whatever approvals it has."""
    return await _audited(
        session,
        runtime,
        actor,
        REJECT_PAYOUT,
        reference,
        _payout(session, reference),
        lambda: payouts.reject(session, runtime, reference),
        reason,
    )


async def create_payout_batch(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    livemode: bool,
    body: PayoutBatchCreate,
) -> tuple[PayoutBatch, bool] | MoneyApproval:
    """payouts.approve: the merchant's payouts, as its key would ask them
    (`POST /payout-batches`: a live account that is not active is refused), audited when
    made (a replay of its external_id is the batch made then, audited then). A live batch
    whose third-party payouts add up above the platform's dual-approval amount in a currency
    is only asked (cauri.staff.approvals): one person does not send it."""
    merchant = await merchant_service.get(session, merchant_id)
    if livemode and merchant.status != "active":
        raise MerchantInactive()
    if livemode:
        for currency, total in _third_party_totals(body).items():
            if await approvals.needs_two(session, livemode=True, amount=total, currency=currency):
                return await _ask(
                    session,
                    runtime,
                    actor,
                    CREATE_PAYOUT_BATCH,
                    merchant_id,
                    amount=total,
                    currency=currency,
                    livemode=True,
                    params=_batch_params(body),
                    reason=None,
                )
    return await _create_payout_batch(session, runtime, actor, merchant_id, livemode, body)


def _batch_params(body: PayoutBatchCreate) -> dict[str, Any]:
    """The batch as the approval keeps it (JSON): which items' amounts were exact numbers
    (a CSV's, a JSON file's with a fraction), which JSON stores as text, so that the approved
    batch is the one asked (review finding: each such item was refused as not a number)."""
    exact = [
        position
        for position, item in enumerate(body.items)
        if isinstance(item, dict) and isinstance(item.get("amount"), Decimal)
    ]
    return {"body": body.model_dump(mode="json"), "exact_amounts": exact}


def _batch_asked(asked: Mapping[str, Any]) -> PayoutBatchCreate:
    body = asked["body"]
    for position in asked.get("exact_amounts", ()):
        item = body["items"][position]
        item["amount"] = Decimal(item["amount"])
    return PayoutBatchCreate.model_validate(body)


def _third_party_totals(body: PayoutBatchCreate) -> dict[str, int]:
    """What the batch's items to a number of their own add up to, by currency (an item that
    will be refused counts too: the sum is what one person asks to send)."""
    totals: dict[str, int] = {}
    for item in body.items:
        if not isinstance(item, dict) or item.get("phone_number") is None:
            continue
        mode = catalogue.find(str(item.get("operator") or ""))
        amount = item.get("amount")
        if mode is None or not isinstance(amount, int | Decimal | str):
            continue
        try:
            minor = to_minor(Decimal(str(amount)), mode.currency)
        except (CauriError, ArithmeticError):
            continue
        totals[mode.currency] = totals.get(mode.currency, 0) + max(minor, 0)
    return totals


async def _create_payout_batch(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    livemode: bool,
    body: PayoutBatchCreate,
) -> tuple[PayoutBatch, bool]:
    caller = Caller(merchant_id, livemode)
    batch, created = await payout_batches.create(session, runtime, caller, body)
    if created:
        after = {
            "merchant_id": merchant_id,
            "livemode": livemode,
            "external_id": batch.external_id,
            "items": batch.item_count,
        }
        await record(
            session,
            actor,
            CREATE_PAYOUT_BATCH.name,
            CREATE_PAYOUT_BATCH.resource_type,
            batch.reference,
            None,
            after,
            at=runtime.clock.now(),
        )
    return batch, created


async def resolve_discrepancy(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    discrepancy_id: int,
    reason: str,
    written: Sequence[str] = (),
) -> Discrepancy | MoneyApproval:
    """exports, and balances.credit with money (`written`: the correcting entry's parts,
    cauri.reconciliation.service.part). A correction that moves more than the platform's
    dual-approval amount in its currency is only asked: a second person approves it."""
    found = await discrepancies.still_open(session, discrepancy_id)
    currency = found.currency or ""
    parts = [discrepancies.part(text, currency) for text in written]
    if parts and await approvals.needs_two(
        session, livemode=True, amount=discrepancies.moved(parts), currency=currency
    ):
        if not reason.strip():
            raise InvalidRequest.field("reason", "Indiquez ce qui résout l'écart.")
        return await _ask(
            session,
            runtime,
            actor,
            RESOLVE_DISCREPANCY,
            str(discrepancy_id),
            amount=discrepancies.moved(parts),
            currency=currency,
            livemode=True,
            params={"parts": [[p.counterpart.value, p.amount, p.owner] for p in parts]},
            reason=reason.strip(),
        )
    return await discrepancies.resolve(
        session, actor, discrepancy_id, reason, runtime.clock.now(), parts
    )


async def resume_payout_batch(
    session: AsyncSession, runtime: Runtime, actor: Actor, reference: str
) -> PayoutBatch:
    """payouts.approve: a processing batch's job queued again (payout_batches.resume)."""
    batch = await payout_batches.resume(session, runtime, reference)
    await record(
        session,
        actor,
        RESUME_PAYOUT_BATCH.name,
        RESUME_PAYOUT_BATCH.resource_type,
        reference,
        None,
        {"status": batch.status},
        at=runtime.clock.now(),
    )
    return batch


# --- plans and operator operations ----------------------------------------------------

_RESOLUTION = (
    InstallmentPlan.status,
    InstallmentPlan.resolution,
    InstallmentPlan.resolution_reason,
    InstallmentPlan.refund_operator,
    InstallmentPlan.refund_phone_number,
    InstallmentPlan.resolved_at,
)


def _plan(session: AsyncSession, reference: str) -> State:
    return _row(session, _RESOLUTION, InstallmentPlan.id == parse_uuid(reference))


_REFUND = (
    PlanRefund.reference,
    PlanRefund.amount,
    PlanRefund.currency,
    PlanRefund.status,
    PlanRefund.operator,
    PlanRefund.phone_number,
)


def _plan_and_refund(session: AsyncSession, reference: str) -> State:
    """The plan's resolution and the refund under way, if any (a resolvable plan has none;
    a refund to a number leaves the one it recorded)."""
    plan = _plan(session, reference)

    async def read() -> Mapping[str, Any] | None:
        found = await plan()
        if found is None:
            return None
        refunds = await _rows(
            session,
            _REFUND,
            PlanRefund.plan_id == parse_uuid(reference),
            PlanRefund.status == Outcome.PENDING,
        )
        return {**found, "refund": refunds[0] if refunds else None}

    return read


async def refund_plan_to(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    reference: str,
    *,
    phone_number: str,
    operator: str,
    reason: str | None,
) -> tuple[InstallmentPlan, PlanRefund] | MoneyApproval:
    """balances.credit: a failed plan's escrow to a number (`cauri plans resolve`); a live
    escrow above the platform's dual-approval amount is only asked."""
    resolution.mobile_money(phone_number, operator)  # refused before the plan is read
    plan, held = await resolution.resolvable(session, reference)
    if await approvals.needs_two(
        session, livemode=plan.livemode, amount=held, currency=plan.currency
    ):
        operator, number = resolution.destination(plan, phone_number, operator)
        return await _ask(
            session,
            runtime,
            actor,
            REFUND_PLAN,
            reference,
            amount=held,
            currency=plan.currency,
            livemode=plan.livemode,
            params={"phone_number": number, "operator": operator},
            reason=reason,
        )
    return await _refund_plan_to(
        session,
        runtime,
        actor,
        reference,
        phone_number=phone_number,
        operator=operator,
        reason=reason,
    )


async def _refund_plan_to(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    reference: str,
    *,
    phone_number: str,
    operator: str,
    reason: str | None,
) -> tuple[InstallmentPlan, PlanRefund]:
    """The entry is written with the refund's row, before the refund is sent: through an
    operator's network, sending commits the transaction (record → commit → call → apply),
    so the entry is kept exactly when the refund is, whatever the operator answers. It says
    what was recorded (the refund asked for, pending); the refund's row says how it ends."""
    plan, refund = await _audited(
        session,
        runtime,
        actor,
        REFUND_PLAN,
        reference,
        _plan_and_refund(session, reference),
        lambda: resolution.record_refund_to(
            session, runtime, reference, phone_number=phone_number, operator=operator, reason=reason
        ),
        reason,
    )
    await settlement.send_refund(session, runtime, plan, refund)
    return plan, refund


async def release_plan_to_merchant(
    session: AsyncSession, runtime: Runtime, actor: Actor, reference: str, *, reason: str
) -> InstallmentPlan | MoneyApproval:
    """balances.credit: a failed plan's escrow to the merchant's balance; a live escrow
    above the platform's dual-approval amount is only asked."""
    if not reason.strip():
        raise InvalidRequest.field("reason", "Dites pourquoi l'argent va au marchand.")
    plan, held = await resolution.resolvable(session, reference)
    if await approvals.needs_two(
        session, livemode=plan.livemode, amount=held, currency=plan.currency
    ):
        return await _ask(
            session,
            runtime,
            actor,
            RELEASE_PLAN,
            reference,
            amount=held,
            currency=plan.currency,
            livemode=plan.livemode,
            params={},
            reason=reason,
        )
    return await _release_plan(session, runtime, actor, reference, reason=reason)


async def _release_plan(
    session: AsyncSession, runtime: Runtime, actor: Actor, reference: str, *, reason: str
) -> InstallmentPlan:
    return await _audited(
        session,
        runtime,
        actor,
        RELEASE_PLAN,
        reference,
        _plan(session, reference),
        lambda: resolution.release_to_merchant(session, runtime, reference, reason=reason),
        reason,
    )


# --- live money actions held for a second person ---------------------------------------


async def _ask(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    action: StaffAction,
    subject: str,
    *,
    amount: int | None,
    currency: str,
    livemode: bool,
    params: Mapping[str, Any],
    reason: str | None,
) -> MoneyApproval:
    """The action recorded as pending, and its request in the audit log."""
    now = runtime.clock.now()
    pending = await approvals.ask(
        session,
        actor,
        now,
        kind=action.name,
        subject=subject,
        amount=amount,
        currency=currency,
        livemode=livemode,
        params=params,
        reason=reason,
    )
    await record(
        session,
        actor,
        REQUEST_APPROVAL.name,
        REQUEST_APPROVAL.resource_type,
        str(pending.id),
        None,
        approvals.row(pending),
        reason,
        at=now,
    )
    return pending


async def _decide(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    approval_id: str,
    reason: str | None,
    *,
    approve: bool,
) -> MoneyApproval:
    now = runtime.clock.now()
    pending = await approvals.lock_pending(session, approval_id)
    before = approvals.row(pending)
    await approvals.decide(session, pending, actor, now, approve=approve)
    action = APPROVE_ACTION if approve else REJECT_ACTION
    await record(
        session,
        actor,
        action.name,
        action.resource_type,
        approval_id,
        before,
        approvals.row(pending),
        reason,
        at=now,
    )
    return pending


async def approve_action(
    session: AsyncSession, runtime: Runtime, actor: Actor, approval_id: str, reason: str | None
) -> MoneyApproval:
    """The second person's approval (the permission of the action asked, APPROVABLE): the
    action is done now, as it was asked, in the approver's name. Its entry and the
    approval's are written before any operator is called (a refund to a number)."""
    pending = await _decide(session, runtime, actor, approval_id, reason, approve=True)
    kind, subject, asked = pending.kind, pending.subject, pending.params
    if kind == CREDIT_BALANCE.name:
        await _credit(
            session,
            runtime,
            actor,
            subject,
            livemode=pending.livemode,
            amount=Decimal(asked["amount"]),
            currency=pending.currency,
            reason=pending.reason or "",
        )
    elif kind == CREATE_PAYOUT_BATCH.name:
        await _create_payout_batch(
            session,
            runtime,
            actor,
            subject,
            True,
            _batch_asked(asked),
        )
    elif kind == RESOLVE_DISCREPANCY.name:
        await discrepancies.resolve(
            session,
            actor,
            int(subject),
            pending.reason or "",
            runtime.clock.now(),
            [Part(Counterpart(c), int(amount), owner) for c, amount, owner in asked["parts"]],
        )
    elif kind == SET_SETTINGS.name:
        changes = {
            name: None if value is None else Decimal(value)
            for name, value in asked["changes"].items()
        }
        await _apply_settings(session, runtime, actor, changes, currency=pending.currency)
    else:
        _, held = await resolution.resolvable(session, subject)
        if held != pending.amount:
            raise Conflict(
                "Le séquestre du plan a changé depuis la demande : rejetez-la et "
                "demandez à nouveau."
            )
        if kind == REFUND_PLAN.name:
            await _refund_plan_to(
                session,
                runtime,
                actor,
                subject,
                phone_number=asked["phone_number"],
                operator=asked["operator"],
                reason=pending.reason,
            )
        else:
            await _release_plan(session, runtime, actor, subject, reason=pending.reason or "")
    return pending


async def reject_action(
    session: AsyncSession, runtime: Runtime, actor: Actor, approval_id: str, reason: str | None
) -> MoneyApproval:
    """Whoever may approve it may reject it, the asker included (a withdrawal): nothing
    was done, nothing is."""
    return await _decide(session, runtime, actor, approval_id, reason, approve=False)


_OPERATION = (
    OperatorOperation.subject,
    OperatorOperation.subject_ref,
    OperatorOperation.connector,
    OperatorOperation.status,
    OperatorOperation.reason,
    OperatorOperation.settled_at,
)


def _operation(session: AsyncSession, operation_id: uuid.UUID) -> State:
    return _row(session, _OPERATION, OperatorOperation.id == operation_id)


async def settle_operation(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    operation_id: uuid.UUID,
    outcome: Outcome,
    reason: str,
) -> None:
    """balances.credit: an operator's answer given outside its API, applied by hand."""
    await _audited(
        session,
        runtime,
        actor,
        SETTLE_OPERATION,
        str(operation_id),
        _operation(session, operation_id),
        lambda: calls.settle_by_hand(session, runtime, operation_id, outcome, reason),
        reason,
    )


async def resend_operator_notification(
    runtime: Runtime, actor: Actor, operation_id: uuid.UUID
) -> str:
    """webhooks.resend: asks the operator for its notification again. No transaction is
    held while it is asked (calls.resend_notification); the entry, with what it answered,
    is written after."""
    async with runtime.sessionmaker() as session:
        before = await _operation(session, operation_id)()
    answer = await calls.resend_notification(runtime, operation_id)
    async with unit_of_work(runtime.sessionmaker) as session:
        after = await _operation(session, operation_id)()
        await record(
            session,
            actor,
            RESEND_NOTIFICATION.name,
            RESEND_NOTIFICATION.resource_type,
            str(operation_id),
            before,
            None if after is None else {**after, "answer": answer},
            at=runtime.clock.now(),
        )
    return answer


# --- connectors and routes ------------------------------------------------------------

# Never `secrets`: the credentials are known by their names only.
_ACCOUNT = (
    ConnectorAccount.kind,
    ConnectorAccount.environment,
    ConnectorAccount.base_url,
    ConnectorAccount.settings,
    ConnectorAccount.secret_names,
    ConnectorAccount.updated_at,
)
_CHECK = (
    ConnectorAccount.checked_at,
    ConnectorAccount.check_ok,
    ConnectorAccount.check_detail,
    ConnectorAccount.check_facts,
)


async def add_connector(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    definition: AccountDefinition,
    *,
    keep_secrets: bool = False,
) -> bool:
    """connectors.manage: adds the account or replaces it; True when it replaced one.
    `keep_secrets`: a secret not given keeps its stored value (Connectors.add)."""

    async def add() -> bool:
        _, replaced = await connectors.add(
            session,
            definition,
            secret_key=runtime.settings.secret_key,
            now=runtime.clock.now(),
            keep_secrets=keep_secrets,
            previous_keys=runtime.settings.previous_keys,
        )
        return replaced

    return await _audited(
        session,
        runtime,
        actor,
        ADD_CONNECTOR,
        definition.name,
        _row(session, _ACCOUNT, ConnectorAccount.name == definition.name),
        add,
    )


async def record_connector_check(
    session: AsyncSession, runtime: Runtime, actor: Actor, name: str, report: CheckReport
) -> None:
    """connectors.manage: keeps a check's verdict on the account (the check itself talks to
    the operator outside any transaction)."""
    await _audited(
        session,
        runtime,
        actor,
        CHECK_CONNECTOR,
        name,
        _row(session, _CHECK, ConnectorAccount.name == name),
        lambda: connectors.record_check(session, name, report, runtime.clock.now()),
    )


async def check_connector(runtime: Runtime, actor: Actor, name: str) -> CheckReport:
    """connectors.manage: the account authenticates with its operator and reads its balance
    or status; no transaction is held while it talks to the network, and the verdict is
    then kept on the account (record_connector_check)."""
    async with unit_of_work(runtime.sessionmaker) as session:
        await connectors.get(session, name)
    async with runtime.sessionmaker() as session:
        report = await connectors.check(session, runtime.operators, name)
    async with unit_of_work(runtime.sessionmaker) as session:
        await record_connector_check(session, runtime, actor, name, report)
    return report


async def set_routes(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    operator: str,
    changes: Mapping[str, str | None],
) -> RouteRow:
    """routes.manage: the operator's routes, by action, before and after."""
    mode = catalogue.find(operator)
    code = operator if mode is None else mode.operator.lower()

    async def routes() -> Mapping[str, Any]:
        found = await _rows(
            session,
            (OperatorRoute.action, OperatorRoute.connector),
            OperatorRoute.operator == code,
            order_by=(OperatorRoute.action,),
        )
        return {row["action"]: row["connector"] for row in found}

    return await _audited(
        session,
        runtime,
        actor,
        SET_ROUTES,
        code,
        routes,
        lambda: connectors.set_routes(session, operator, changes, runtime.clock.now()),
    )


# --- webhooks -------------------------------------------------------------------------

_DELIVERY = (
    WebhookDelivery.merchant_id,
    WebhookDelivery.livemode,
    WebhookDelivery.event,
    WebhookDelivery.url,
    WebhookDelivery.status,
    WebhookDelivery.attempts,
    WebhookDelivery.next_attempt_at,
)


async def resend_webhook_delivery(
    session: AsyncSession, runtime: Runtime, actor: Actor, delivery_id: str
) -> WebhookDelivery:
    """webhooks.resend: the merchant's own "retry now" (webhooks.service.retry), for any
    merchant's delivery."""
    key = parse_uuid(delivery_id)
    state = _row(session, _DELIVERY, WebhookDelivery.id == key)
    found = None if key is None else await state()
    if found is None:
        raise NotFound("Livraison introuvable.")
    owner = Caller(found["merchant_id"], found["livemode"])
    return await _audited(
        session,
        runtime,
        actor,
        RESEND_WEBHOOK,
        str(key),
        state,
        lambda: webhooks.retry(session, runtime, owner, delivery_id),
    )


def _endpoint(session: AsyncSession, merchant_id: str, livemode: bool) -> State:
    """The endpoint's address, never its secret: a rotation shows as its new date."""
    return _row(
        session,
        (WebhookEndpoint.livemode, WebhookEndpoint.url, WebhookEndpoint.updated_at),
        WebhookEndpoint.merchant_id == merchant_id,
        WebhookEndpoint.livemode == livemode,
    )


async def _configure_endpoint(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    action: StaffAction,
    merchant_id: str,
    livemode: bool,
    change: EndpointUpdate,
) -> webhooks.Configured:
    """The merchant's own `PUT /webhooks/endpoint` (webhooks.service.configure)."""
    await merchant_service.get(session, merchant_id)  # every merchant has both endpoints
    return await _audited(
        session,
        runtime,
        actor,
        action,
        merchant_id,
        _endpoint(session, merchant_id, livemode),
        lambda: webhooks.configure(session, runtime, Caller(merchant_id, livemode), change),
    )


async def set_webhook_endpoint(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    livemode: bool,
    url: str | None,
) -> WebhookEndpoint:
    """merchants.manage: the environment's endpoint; None disables notifications."""
    # Unvalidated: the service checks the address (length included) and words its refusal.
    change = EndpointUpdate.model_construct(url=url)
    configured = await _configure_endpoint(
        session, runtime, actor, SET_WEBHOOK_ENDPOINT, merchant_id, livemode, change
    )
    return configured.endpoint


async def rotate_webhook_secret(
    session: AsyncSession, runtime: Runtime, actor: Actor, merchant_id: str, *, livemode: bool
) -> str:
    """merchants.manage. Returns the new signing secret, shown this once (the log has
    only the date it changed)."""
    change = EndpointUpdate.model_construct(rotate_secret=True)
    configured = await _configure_endpoint(
        session, runtime, actor, ROTATE_WEBHOOK_SECRET, merchant_id, livemode, change
    )
    return configured.secret


# --- staff accounts -------------------------------------------------------------------


def _staff(session: AsyncSession, email: str) -> State:
    """What may be shown of the account (never its password hash nor its TOTP secret)."""

    async def read() -> Mapping[str, Any] | None:
        account = await accounts.find(session, STAFF, email)
        return None if account is None else accounts.account_row(account)

    return read


async def create_staff(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    *,
    email: str,
    role: str,
    password: str | None = None,
) -> User:
    """staff.manage: a new account, with a password set or none yet (a one-time link)."""

    async def create() -> User:
        account = await accounts.create(
            session, STAFF, email=email, role=role, now=runtime.clock.now()
        )
        if password is not None:
            await accounts.set_password(session, account, password)
        return account

    return await _audited(
        session, runtime, actor, CREATE_STAFF, email.strip().lower(), _staff(session, email), create
    )


async def _on_account(
    session: AsyncSession,
    email: str,
    now: datetime,
    act: Callable[[AsyncSession, User, datetime], Awaitable[T]],
) -> T:
    return await act(session, await accounts.get(session, STAFF, email, lock=True), now)


async def disable_staff(session: AsyncSession, runtime: Runtime, actor: Actor, email: str) -> User:
    """staff.manage: no more sign-in, and its sessions end at once."""
    return await _audited(
        session,
        runtime,
        actor,
        DISABLE_STAFF,
        email.strip().lower(),
        _staff(session, email),
        lambda: _on_account(session, email, runtime.clock.now(), accounts.disable),
    )


async def link_staff(
    session: AsyncSession, runtime: Runtime, actor: Actor, email: str
) -> IssuedLink:
    """staff.manage: a new one-time sign-in link; the account starts over (sessions ended,
    TOTP enrollment cleared)."""
    return await _audited(
        session,
        runtime,
        actor,
        LINK_STAFF,
        email.strip().lower(),
        _staff(session, email),
        lambda: _on_account(session, email, runtime.clock.now(), accounts.issue_link),
    )


async def invite_member(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    email: str,
    role: str = "owner",
) -> IssuedLink:
    """merchants.manage: a member of the merchant's team (its first owner, most often) and
    their one-time link to the dashboard's welcome page, where they set their password."""
    await merchant_service.get(session, merchant_id)

    async def invite() -> IssuedLink:
        return await accounts.invite_member(
            session, merchant_id, email=email, role=role, now=runtime.clock.now()
        )

    team = partial(accounts.team_row, session, merchant_id)
    return await _audited(session, runtime, actor, INVITE_MEMBER, merchant_id, team, invite)


async def link_member(
    session: AsyncSession, runtime: Runtime, actor: Actor, merchant_id: str, email: str
) -> IssuedLink:
    """merchants.manage: a new one-time link for a member of the merchant's team (an owner who
    lost their password or device, whom no other owner can reset): it resets both."""

    async def issue() -> IssuedLink:
        member = await accounts.get(session, MERCHANT, email, merchant_id=merchant_id, lock=True)
        return await accounts.issue_link(session, member, runtime.clock.now())

    team = partial(accounts.team_row, session, merchant_id)
    return await _audited(session, runtime, actor, LINK_MEMBER, merchant_id, team, issue)


# --- exports and the ledger's check ----------------------------------------------------


async def record_export(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    action: StaffAction,
    what: str,
    wanted: ExportFilter | AuditFilter,
) -> None:
    """exports: who took which rows off the platform, by the file's filters (the rows
    themselves are not copied into the log). Recorded when the file starts."""
    filters = dataclasses.asdict(wanted)
    await record(
        session,
        actor,
        action.name,
        action.resource_type,
        what,
        None,
        filters,
        at=runtime.clock.now(),
    )


async def reconcile(session: AsyncSession, runtime: Runtime, actor: Actor) -> Reconciliation:
    """exports: runs the ledger's check and records its result (cauri.staff.reconciliation)
    with who asked for it."""
    checked = await reconciliation.check(session, runtime.clock.now())
    verdict = {
        "passed": checked.passed,
        "transactions": checked.transactions,
        "discrepancies": len(checked.discrepancies),
    }
    await record(
        session,
        actor,
        RECONCILE.name,
        RECONCILE.resource_type,
        str(checked.id),
        None,
        verdict,
        at=checked.checked_at,
    )
    return checked


async def close_ledger(runtime: Runtime, actor: Actor, through: Month) -> periods.Closed:
    """`cauri ledger close`: every month up to `through` closed (cauri.ledger.periods), each
    in the audit log."""
    now = runtime.clock.now()
    closed = await periods.close_through(runtime.sessionmaker, through, now)
    async with unit_of_work(runtime.sessionmaker) as session:
        for month in closed.months:
            await record(
                session,
                actor,
                CLOSE_LEDGER_MONTH.name,
                CLOSE_LEDGER_MONTH.resource_type,
                str(month),
                None,
                {"month": str(month), "accounts_folded": closed.folded},
                at=now,
            )
    return closed


async def archive_history(
    runtime: Runtime, actor: Actor, before: Month, folder: Path
) -> list[archive.Archived]:
    """`cauri archive`: the history before `before` archived in `folder` (cauri.history.
    archive), each partition's drop in the audit log in its own transaction."""
    return await archive.archive_before(runtime, actor, before, folder, runtime.clock.now())
