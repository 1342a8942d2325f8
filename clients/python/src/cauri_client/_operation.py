"""Operations written once, run by either client.

An operation is a function that builds a `Call` (or a `Listing`), declared in a namespace
class with `@operation` (or `@listing`). Read through a namespace of `Cauri`, it sends the
call and returns the result; through one of `AsyncCauri`, it returns a coroutine (a list: an
async iterator). The type checker sees both, from the same declaration.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Generic, ParamSpec, TypeVar, overload

from cauri_client._calls import Call, Listing
from cauri_client._transports import AsyncTransport, SyncTransport

P = ParamSpec("P")
T = TypeVar("T")
Transport = TypeVar("Transport", SyncTransport, AsyncTransport)


class Namespace(Generic[Transport]):
    """The operations on one kind of resource (`cauri.payments`, …)."""

    def __init__(self, transport: Transport) -> None:
        self._transport: Transport = transport


class operation(Generic[P, T]):
    """`@operation` on a function returning a `Call[T]`: the namespace's method sending it."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, namespace: None, owner: type[Any]) -> operation[P, T]: ...
    @overload
    def __get__(self, namespace: Namespace[SyncTransport], owner: type[Any]) -> Callable[P, T]: ...
    @overload
    def __get__(
        self, namespace: Namespace[AsyncTransport], owner: type[Any]
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, namespace: Namespace[Any] | None, owner: type[Any]) -> Any:
        if namespace is None:
            return self
        transport = namespace._transport

        def send(*args: P.args, **kwargs: P.kwargs) -> Any:
            return transport.run(self._build(*args, **kwargs))

        send.__doc__ = self.__doc__
        return send


class listing(Generic[P, T]):
    """`@listing` on a function returning a `Listing[T]`: the namespace's method iterating
    over every item, page after page."""

    def __init__(self, build: Callable[P, Listing[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, namespace: None, owner: type[Any]) -> listing[P, T]: ...
    @overload
    def __get__(
        self, namespace: Namespace[SyncTransport], owner: type[Any]
    ) -> Callable[P, Iterator[T]]: ...
    @overload
    def __get__(
        self, namespace: Namespace[AsyncTransport], owner: type[Any]
    ) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, namespace: Namespace[Any] | None, owner: type[Any]) -> Any:
        if namespace is None:
            return self
        transport = namespace._transport

        def walk(*args: P.args, **kwargs: P.kwargs) -> Any:
            return transport.pages(self._build(*args, **kwargs))

        walk.__doc__ = self.__doc__
        return walk
