"""The CSV files the pages behind a door send (the console's exports and audit log, the
dashboard's statements): streamed from a session of their own, which the request's end
does not close, closed when the file ends or the download is abandoned."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi.responses import StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession


async def _closing_after(
    session: AsyncSession, lines: AsyncIterator[str], first: tuple[str, ...]
) -> AsyncIterator[str]:
    try:
        for line in first:
            yield line
        async for line in lines:
            yield line
    finally:
        await session.close()


def csv_file(
    session: AsyncSession, lines: AsyncIterator[str], name: str, *first: str
) -> StreamingResponse:
    """`name`.csv as an attachment: `first` (lines already read, to refuse a request before
    the file starts), then `lines`, read in `session`."""
    return StreamingResponse(
        _closing_after(session, lines, first),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}.csv"'},
    )
