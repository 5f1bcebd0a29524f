"""The command line: parse, call one function, render, return the exit code.

Only this module imports click, prints or exits. Heavy modules (jsonschema, git,
the glob engine) are imported inside the commands that need them.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import click

from . import __version__
from .errors import EXIT_INTERNAL, EXIT_INVALID, InvalidInput, StagegateError, UsageError
from .model import Migration
from .words import counted

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
            from .validation import load

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


pass_ctx = click.make_pass_decorator(Context)


def format_option(choices: tuple[str, ...] = FORMATS) -> Callable[[Any], Any]:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default="text",
        show_default=True,
        help="Output format.",
    )


def stage_option(
    help_text: str = "Stage to show (default: the current stage).",
) -> Callable[[Any], Any]:
    return click.option("--stage", "stage", type=int, default=None, metavar="N", help=help_text)


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
    head, name, tail = args[:i], args[i], args[i + 1 :]
    moved: list[str] = []
    kept: list[str] = []
    j = 0
    while j < len(tail):
        arg = tail[j]
        if arg == "--":
            kept += tail[j:]
            break
        if arg in _GROUP_VALUED:
            if j + 1 == len(tail):
                if not strict:  # completing `-f <TAB>`: click completes the value
                    return args
                raise click.UsageError(
                    f"option {arg} needs a value: the migration file, e.g. {arg} ci/migration.yaml."
                )
            moved += ["--file", tail[j + 1]]
            j += 2
            continue
        if arg.startswith("--file="):
            moved.append(arg)
        elif arg.startswith("-f") and len(arg) > 2 and not arg.startswith("--"):
            moved += ["--file", arg[2:]]
        else:
            kept.append(arg)
        j += 1
    return [*head, *moved, name, *kept]


class Group(click.Group):
    """The group whose ``-f/--file`` may also come after the command name, as pre-commit's
    ``args:`` and most habits put it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        strict = not ctx.resilient_parsing
        return super().parse_args(ctx, hoist_file(list(args), self.commands, strict=strict))


@click.group(
    cls=Group,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "-f",
    "--file",
    "file",
    default=None,
    envvar="STAGEGATE_FILE",
    show_envvar=True,
    metavar="FILE",
    help=FILE_HELP,
)
@click.option(
    "--traceback", "show_traceback", is_flag=True, help="Show the traceback of an internal error."
)
@click.version_option(__version__, "-V", "--version", prog_name="stagegate")
@click.pass_context
def cli(click_ctx: click.Context, file: str | None, show_traceback: bool) -> None:
    """Staged-migration feature flags for build, test and release pipelines.

    A migration.yaml declares ordered stages, the flags each stage sets, and which
    producers, consumers and release paths each flag gates. stagegate proves at
    every stage that the existing release still selects exactly what it did.
    """
    if show_traceback:
        os.environ["STAGEGATE_TRACEBACK"] = "1"
    click_ctx.obj = Context(file)


@cli.command()
@format_option()
@pass_ctx
def validate(ctx: Context, fmt: str) -> int:
    """Check the migration and its stage files: schema and meaning."""
    from .report.github import annotation, placed, write_summary

    try:
        migration = ctx.migration()
    except InvalidInput as error:
        if fmt == "json":
            from .report.plans import dumps

            problems = [
                {
                    "file": p.loc.file,
                    "line": p.loc.line,
                    "col": p.loc.col,
                    "path": p.path,
                    "message": p.message,
                }
                for p in error.problems
            ]
            click.echo(dumps({"ok": False, "problems": problems}))
            return EXIT_INVALID
        if fmt == "github":
            for p in error.problems:
                click.echo(
                    annotation(
                        "error",
                        f"{p.path}: {p.message}" if p.path else p.message,
                        placed(p.loc),
                        "stagegate validate",
                    )
                )
            write_summary(
                f"### stagegate validate\n\n{counted(len(error.problems), 'problem')} in the migration files."
            )
        raise
    count = len(migration.stages)
    if fmt == "json":
        from .report.plans import dumps

        click.echo(dumps({"ok": True, "problems": [], "stage": migration.stage, "stages": count}))
    else:
        counts = ", ".join(
            counted(n, noun)
            for n, noun in (
                (count, "stage file"),
                (len(migration.flags), "flag"),
                (len(migration.producers), "producer"),
                (len(migration.consumers), "consumer"),
                (len(migration.releases), "release"),
            )
        )
        click.echo(
            f"{migration.file}: valid: {counts}; at stage {migration.stage} of {migration.last}."
        )
        if fmt == "github":
            write_summary(
                f"### stagegate validate\n\n`{migration.file}` is valid (stage {migration.stage} of {migration.last})."
            )
    return 0


