"""Test mode's numbers (a `sk_test_` key): the last four digits of the phone number decide
what the simulated operator does, for payments, instalments, payouts and refunds alike.

    from cauri_client import testing

    paid = testing.number(testing.SUCCEEDS)
    cauri.payments.create(amount=5000, operator="mtn", phone_number=paid)

A card payment stays pending until decided on its hosted page, or with
`cauri.test_helpers.succeed_payment(reference)` / `fail_payment`.
"""

from __future__ import annotations

SUCCEEDS = "0000"
"""Succeeded at once."""

REFUSED = "0001"
"""Refused at initiation: 402 `payment_failed` (a payout: `payout_failed`)."""

STAYS_PENDING = "0002"
"""Stays pending (decide it with `cauri.test_helpers`)."""

FAILS_LATER = "0003"
"""Pending, then failed (a payout's balance is credited back)."""

SUCCEEDS_LATER = "0004"
"""Any other ending: pending, then succeeded after the service's settle delay (10 s by
default)."""

MTN_BENIN = "2299700"
"""A Benin MTN prefix (country code 229): with four digits more, a number `mtn` takes."""


def number(outcome: str, prefix: str = MTN_BENIN) -> str:
    """The test number that has `outcome` (one of the endings above) for an operator of the
    prefix's country."""
    return prefix + outcome
