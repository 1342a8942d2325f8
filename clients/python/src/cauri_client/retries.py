"""When a call is tried again, and after how long (spec: Errors, Retry rules).

Retried, with growing delays: 429 (after its `Retry-After`), 500 and the gateway errors
(502, 503, 504) a proxy in front of the service answers, and a connection that failed or
timed out. Never retried: any other 4xx (the same request would be refused the same way).
A request that may have been carried out (a 5xx, a timeout after it was sent) is sent again
only when that cannot do a thing twice: a read, a PUT, or a POST carrying an `external_id`.
A 429, or a connection that never opened, did nothing: those are retried in any case.
"""

from __future__ import annotations

from dataclasses import dataclass

from cauri_client.errors import CauriError, ConnectionFailed

SERVICE_INCIDENTS = frozenset({500, 502, 503, 504})
RATE_LIMITED = 429


@dataclass(frozen=True)
class RetryPolicy:
    """`max_attempts` counts the first one (1: never retry). The n-th retry waits
    `initial_delay * 2 ** (n - 1)` seconds, at most `max_delay`, or the `Retry-After` the
    API asked for when longer; past `max_delay`, the error is raised rather than waited on."""

    max_attempts: int = 3
    initial_delay: float = 0.5
    max_delay: float = 30.0

    def delay(self, attempt: int, error: CauriError, replayable: bool) -> float | None:
        """Seconds to wait before trying again after `attempt` failed with `error`; None:
        raise it."""
        if attempt >= self.max_attempts or not _may_retry(error, replayable):
            return None
        wait = self.initial_delay * 2.0 ** (attempt - 1)
        if error.retry_after is not None:
            if error.retry_after > self.max_delay:
                return None
            wait = max(wait, error.retry_after)
        return min(wait, self.max_delay)


NEVER = RetryPolicy(max_attempts=1)


def _may_retry(error: CauriError, replayable: bool) -> bool:
    if isinstance(error, ConnectionFailed):
        return replayable or not error.sent
    if error.http_status == RATE_LIMITED:
        return True
    return error.http_status in SERVICE_INCIDENTS and replayable