@cli.command()
@format_option()
@pass_ctx
def status(ctx: Context, fmt: str) -> int:
    """The current stage, its flags, and what the next flip would change."""
    from .report.plans import dumps, status_json, status_text

    migration = ctx.migration()
    click.echo(dumps(status_json(migration)) if fmt == "json" else status_text(migration))
    return 0


@cli.command()
@stage_option()
@click.option(
    "--rows",
    "show_rows",
    is_flag=True,
    help="List every artifact row instead of one line per template.",
)
@format_option()
@pass_ctx
def plan(ctx: Context, stage: int | None, show_rows: bool, fmt: str) -> int:
    """Active flags, producers (with artifact rows), consumers and releases at a stage."""
    from .report.plans import dumps, plan_json, plan_text
    from .resolve import resolve

    resolved = resolve(ctx.migration(), ctx.stage(stage))
    click.echo(
        dumps(plan_json(resolved)) if fmt == "json" else plan_text(resolved, show_rows=show_rows)
    )
    return 0


@cli.command()
@click.argument("stages", nargs=-1, type=int, metavar="[A] B")
@format_option()
@pass_ctx
def diff(ctx: Context, stages: tuple[int, ...], fmt: str) -> int:
    """What turns on and off between stage A (default: current) and B."""
    from .report.plans import change_json, change_text, dumps
    from .resolve import diff as compute

    if len(stages) not in (1, 2):
        raise UsageError(
            "diff takes one or two stages: `stagegate diff B` or `stagegate diff A B`."
        )
    a, b = (
        (ctx.stage(None), ctx.stage(stages[0]))
        if len(stages) == 1
        else (ctx.stage(stages[0]), ctx.stage(stages[1]))
    )
    change = compute(ctx.migration(), a, b)
    click.echo(
        dumps(change_json(change)) if fmt == "json" else change_text(ctx.migration(), change)
    )
    return 0


def _neighbour_option(kind: str) -> Callable[[Any], Any]:
    return click.option(
        f"--{kind}",
        f"{kind}s",
        multiple=True,
        metavar="ID",
        help=f"Draw only the neighbourhood of this {kind} (repeatable; combines with the others).",
    )


@cli.command()
@stage_option()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("mermaid", "dot")),
    default="mermaid",
    show_default=True,
    help="Picture source.",
)
@_neighbour_option("producer")
@_neighbour_option("consumer")
@_neighbour_option("release")
@click.option("--no-legend", is_flag=True, help="Leave the legend out (Mermaid).")
@pass_ctx
def graph(
    ctx: Context,
    stage: int | None,
    fmt: str,
    producers: tuple[str, ...],
    consumers: tuple[str, ...],
    releases: tuple[str, ...],
    no_legend: bool,
) -> int:
    """Producers -> artifacts -> consumers and releases, as Mermaid or Graphviz source."""
    from .report.graph import build, dot, mermaid, neighbourhood
    from .resolve import resolve

    migration = ctx.migration()
    resolved = resolve(migration, ctx.stage(stage))
    picture = build(resolved)
    named = {"producer": producers, "consumer": consumers, "release": releases}
    if any(named.values()):
        for kind, ids in named.items():
            declared: dict[str, Any] = getattr(migration, f"{kind}s")
            active = set(getattr(picture, f"{kind}s"))
            for item in ids:
                if item not in declared:
                    import difflib

                    close = difflib.get_close_matches(item, list(declared), n=1)
                    hint = f"; did you mean {close[0]!r}?" if close else ""
                    raise UsageError(f"no {kind} {item!r} in {migration.file}{hint}")
                if item not in active:
                    raise UsageError(
                        f"{kind} {item} is not active at stage {resolved.stage}; "
                        f"`stagegate plan --stage {resolved.stage}` lists what is."
                    )
        picture = neighbourhood(
            picture, producers=producers, consumers=consumers, releases=releases
        )
    click.echo(
        mermaid(resolved, picture, legend=not no_legend)
        if fmt == "mermaid"
        else dot(resolved, picture)
    )
    return 0


