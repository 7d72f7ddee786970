"""``noisegauge`` entry point. Subcommands live in their own modules and load lazily."""

from __future__ import annotations

import importlib
from typing import Any

import click

__all__ = ["cli", "main"]

#: name -> "module:attribute" of a click command.
COMMANDS: dict[str, str] = {
    "score": "noisegauge.cli.score:score",
    "stress": "noisegauge.cli.stress:stress",
    "compare": "noisegauge.cli.stress:compare",
    "calibrate": "noisegauge.cli.calibrate:calibrate",
    "report": "noisegauge.cli.report:report",
    "cache": "noisegauge.cli.cache:cache",
}


class LazyGroup(click.Group):
    """Imports a subcommand's module only when that subcommand runs (keeps --help fast)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(super().list_commands(ctx)))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module, _, attr = COMMANDS[cmd_name].partition(":")
            try:
                command: click.Command = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError):
                return None
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup)
@click.version_option(package_name="noisegauge")
def cli() -> None:
    """Measure whether retrieval noise leaks into a RAG system's answers, claim by claim."""


def main(argv: Any = None) -> None:
    cli.main(args=argv, prog_name="noisegauge")
