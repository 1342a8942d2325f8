"""The CLI's root: each command (or group of commands) named with its one-line help, its
module imported only when it runs. `cauri --help` lists them all without importing any;
`cauri payments show REF` imports `cauri.cli.payments` and what it needs, not the database
tools of the other twenty groups, nor the web framework."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import typer
from typer import _click as click  # Typer 0.29 carries its own Click: its commands are these
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class Entry:
    """A command of the root: `attribute` of `module`, a Typer app (a group) or a function
    (one command); `help` is what the root's help shows for it."""

    module: str
    attribute: str
    help: str

    def load(self, name: str) -> click.Command:
        target = getattr(importlib.import_module(self.module), self.attribute)
        if isinstance(target, typer.Typer):
            return typer.main.get_group(target)
        single = typer.Typer(add_completion=False)
        single.command(name)(target)
        return typer.main.get_command(single)


class LazyGroup(TyperGroup):
    """A Typer group whose commands are `Entry`s. Listing them (help, completion) shows
    stand-ins carrying their help; resolving one to run it loads the real command."""

    def __init__(self, *, entries: Mapping[str, Entry], before: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.entries = dict(entries)
        self.before = before  # run before any command (not for --help)
        self.loaded: dict[str, click.Command] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.entries)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = self.entries.get(cmd_name)
        if entry is None:
            return None
        return self.loaded.get(cmd_name) or TyperCommand(cmd_name, help=entry.help)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, _, rest = super().resolve_command(ctx, args)
        assert name is not None
        if name not in self.loaded:
            self.loaded[name] = self.entries[name].load(name)
        return name, self.loaded[name], rest

    def invoke(self, ctx: click.Context) -> Any:
        if self.before is not None and not ctx.resilient_parsing:
            self.before()
        return super().invoke(ctx)


def root(name: str, help: str, entries: Sequence[tuple[str, Entry]], before: Any) -> LazyGroup:
    return LazyGroup(
        name=name,
        help=help,
        entries=dict(entries),
        before=before,
        no_args_is_help=True,
    )