def shown_changes(top: Path, changed: dict[str, set[int]]) -> dict[str, set[int]]:
    """Changed lines keyed by the files as stagegate shows them (from the current folder)."""
    return {os.path.normpath(os.path.relpath(top / name)): lines for name, lines in changed.items()}


def _pull_request_changes(migration: Migration) -> dict[str, set[int]] | None:
    """In a pull request's job (``$GITHUB_BASE_REF`` set): the lines the work tree changed
    since its merge base with the base branch, so that annotations land where the diff
    shows them. None where that cannot be known (a shallow clone without the base)."""
    base = os.environ.get("GITHUB_BASE_REF")
    if not base:
        return None
    from .errors import GitError
    from .gitrepo import open_repository

    try:
        repo = open_repository(migration.root if str(migration.root) else ".")
        head = repo.head() or "HEAD"
        for ref in (f"origin/{base}", base):
            try:
                start = repo.merge_base(repo.resolve(ref), head, shown=(ref, "HEAD"))
            except GitError:
                continue
            return shown_changes(repo.root, repo.changed_lines(start))
    except GitError:
        return None
    return None


@contextlib.contextmanager
def _watching(fmt: str) -> Iterator[None]:
    """While a command that prints its report at the end runs its checks: the live line on
    a terminal, a line every 30 s in a log (on standard error for JSON)."""
    from .checks.runner import observing
    from .report.live import Live

    write, tty = _writer(err=fmt == "json")
    with Live(None, write, tty=tty, show_results=False) as live, observing(live):
        yield


def _writer(err: bool = False) -> tuple[Callable[[str], None], bool]:
    """A write-and-flush to standard output (or error), and whether it is a terminal."""
    stream = sys.stderr if err else sys.stdout

    def write(text: str) -> None:
        stream.write(text)
        stream.flush()

    isatty = getattr(stream, "isatty", None)
    # a dumb terminal cannot erase a line: it gets the log's heartbeat instead
    return write, bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


@cli.command()
@stage_option("Evaluate at this stage (default: the current stage).")
@click.option("--all", "every", is_flag=True, help="Every stage 0..last, each evaluated at itself.")
@click.option("--fail-fast", "-x", is_flag=True, help="Stop at the first failing check.")
@click.option("--quiet", "-q", is_flag=True, help="Show only failures and the closing line.")
@format_option()
@pass_ctx
def check(
    ctx: Context, stage: int | None, every: bool, fail_fast: bool, quiet: bool, fmt: str
) -> int:
    """Run the invariants and a stage's acceptance checks; exit 1 on any failure.

    Each stage's header is shown when it starts and each check's line when it
    finishes, with its duration; a long check shows a live line on a terminal and a
    line every 30 s in a CI log."""
    from .checks.runner import checks_at, run_all, run_checks
    from .report import results as render
    from .report.github import write_summary
    from .report.live import Live
    from .report.plans import dumps

    migration = ctx.migration()
    if every and stage is not None:
        raise UsageError("give either --stage N or --all, not both.")
    at = ctx.stage(stage)
    # JSON is one object at the end on standard output; its live line goes to standard error
    write, tty = _writer(err=fmt == "json")
    live = Live(migration, write, tty=tty, quiet=quiet, show_results=fmt != "json")
    with live:
        if every:
            found = run_all(migration, observer=live, fail_fast=fail_fast)
        else:
            found = run_checks(migration, at, observer=live, fail_fast=fail_fast)
    stages = range(migration.last + 1) if every else (at,)
    planned = sum(len(checks_at(migration, s)) for s in stages)
    live.close(stopped=planned - live.checks_run if fail_fast and not render.ok(found) else None)
    if fmt == "json":
        click.echo(dumps(render.as_json(migration, found, stage=at, every=every)))
    elif fmt == "github":
        annotations = render.workflow_commands(found, _pull_request_changes(migration))
        if annotations:
            click.echo(annotations)
        heading = "stagegate check --all" if every else f"stagegate check (stage {at})"
        write_summary(render.summary(migration, found, heading))
    return 0 if render.ok(found) else 1


