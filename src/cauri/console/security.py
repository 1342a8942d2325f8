"""The console's front door: staff's pages at /console, with their own cookies (cauri.signin
writes what every door's responses and forms carry)."""

from __future__ import annotations

from cauri.people.realm import STAFF
from cauri.signin.door import Door

CONSOLE = Door(STAFF, "/console", "console", layout="console/layout.html", where="la console")
PREFIX = CONSOLE.prefix
SESSION_COOKIE = CONSOLE.session_cookie
