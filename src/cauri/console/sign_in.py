"""The console's sign-in pages (cauri.signin.routes, for the staff's door)."""

from __future__ import annotations

from cauri.console.rendering import ConsoleRoute, render
from cauri.console.security import CONSOLE
from cauri.signin.routes import sign_in_routes

WELCOME_PATH = CONSOLE.welcome_path
router = sign_in_routes(CONSOLE, render, ConsoleRoute)
