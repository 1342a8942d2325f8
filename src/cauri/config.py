"""Every CAURI_* setting, read from the environment (DESIGN: operator-facing contract)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SECRET_KEY_MIN_LENGTH = 32


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CAURI_", extra="ignore")

    database_url: str | None = None
    # Where a worker LISTENs for enqueued jobs (unset: database_url). A LISTEN lives in its
    # server session, which a pooler in transaction mode hands to other clients: name
    # PostgreSQL itself here when database_url is such a pooler.
    database_listen_url: str | None = None
    # False behind a pooler in transaction mode that does not carry prepared statements from
    # one server connection to another (PgBouncer before 1.21, or its
    # max_prepared_statements = 0): every statement is then parsed anew, unnamed.
    database_prepared_statements: bool = True
    data_dir: Path = Path(".cauri")
    redis_url: str | None = None
    rate_limit: str = "120/minute"
    # Operators' notifications, per address, counted apart from the merchants' requests.
    callback_rate_limit: str = "1200/minute"
    # Customers' pages (checkout, card), per address: a carrier's customers share addresses.
    checkout_rate_limit: str = "1200/minute"
    # What those pages' forms post (payments tried, link sessions opened), per address.
    checkout_attempt_rate_limit: str = "300/10minutes"
    trusted_proxies: str = ""
    test_settle_delay: float = 10.0
    webhook_retry_delays: str = "10,60,300,1800"
    webhook_timeout: float = 10.0
    # Each TCP handshake of an attempt, within webhook_timeout (issue 8: at most 3 s).
    webhook_connect_timeout: float = 3.0
    # Where notifications may go besides public HTTPS addresses (webhooks/url_safety.py):
    # anywhere over http or https (tests, private networks), or this machine's loopback,
    # which `cauri serve` allows when it serves on loopback only and this is not set.
    webhook_allow_private: bool = False
    webhook_allow_loopback: bool | None = None
    # Deliveries of one endpoint (a merchant's environment) running at once, across workers.
    webhook_endpoint_concurrency: int = 4
    # Failures in a row that open an endpoint's circuit breaker, and how long it stays open.
    webhook_breaker_threshold: int = 10
    webhook_breaker_cooldown: float = 60.0
    plan_lifetime_days: int = 60
    # Seconds a card payment may stay pending (the customer never decided on the page)
    # before it is failed.
    card_payment_ttl: float = Field(default=86_400.0, gt=0)
    # Base URL customers reach the hosted payment page at. Required off loopback; on loopback
    # the server's own bound address (never the request's Host header).
    public_url: str | None = None
    # Status queries of an operator request whose outcome is unknown: after these delays
    # (seconds), then every operator_poll_interval until operator_poll_horizon after the
    # request, when it is flagged for manual review (never failed by guess).
    operator_poll_delays: str = "30,120,600,3600"
    operator_poll_interval: float = 6 * 3600.0
    operator_poll_horizon: float = 7 * 86400.0
    # Encrypts connector credentials at rest (cauri.connectors.secrets); 32+ characters.
    # Required once a live connector is added or built.
    secret_key: str | None = Field(default=None, repr=False)
    # Keys CAURI_SECRET_KEY replaced, comma-separated: they still decrypt (never encrypt)
    # until `cauri secrets rotate` has re-encrypted everything with CAURI_SECRET_KEY.
    previous_secret_keys: str = Field(default="", repr=False)
    # Seconds for a whole exchange with an operator, and for its TCP connection within it.
    operator_timeout: float = Field(default=30.0, gt=0)
    operator_connect_timeout: float = Field(default=5.0, gt=0)
    # The staff console's sessions: closed after this many minutes without a request, and
    # after this many hours whatever happens.
    console_idle_minutes: int = Field(default=30, gt=0)
    console_session_hours: int = Field(default=12, gt=0)
    log_json: bool = False
    # Serves GET /metrics to `Authorization: Bearer <this>`; unset, /metrics is a 404.
    metrics_token: str | None = Field(default=None, repr=False)
    # Set by `cauri serve --no-worker`; read by each server process.
    run_worker: bool = True
    worker_concurrency: int = 32
    worker_poll_interval: float = 1.0
    job_lease_seconds: float = 60.0
    # The platform's days (an IANA name): the days finance reconciles and the daily run's
    # hour are in it. West Africa's is UTC; Congo-Brazzaville's `Africa/Brazzaville`, UTC+1.
    time_zone: str = "UTC"
    # `cauri archive`: the history kept in the database, in months (a month leaves once it
    # is this far behind the current one), and where pg_dump and pg_restore are (unset: the
    # embedded PostgreSQL's, which dump any server up to their own version).
    history_retention_months: int = Field(default=12, ge=1)
    pg_programs: Path | None = None

    @field_validator("webhook_retry_delays", "operator_poll_delays")
    @classmethod
    def _delays_are_numbers(cls, value: str) -> str:
        [float(part) for part in value.split(",") if part.strip()]
        return value

    @field_validator("time_zone")
    @classmethod
    def _time_zone_is_known(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"CAURI_TIME_ZONE: unknown time zone {value!r} (an IANA name: UTC, "
                "Africa/Abidjan, Africa/Brazzaville)"
            ) from None
        return value

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)

    @field_validator("secret_key")
    @classmethod
    def _secret_key_is_long(cls, value: str | None) -> str | None:
        if value is not None and len(value) < SECRET_KEY_MIN_LENGTH:
            raise ValueError(
                f"CAURI_SECRET_KEY must be at least {SECRET_KEY_MIN_LENGTH} characters long "
                f"(it has {len(value)}); e.g. the output of `openssl rand -hex 32`"
            )
        return value

    @field_validator("previous_secret_keys")
    @classmethod
    def _previous_keys_are_long(cls, value: str) -> str:
        for position, key in enumerate(_listed(value), start=1):
            if len(key) < SECRET_KEY_MIN_LENGTH:
                raise ValueError(
                    f"CAURI_PREVIOUS_SECRET_KEYS: key {position} must be at least "
                    f"{SECRET_KEY_MIN_LENGTH} characters long (it has {len(key)})"
                )
        return value

    @property
    def previous_keys(self) -> tuple[str, ...]:
        return tuple(_listed(self.previous_secret_keys))

    @property
    def retry_delays(self) -> list[float]:
        return _seconds(self.webhook_retry_delays)

    @property
    def poll_delays(self) -> list[float]:
        return _seconds(self.operator_poll_delays)


def _listed(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _seconds(listed: str) -> list[float]:
    return [float(part) for part in _listed(listed)]


@lru_cache
def get_settings() -> Settings:
    return Settings()
