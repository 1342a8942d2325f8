"""The dashboard's front door (cauri.signin.doors): merchants' teams' pages at /dashboard."""

from __future__ import annotations

from cauri.signin.doors import DASHBOARD

PREFIX = DASHBOARD.prefix