@cli.command()
@stage_option("Audit at this stage (default: the current stage).")
@format_option((*FORMATS, "markdown"))
@click.option(
    "--blame", is_flag=True, help="Add the commit, author and age of each leftover's line."
)
@pass_ctx
def audit(ctx: Context, stage: int | None, fmt: str, blame: bool) -> int:
    """What retired legacy left behind, stale flags, and the burndown; exit 1 on leftovers."""
    from .audit import search
    from .report import audit as render
    from .report.github import write_summary

    at = ctx.stage(stage)
    report = search(ctx.migration(), at, blame=blame)
    if fmt == "json":
        from .report.plans import dumps

        click.echo(dumps(render.as_json(report)))
    elif fmt == "markdown":
        click.echo(render.markdown(report))
    else:
        if fmt == "github":
            annotations = render.workflow_commands(report)
            if annotations:
                click.echo(annotations)
            write_summary(render.markdown(report))
        click.echo(render.text(report))
    return 0 if report.ok else 1


def _flip_report(flip: Any, command: str, pr_body: str | None, fmt: str) -> int:
    """Render advance/rollback; write the pull-request description when the checks pass."""
    from .report import flips
    from .report import results as render
    from .report.flipdoc import markdown
    from .report.github import write_summary
    from .report.plans import dumps

    if flip.ok and pr_body:
        from pathlib import Path

        from .flip import write_atomic

        body = markdown(flip.migration, flip.old, flip.new, flip.results)
        write_atomic(Path(pr_body), body.encode("utf-8"))
    if fmt == "json":
        click.echo(dumps(flips.flip_json(flip, command)))
    else:
        if fmt == "github":
            annotations = render.workflow_commands(list(flip.results))
            if annotations:
                click.echo(annotations)
        click.echo(flips.flip_text(flip, command))
        if fmt == "github":
            write_summary(markdown(flip.migration, flip.old, flip.new, flip.results))
    return 0 if flip.ok else 1


