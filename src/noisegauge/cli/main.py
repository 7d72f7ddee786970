"""``noisegauge`` entry point. Subcommands live in their own modules and load lazily."""

from __future__ import annotations

import importlib
import os
import sys
import traceback
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
    "leaks": "noisegauge.cli.leaks:leaks",
    "review": "noisegauge.cli.review:review",
    "estimate": "noisegauge.cli.estimate:estimate",
    "testset": "noisegauge.cli.testset:testset",
}

#: (command, word) -> "module:attribute": a subcommand beside a command that takes its own
#: arguments (``testset export GOLDEN`` beside ``testset DOCS…``); the word wins over a
#: DOCS path of that name (pass ``./export`` for a folder called export).
SUBCOMMANDS: dict[tuple[str, str], str] = {
    ("testset", "export"): "noisegauge.cli.golden:export",
}


def _load(target: str) -> click.Command | None:
    module, _, attr = target.partition(":")
    try:
        command: click.Command = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None
    return command


class LazyGroup(click.Group):
    """Imports a subcommand's module only when that subcommand runs (keeps --help fast)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(super().list_commands(ctx)))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            return _load(COMMANDS[cmd_name])
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        if len(args) >= 2 and (args[0], args[1]) in SUBCOMMANDS:
            command = _load(SUBCOMMANDS[args[0], args[1]])
            if command is not None:
                return f"{args[0]} {args[1]}", command, args[2:]
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup)
@click.version_option(package_name="noisegauge")
def cli() -> None:
    """Measure whether retrieval noise leaks into a RAG system's answers, claim by claim."""


#: A crash (a bug in noisegauge or in a custom judge or pipeline): a traceback and this code,
#: never 1, which means a failed gate.
EXIT_BUG = 4


def main(argv: Any = None) -> None:
    """The console entry point: click's own handling, plus exit codes that keep their
    meaning (Ctrl-C 130, a closed stdout pipe never a traceback, a bug 4)."""
    stdout = sys.stdout
    try:
        code = cli.main(args=argv, prog_name="noisegauge", standalone_mode=False)
    except click.exceptions.Abort:  # click's name for Ctrl-C outside a command's own handling
        click.echo("interrupted", err=True)
        code = 130
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except BrokenPipeError:  # stdout closed (``| head``): nothing more to say to it
        _silence_stdout()
        code = 0
    except SystemExit as exc:
        # click (swapping sys.stdout for a quiet wrapper) and rich (raising while handling
        # the BrokenPipeError) turn a closed stdout into exit 1: a reader that stopped
        # early (``| head``) is not a failed gate.
        broken = isinstance(exc.__context__, BrokenPipeError) or sys.stdout is not stdout
        if exc.code != 1 or not broken:
            raise
        _silence_stdout()
        code = 0
    except Exception:
        from ..infra.secrets import redact_message

        click.echo(redact_message(traceback.format_exc()), err=True)
        click.echo("noisegauge stopped on an unexpected error (a bug, in noisegauge or in a "
                   "custom judge or pipeline); please report it with the traceback above.",
                   err=True)
        code = EXIT_BUG
    try:  # what is still buffered, now: a closed pipe here must not end in exit 120
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        _silence_stdout()
    sys.exit(code if isinstance(code, int) else 0)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
