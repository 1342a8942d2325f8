"""structlog set up once per process; every line carries the request id when there is one.

Every line, Cauri's own and the libraries' (uvicorn, SQLAlchemy, asyncpg: stdlib loggers),
goes through one chain that ends with `redaction.processor` before its renderer: nothing
secret or personal reaches the console or the JSON lines (issue 8: keys and secrets).
"""

from __future__ import annotations

import logging
import sys

import structlog

from cauri.kit import redaction


def configure(json_lines: bool) -> None:
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json_lines
        # Plain tracebacks: rich's are slow to render, and a burst of errors would stall.
        # Colours only for a person's terminal: in a file they are escape codes to wade through.
        else structlog.dev.ConsoleRenderer(
            colors=sys.stdout.isatty() and sys.stderr.isatty(),
            exception_formatter=structlog.dev.plain_traceback,
        )
    )
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        # Rendered to text first, so that the exception's text is redacted too.
        structlog.processors.format_exc_info,
        redaction.processor,
        # Added after the redaction: a level and a time are made here and carry nothing.
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        # One write and flush of the line (PrintLogger goes through print()).
        logger_factory=structlog.WriteLoggerFactory(),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler()
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    # Their own handlers (uvicorn's default config) would print around the redaction. Not
    # uvicorn.access: uvicorn silences it (`access_log=False`) by cutting its propagation.
    for name in ("uvicorn", "uvicorn.error", "sqlalchemy", "asyncpg"):
        library = logging.getLogger(name)
        library.handlers.clear()
        library.propagate = True
