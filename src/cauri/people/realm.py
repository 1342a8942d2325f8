"""Whose accounts: the payment company's staff (the console) or merchants' teams (the
dashboard). Every lookup by email, link, session and throttle count is within one realm, so
that an account, a cookie or a link of one is worth nothing in the other."""

from __future__ import annotations

from dataclasses import dataclass

from cauri.models import people


@dataclass(frozen=True)
class Realm:
    name: str
    roles: tuple[str, ...]
    # Roles that move money or hold the keys sign in with a second factor.
    totp_required: frozenset[str]
    # "Aucun compte <whose> n'a l'adresse …"
    whose: str
    # Whom a person without a password asks for a link (the sign-in page), and how they
    # get it (a spent link's refusal).
    new_link_from_person: str
    new_link_from: str

    def requires_totp(self, role: str) -> bool:
        return role in self.totp_required


STAFF = Realm(
    people.STAFF,
    people.STAFF_ROLES,
    frozenset({"admin", "finance"}),
    whose="du personnel",
    new_link_from_person="un administrateur",
    new_link_from="un administrateur (`cauri staff link EMAIL`)",
)
MERCHANT = Realm(
    people.MERCHANT,
    people.MERCHANT_ROLES,
    frozenset({"owner", "finance"}),
    whose="d'équipe marchande",
    new_link_from_person="un propriétaire de votre compte marchand",
    new_link_from="un propriétaire de votre compte marchand (page Équipe), ou au support",
)
REALMS = {realm.name: realm for realm in (STAFF, MERCHANT)}


def of(name: str) -> Realm:
    """The realm of an account (`User.realm`)."""
    return REALMS[name]
