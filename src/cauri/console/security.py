"""The console's front door (cauri.signin.doors): staff's pages at /console."""

from __future__ import annotations

from cauri.signin.doors import CONSOLE

PREFIX = CONSOLE.prefix