def _writable_file(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """Refuse a --pr-body that cannot be written before anything runs, not after the flip."""
    if value is None:
        return None
    from pathlib import Path

    path, folder = Path(value), Path(value).parent
    if path.is_dir():
        raise click.BadParameter(f"{value} is a folder; name a file to write.")
    if path.exists() and not path.is_file():
        raise click.BadParameter(
            f"{value} is not a regular file (a named pipe or a device?); stagegate writes "
            "only regular files: name a file to write."
        )
    if not folder.is_dir():
        raise click.BadParameter(
            f"folder {folder} does not exist; create it, or name a file elsewhere."
        )
    if not os.access(folder, os.W_OK):
        raise click.BadParameter(f"folder {folder} cannot be written; name a file elsewhere.")
    return value


def pr_body_option() -> Callable[[Any], Any]:
    return click.option(
        "--pr-body",
        "pr_body",
        default=None,
        callback=_writable_file,
        metavar="FILE",
        help="Write a Markdown description of the flip (title, outcome, what turns on and off, "
        "check results, Mermaid graph) to FILE, for the pull request; with --dry-run too. "
        "Written only when the checks pass.",
    )


@cli.command()
@click.option(
    "--to",
    "to",
    type=int,
    default=None,
    metavar="N",
    help="Advance to stage N; the checks of every stage in between must pass too.",
)
@click.option(
    "--dry-run", is_flag=True, help="Print the diff and the check results; write nothing."
)
@pr_body_option()
@format_option()
@pass_ctx
def advance(ctx: Context, to: int | None, dry_run: bool, pr_body: str | None, fmt: str) -> int:
    """Set `stage:` to the next stage (or N) once its checks pass; only that line changes."""
    from .flip import advance as run

    with _watching(fmt):
        flip = run(ctx.file, to=to, dry_run=dry_run)
    return _flip_report(flip, "advance", pr_body, fmt)


@cli.command()
@click.option(
    "--dry-run", is_flag=True, help="Print the diff and the check results; write nothing."
)
@pr_body_option()
@format_option()
@pass_ctx
def rollback(ctx: Context, dry_run: bool, pr_body: str | None, fmt: str) -> int:
    """Set `stage:` one lower; refused where the current stage is not reversible."""
    from .flip import rollback as run

    with _watching(fmt):
        flip = run(ctx.file, dry_run=dry_run)
    return _flip_report(flip, "rollback", pr_body, fmt)


@cli.command("verify-pr")
@click.option(
    "--base",
    "base",
    required=True,
    metavar="REF",
    help="The pull request's base: a branch, tag or commit (in GitHub Actions: "
    "${{ github.event.pull_request.base.sha }}).",
)
@click.option(
    "--head",
    "head",
    default="HEAD",
    show_default=True,
    metavar="REF",
    help="The commit to judge (a commit, not the work tree's uncommitted changes).",
)
@format_option()
@pass_ctx
def verify_pr(ctx: Context, base: str, head: str, fmt: str) -> int:
    """The pull-request gate: one step, past stages unchanged, the base's checks pass."""
    from .gate import verify
    from .report import flips
    from .report.github import write_summary
    from .report.plans import dumps

    try:
        with _watching(fmt):
            verdict = verify(ctx.file, base, head)
    except StagegateError as error:
        if fmt == "github":
            from .report.github import annotation

            click.echo(annotation("error", str(error), None, "stagegate verify-pr"))
            write_summary(f"### stagegate verify-pr: **failed**\n\n```\n{error}\n```")
        raise
    if fmt == "json":
        click.echo(dumps(flips.verdict_json(verdict)))
    else:
        if fmt == "github":
            annotations = flips.verdict_annotations(verdict, _verdict_changes(verdict))
            if annotations:
                click.echo(annotations)
        click.echo(flips.verdict_text(verdict))
        if fmt == "github":
            write_summary(flips.verdict_summary(verdict))
    return 0 if verdict.ok else 1


def _verdict_changes(verdict: Any) -> dict[str, set[int]] | None:
    """The lines the pull request changed, from its base to its head."""
    from .errors import GitError
    from .gitrepo import open_migration

    try:
        repo, _path = open_migration(verdict.file)
        base, head = verdict.base.commit, verdict.head.commit
        if head != repo.head() or repo.tracked_changes():
            return None  # the lines are read from the work tree: it must be the head
        changed = repo.changed_lines(repo.merge_base(base, head, shown=(base, head)), head)
        return shown_changes(repo.root, changed)
    except GitError:
        return None


@cli.command("log")
@format_option(("text", "json"))
@pass_ctx
def log_command(ctx: Context, fmt: str) -> int:
    """The stage flips, from the git history of the migration file."""
    from .history import log
    from .report import flips
    from .report.plans import dumps

    history = log(ctx.file)
    click.echo(dumps(flips.history_json(history)) if fmt == "json" else flips.history_text(history))
    return 0


@cli.command()
@click.option("--stage-file", is_flag=True, help="Print the schema of a stage file instead.")
def schema(stage_file: bool) -> int:
    """Print the JSON Schema of migration.yaml (or of a stage file)."""
    from .report.plans import dumps
    from .validation import schema as compose

    click.echo(dumps(compose("stage" if stage_file else "migration")))
    return 0


@cli.command()
@stage_option("Compare at this stage (default: the current stage).")
@click.option(
    "--strict", is_flag=True, help="Fail (exit 1) on values that cannot be evaluated too."
)
@format_option()
@pass_ctx
def drift(ctx: Context, stage: int | None, strict: bool, fmt: str) -> int:
    """The model against the real workflows: undeclared or missing uploads, other selections."""
    from .drift import as_json, failed, text
    from .drift import drift as compare
    from .report.github import annotation, write_summary

    migration = ctx.migration()
    result = compare(migration, ctx.stage(stage))
    bad = failed(result, strict)
    if fmt == "json":
        from .report.plans import dumps

        click.echo(dumps(as_json(result)))
        return 1 if bad else 0
    if fmt == "github":
        for finding in result.findings:
            click.echo(
                annotation(
                    "error", finding.message, finding.loc, f"stagegate drift: {finding.kind}"
                )
            )
        for u in result.reading.unresolved:
            click.echo(
                annotation(
                    "error" if strict else "warning",
                    f"unresolved {u.expression}: {u.reason}",
                    u.loc,
                    "stagegate drift: unresolved",
                )
            )
    report = text(result, strict=strict)
    click.echo(report)
    if fmt == "github":
        write_summary(f"### stagegate drift (stage {result.stage})\n\n```\n{report}\n```")
    return 1 if bad else 0


@cli.command()
@click.option(
    "--from-workflows",
    "from_workflows",
    is_flag=True,
    help="Fill axes, producers, consumers and releases from .github/workflows (drift passes at once).",
)
@click.option("--force", is_flag=True, help="Replace an existing migration file.")
@pass_ctx
def init(ctx: Context, from_workflows: bool, force: bool) -> int:
    """Write a starting migration.yaml and an empty stages/ folder."""
    from .scaffold import init as write

    written = write(ctx.file, from_workflows=from_workflows, force=force)
    click.echo(f"wrote {written[0]} (stage 0) and {written[1]}/; next: stagegate validate")
    return 0


@cli.command("new-stage")
@click.argument("title")
@pass_ctx
def new_stage(ctx: Context, title: str) -> int:
    """Add the next numbered stage file, with a commented skeleton."""
    from .scaffold import new_stage as write

    path = write(ctx.migration(), title)
    click.echo(
        f"wrote {path}; set its flags, then: stagegate check --stage {ctx.migration().last + 1}"
    )
    return 0


@cli.command("flags")
@stage_option()
@format_option(("text", "json", "github", "env"))
@pass_ctx
def flags_command(ctx: Context, stage: int | None, fmt: str) -> int:
    """Flag values at a stage, for CI: github appends them to $GITHUB_OUTPUT and $GITHUB_ENV."""
    from . import ciflags
    from .resolve import resolve

    plan = resolve(ctx.migration(), ctx.stage(stage))
    if fmt == "json":
        from .report.plans import dumps

        click.echo(dumps(ciflags.as_json(plan)))
    elif fmt == "github":
        click.echo(ciflags.publish_flags(plan, os.environ), nl=False)
    elif fmt == "env":
        click.echo(ciflags.lines(ciflags.env_pairs(plan)), nl=False)
    else:
        click.echo(ciflags.text(plan))
    return 0


@cli.command("flag")
@click.argument("name")
@stage_option()
@pass_ctx
def flag_command(ctx: Context, name: str, stage: int | None) -> int:
    """Print `true` or `false`; exit 0 when the flag is on, 1 when off, 2 when unknown."""
    from . import ciflags

    value = ciflags.flag(ctx.migration(), name, ctx.stage(stage))
    click.echo("true" if value else "false")
    return 0 if value else 1


@cli.command("matrix")
@click.argument("producer")
@stage_option()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("json", "github")),
    default="json",
    show_default=True,
    help="Output format; github also appends matrix=<JSON> to $GITHUB_OUTPUT.",
)
@pass_ctx
def matrix_command(ctx: Context, producer: str, stage: int | None, fmt: str) -> int:
    """A producer's build rows as a GitHub strategy.matrix: {"include": [...]}."""
    from . import ciflags

    found = ciflags.matrix(ctx.migration(), producer, ctx.stage(stage))
    warning = ciflags.matrix_warning(found, producer)
    if fmt == "github":
        if warning:
            from .report.github import annotation

            click.echo(annotation("warning", warning, None, "stagegate matrix"))
        click.echo(ciflags.publish_matrix(found, os.environ), nl=False)
    else:
        if warning:
            click.echo(f"stagegate: warning: {warning}", err=True)
        click.echo(ciflags.compact(found))
    return 0


