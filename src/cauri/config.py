"""Every CAURI_* setting, read from the environment (DESIGN: operator-facing contract)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CAURI_", extra="ignore")

    database_url: str | None = None
    data_dir: Path = Path(".cauri")
    redis_url: str | None = None
    rate_limit: str = "120/minute"
    trusted_proxies: str = ""
    test_settle_delay: float = 10.0
    webhook_retry_delays: str = "10,60,300,1800"
    webhook_timeout: float = 10.0
    webhook_allow_private: bool = False
    plan_lifetime_days: int = 60
    # Base URL customers reach the hosted payment page at. Required off loopback; on loopback
    # the server's own bound address (never the request's Host header).
    public_url: str | None = None
    log_json: bool = False
    # Set by `cauri serve --no-worker`; read by each server process.
    run_worker: bool = True
    worker_concurrency: int = 32
    worker_poll_interval: float = 1.0
    job_lease_seconds: float = 60.0
    # "package.module:NAME", a mapping of extra job kinds to handlers (tests use it to run
    # a real `cauri worker` on test-only kinds).
    extra_job_handlers: str | None = None

    @field_validator("webhook_retry_delays")
    @classmethod
    def _delays_are_numbers(cls, value: str) -> str:
        [float(part) for part in value.split(",") if part.strip()]
        return value

    @property
    def retry_delays(self) -> list[float]:
        return [float(part) for part in self.webhook_retry_delays.split(",") if part.strip()]


@lru_cache
def get_settings() -> Settings:
    return Settings()
