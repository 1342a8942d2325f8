"""structlog set up once per process; every line carries the request id when there is one."""

from __future__ import annotations

import logging

import structlog


def configure(json_lines: bool) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json_lines
        # Plain tracebacks: rich's are slow to render, and a burst of errors would stall.
        else structlog.dev.ConsoleRenderer(exception_formatter=structlog.dev.plain_traceback)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        cache_logger_on_first_use=True,
    )