def _internal_error(error: BaseException) -> int:
    if os.environ.get("STAGEGATE_TRACEBACK"):
        import traceback

        traceback.print_exception(error)
    else:
        detail = " ".join(str(error).split())[:200]
        click.echo(
            f"stagegate: internal error (a bug): {type(error).__name__}: {detail}; "
            "rerun with --traceback (or STAGEGATE_TRACEBACK=1) and report it.",
            err=True,
        )
    return EXIT_INTERNAL


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (no ``sys.exit``), for tests and ``main``.

    Its output is guarded: a line from the input files cannot pose as a GitHub
    Actions workflow command (see ``report.github.defuse``)."""
    from .report.github import guarded_output

    with guarded_output():
        return _run(argv)


def _wants_github(argv: list[str]) -> bool:
    """Whether the command line asks for ``--format github`` (read before click parses it,
    so that a usage error is annotated too)."""
    return any(
        arg == "--format=github" or (arg == "--format" and argv[i + 1 : i + 2] == ["github"])
        for i, arg in enumerate(argv)
    )


def _annotate_error(argv: list[str], error: Exception, before: set[str]) -> None:
    """With ``--format github``, an error that ends the command is an ``::error`` too (each
    problem of invalid input at its place), unless the command annotated it already. On
    standard error, beside the message (the runner reads commands there too), so that a
    command whose standard output is data prints none when it fails."""
    from .report import github

    if not _wants_github(argv) or any(
        line.startswith("::error") for line in set(getattr(github, "_EMITTED", ())) - before
    ):
        return
    command = next((a for a in argv if a in cli.commands), None)
    title = f"stagegate {command}" if command else "stagegate"
    if isinstance(error, InvalidInput):
        for p in error.problems:
            text = f"{p.path}: {p.message}" if p.path else p.message
            click.echo(github.annotation("error", text, github.placed(p.loc), title), err=True)
    else:
        message = error.format_message() if isinstance(error, click.ClickException) else str(error)
        click.echo(github.annotation("error", message, None, title), err=True)


def _run(argv: list[str] | None) -> int:
    from .report import github

    args = list(sys.argv[1:] if argv is None else argv)
    before = set(getattr(github, "_EMITTED", ()))
    try:
        result = cli.main(args=argv, prog_name="stagegate", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.exceptions.Abort:
        click.echo("stagegate: aborted.", err=True)
        return 130
    except click.ClickException as error:
        _annotate_error(args, error, before)
        error.show()
        return EXIT_INVALID
    except StagegateError as error:
        _annotate_error(args, error, before)
        click.echo(str(error), err=True)
        return error.exit_code
    except KeyboardInterrupt:
        click.echo("stagegate: interrupted.", err=True)
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (e.g. `| head`); nothing left to say
        return 0
    except Exception as error:
        return _internal_error(error)
    return result if isinstance(result, int) else 0


def main() -> NoReturn:
    sys.exit(run())
