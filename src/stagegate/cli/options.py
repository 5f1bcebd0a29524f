"""The command line's parts beneath the commands: finding the migration file, the
state a command gets (``Context``), the shared options and their completion, and the
group that takes ``-f/--file`` after the command name too (``hoist_file``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from stagegate.errors import StagegateError, UsageError

if TYPE_CHECKING:
    from stagegate.model import Migration

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("text", "json", "github")

MIGRATION_FILE = "migration.yaml"


def discover(start: Path | None = None) -> str:
    """``migration.yaml`` in ``start`` (default: the current folder) or the nearest folder
    above it, up to the root of the git repository that holds it, as git finds its own
    repository; the path is shown relative to ``start``. Outside a repository only
    ``start`` itself is looked in. Nothing found: ``migration.yaml`` (whose absence
    the loader reports with what to do)."""
    here = (start or Path.cwd()).resolve()
    folders = [here, *here.parents]
    top = next((i for i, f in enumerate(folders) if (f / ".git").exists()), 0)
    for folder in folders[: top + 1]:
        if (folder / MIGRATION_FILE).is_file():
            return (
                os.path.relpath(folder / MIGRATION_FILE, here) if folder != here else MIGRATION_FILE
            )
    return MIGRATION_FILE


class Context:
    def __init__(self, file: str | None = None) -> None:
        self.show_traceback = False
        """``--traceback``: an internal error prints its traceback."""
        self.given: str | None = file
        """The file named by -f/--file or $STAGEGATE_FILE; None: found by ``discover``."""
        self._migration: Migration | None = None

    @property
    def file(self) -> str:
        if self.given is None:
            self.given = discover()
        return self.given

    @file.setter
    def file(self, value: str) -> None:
        self.given, self._migration = value, None

    def migration(self) -> Migration:
        if self._migration is None:
            from stagegate.validation import load

            if self.given is None and not Path(self.file).exists():
                raise UsageError(
                    f"{MIGRATION_FILE}: no such file; run stagegate in the folder that holds "
                    f"{MIGRATION_FILE} or one below it in its git repository, or pass -f PATH "
                    f"(or set $STAGEGATE_FILE); looked in {Path.cwd()} and the folders above it "
                    "up to the repository's top."
                )

            self._migration = load(self.file)
        return self._migration

    def stage(self, value: int | None) -> int:
        migration = self.migration()
        if value is None:
            return migration.stage
        if not 0 <= value <= migration.last:
            raise UsageError(
                f"stage {value} does not exist; {migration.file} has stages 0..{migration.last}."
            )
        return value


# --------------------------------------------------------------------------- options


option = click.option
argument = click.argument
pass_ctx = click.make_pass_decorator(Context)


# --------------------------------------------------------------------------- completion


def completing(ctx: click.Context) -> Migration | None:
    """The migration a completion offers values from: the file given on the line (or
    $STAGEGATE_FILE), else the one ``discover`` finds; None when it cannot be loaded
    (completion then offers nothing rather than an error in the shell)."""
    given = ctx.find_root().params.get("file") or os.environ.get("STAGEGATE_FILE")
    try:
        from stagegate.validation import load

        return load(given or discover())
    except (StagegateError, OSError):
        return None


def complete_ids(kind: str) -> Callable[..., list[Any]]:
    """Completion of ``kind`` names (``flags``, ``producers``, ``consumers``,
    ``releases``) from the migration, each with its summary as help."""

    def complete(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
        migration = completing(ctx)
        if migration is None:
            return []
        found = getattr(migration, kind)
        return [
            click.shell_completion.CompletionItem(name, help=" ".join(item.summary.split()))
            for name, item in found.items()
            if name.startswith(incomplete)
        ]

    return complete


def complete_stage(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    """Completion of stage numbers 0..last, each with its title as help."""
    migration = completing(ctx)
    if migration is None:
        return []
    return [
        click.shell_completion.CompletionItem(str(n), help=migration.title(n))
        for n in range(migration.last + 1)
        if str(n).startswith(incomplete)
    ]


def complete_file(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    """``-f FILE``: the shell completes file names."""
    return [click.shell_completion.CompletionItem(incomplete, type="file")]


def format_option(
    choices: tuple[str, ...] = FORMATS, *, default: str = "text", help: str = "Output format."
) -> Callable[[F], F]:
    return option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=default,
        show_default=True,
        help=help,
    )


def stage_option(
    help_text: str = "Stage to show (default: the current stage).",
) -> Callable[[F], F]:
    return option(
        "--stage",
        "stage",
        type=int,
        default=None,
        metavar="N",
        help=help_text,
        shell_complete=complete_stage,
    )


def commits_options(base_help: str, head_help: str) -> Callable[[F], F]:
    """``--base REF`` (required) and ``--head REF`` (default HEAD): the two commits that
    verify-pr, affected and continuity compare; ``--base``'s help ends with what to give
    it in GitHub Actions."""
    in_actions = " (in GitHub Actions: ${{ github.event.pull_request.base.sha }})."
    base = option("--base", required=True, metavar="REF", help=base_help + in_actions)
    head = option("--head", default="HEAD", show_default=True, metavar="REF", help=head_help)
    return lambda function: base(head(function))


FILE_HELP = (
    "The migration file, before or after the command (default: $STAGEGATE_FILE, else "
    "migration.yaml in this folder or the nearest one above it inside the git repository)."
)


_GROUP_VALUED = ("-f", "--file")
"""The group's options that take a value (the others are flags)."""


def hoist_file(args: list[str], commands: Any, *, strict: bool = True) -> list[str]:
    """``args`` with a ``-f FILE`` given after the command moved before it, where click
    reads the group's options: ``validate -f ci/migration.yaml`` (pre-commit appends a
    hook's ``args:`` after its entry) is ``-f ci/migration.yaml validate``. A command
    with an ``-f`` or ``--file`` of its own keeps it; nothing after ``--`` moves."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        i += 2 if args[i] in _GROUP_VALUED else 1
    if i >= len(args) or args[i] not in commands:
        return args
    own = {o for p in commands[args[i]].params for o in getattr(p, "opts", ())}
    if own & {"-f", "--file"}:
        return args
    moved: list[str] = []
    kept: list[str] = []
    rest = iter(args[i + 1 :])
    for arg in rest:
        if arg == "--":
            kept += [arg, *rest]
        elif arg in _GROUP_VALUED:
            value = next(rest, None)
            if value is None:
                if not strict:  # completing `-f <TAB>`: click completes the value
                    return args
                raise click.UsageError(
                    f"option {arg} needs a value: the migration file, e.g. {arg} ci/migration.yaml."
                )
            moved += ["--file", value]
        elif arg.startswith("--file="):
            moved.append(arg)
        elif arg.startswith("-f") and len(arg) > 2 and not arg.startswith("--"):
            moved += ["--file", arg[2:]]
        else:
            kept.append(arg)
    return [*args[:i], *moved, args[i], *kept]


class Group(click.Group):
    """The group whose ``-f/--file`` may also come after the command name, as pre-commit's
    ``args:`` and most habits put it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        strict = not ctx.resilient_parsing
        return super().parse_args(ctx, hoist_file(list(args), self.commands, strict=strict))
