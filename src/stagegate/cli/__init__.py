"""The command line: parse, call one function, render, return the exit code.

Only this module imports click, prints or exits. Each command maps its options to
one core call, shows the result through the renderer its ``--format`` picks from the
command's table in ``report/`` (``show``), and returns the exit code. The modules a
command needs are imported inside it, so running one command imports its own only.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from stagegate._version import __version__
from stagegate.cli.options import (
    FILE_HELP,
    FORMATS,
    Context,
    Group,
    argument,
    commits_options,
    complete_file,
    complete_ids,
    complete_stage,
    format_option,
    option,
    pass_ctx,
    stage_option,
)
from stagegate.errors import EXIT_INTERNAL, EXIT_INVALID, InvalidInput, StagegateError, UsageError

if TYPE_CHECKING:
    from stagegate.report import Output
    from stagegate.report.live import Live

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")


@click.group(
    cls=Group,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "-f",
    "--file",
    default=None,
    envvar="STAGEGATE_FILE",
    show_envvar=True,
    metavar="FILE",
    help=FILE_HELP,
    shell_complete=complete_file,
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
    state = click_ctx.ensure_object(Context)
    state.given, state.show_traceback = file, show_traceback


def show(
    renderers: Mapping[str, Callable[[R], Output]], fmt: str, result: R, *, ok: bool = True
) -> int:
    """Print ``result`` as the renderer for ``fmt`` in the command's table renders it, then
    append its step summary; the command's exit code: 0, or 1 where ``ok`` is false."""
    return shown(renderers[fmt](result), fmt, ok=ok)


def shown(output: Output, fmt: str, *, ok: bool = True) -> int:
    """Print a rendered ``output`` (as ``show`` does) and return the exit code."""
    from stagegate.report import printable

    if output.out:  # JSON is escaped by ``report.dumps``; other text here
        click.echo(output.out if fmt == "json" else printable(output.out), nl=False)
    if output.err:
        click.echo(printable(output.err), nl=False, err=True)
    if output.summary is not None:
        from stagegate.report.github import write_summary

        write_summary(output.summary)
    return 0 if ok else 1


# --------------------------------------------------------------------------- commands


@cli.command()
@format_option()
@pass_ctx
def validate(ctx: Context, fmt: str) -> int:
    """Check the migration and its stage files: schema and meaning."""
    from stagegate.report.validate import VALIDATE, Validation

    try:
        result = Validation(migration=ctx.migration())
    except InvalidInput as error:
        result = Validation(error=error)
    show(VALIDATE, fmt, result)
    return result.exit_code


@cli.command()
@format_option()
@pass_ctx
def status(ctx: Context, fmt: str) -> int:
    """The current stage, its flags, what the next flip would change, and what in the
    repository still blocks it (the next stage's retired, flags-wired and workflows checks)."""
    from stagegate.report.plans import STATUS, next_status

    return show(STATUS, fmt, next_status(ctx.migration()))


@cli.command()
@stage_option()
@option(
    "--rows",
    "show_rows",
    is_flag=True,
    help="List every artifact row instead of one line per template.",
)
@format_option()
@pass_ctx
def plan(ctx: Context, stage: int | None, show_rows: bool, fmt: str) -> int:
    """Active flags, producers (with artifact rows), consumers and releases at a stage."""
    from stagegate.engine.resolve import resolve
    from stagegate.report.plans import PLAN, Planned

    return show(PLAN, fmt, Planned(resolve(ctx.migration(), ctx.stage(stage)), rows=show_rows))


@cli.command()
@argument("stages", nargs=-1, type=int, metavar="[A] B", shell_complete=complete_stage)
@format_option()
@pass_ctx
def diff(ctx: Context, stages: tuple[int, ...], fmt: str) -> int:
    """What turns on and off between stage A (default: current) and B."""
    from stagegate.engine.resolve import diff as compute
    from stagegate.report.plans import DIFF, Compared

    if len(stages) not in (1, 2):
        raise UsageError(
            "diff takes one or two stages: `stagegate diff B` or `stagegate diff A B`."
        )
    a, b = (None, stages[0]) if len(stages) == 1 else (stages[0], stages[1])
    migration = ctx.migration()
    return show(DIFF, fmt, Compared(migration, compute(migration, ctx.stage(a), ctx.stage(b))))


def _neighbour_option(kind: str) -> Callable[[F], F]:
    return option(
        f"--{kind}",
        f"{kind}s",
        multiple=True,
        metavar="ID",
        help=f"Draw only the neighbourhood of this {kind} (repeatable; combines with the others).",
        shell_complete=complete_ids(f"{kind}s"),
    )


@cli.command()
@stage_option()
@format_option(("mermaid", "dot"), default="mermaid", help="Picture source.")
@_neighbour_option("producer")
@_neighbour_option("consumer")
@_neighbour_option("release")
@option("--no-legend", is_flag=True, help="Leave the legend out (Mermaid).")
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
    from stagegate.engine.resolve import resolve
    from stagegate.report.graph import PICTURE, Picture, build, focus

    resolved = resolve(ctx.migration(), ctx.stage(stage))
    picture = focus(
        resolved, build(resolved), producers=producers, consumers=consumers, releases=releases
    )
    return show(PICTURE, fmt, Picture(resolved, picture, legend=not no_legend))


@contextlib.contextmanager
def _watching(fmt: str, header: Callable[[int], str] | None = None) -> Iterator[Live]:
    """While a command that prints its report at the end runs its checks: the live line on
    a terminal, a line every 30 s in a log (on standard error for JSON). With ``header``,
    in the text format, the checks stream as in ``check``: a stage's ``header`` line, each
    check's lines as it finishes with its duration, the closing line (the report then
    leaves them out: ``streamed``)."""
    from stagegate.checks.runner import observing
    from stagegate.report.live import Live

    write, tty = _writer(err=fmt == "json")
    shown = header is not None and fmt == "text"
    with Live(None, write, tty=tty, show_results=shown, header=header) as live, observing(live):
        yield live
    if shown and live.stages_started:
        live.close()


def streamed(live: Live) -> bool:
    """Whether ``_watching`` showed the checks as they ran (the report leaves them out)."""
    return live.show_results and bool(live.stages_started)


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
@option("--all", "every", is_flag=True, help="Every stage 0..last, each evaluated at itself.")
@option(
    "--ahead",
    type=click.Choice(("show", "fail")),
    default="show",
    show_default=True,
    help="--all: at stages ahead of the current one, the checks that read today's files "
    "(retired, flags-wired, workflows) show readiness (show) or must pass (fail).",
)
@option("--fail-fast", "-x", is_flag=True, help="Stop at the first failing check.")
@option("--quiet", "-q", is_flag=True, help="Show only failures and the closing line.")
@format_option()
@pass_ctx
def check(
    ctx: Context,
    stage: int | None,
    every: bool,
    ahead: str,
    fail_fast: bool,
    quiet: bool,
    fmt: str,
) -> int:
    """Run the invariants and a stage's acceptance checks; exit 1 on any failure.

    With --all: the model's checks (and pytest and command checks) at every stage; the
    checks that read today's files at the current stage, as readiness at stages ahead
    (failing nothing unless --ahead=fail), not at past stages. Each stage's header is
    shown when it starts and each check's line when it finishes, with its duration; a
    long check shows a live line on a terminal and a line every 30 s in a CI log."""
    from stagegate.checks.runner import run_all, run_checks, scheduled
    from stagegate.report.live import Live
    from stagegate.report.results import CHECK, Checked

    migration = ctx.migration()
    if every and stage is not None:
        raise UsageError("give either --stage N or --all, not both.")
    at = ctx.stage(stage)
    # JSON is one object at the end on standard output; its live line goes to standard error
    write, tty = _writer(err=fmt == "json")
    live = Live(migration, write, tty=tty, quiet=quiet, show_results=fmt != "json")
    with live:
        if every:
            found = run_all(
                migration, observer=live, fail_fast=fail_fast, ahead_fail=ahead == "fail"
            )
        else:
            found = run_checks(migration, at, observer=live, fail_fast=fail_fast)
    result = Checked(migration, tuple(found), at, every=every, skipped=tuple(live.skipped))
    planned = scheduled(migration, None if every else at)
    live.close(stopped=planned - live.checks_run if fail_fast and not result.ok else None)
    return show(CHECK, fmt, result, ok=result.ok)


@cli.command()
@stage_option("Audit at this stage (default: the current stage).")
@format_option((*FORMATS, "markdown"))
@option("--blame", is_flag=True, help="Add the commit, author and age of each leftover's line.")
@pass_ctx
def audit(ctx: Context, stage: int | None, fmt: str, blame: bool) -> int:
    """What retired legacy left behind, stale flags, and the burndown; exit 1 on leftovers."""
    from stagegate.audit import search
    from stagegate.report.audit import AUDIT

    report = search(ctx.migration(), ctx.stage(stage), blame=blame)
    return show(AUDIT, fmt, report, ok=report.ok)


def _flipped(flip: Any, command: str, pr_body: str | None, fmt: str, shown: bool) -> int:
    """Show advance/rollback (``shown``: its checks were streamed); write the pull-request
    description when the checks pass."""
    from stagegate.report.flipdoc import write_description
    from stagegate.report.flips import FLIP, Flipped

    if flip.ok and pr_body:
        write_description(flip, pr_body)
    return show(FLIP, fmt, Flipped(flip, command, streamed=shown), ok=flip.ok)


def _writable_file(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """Refuse a --pr-body that cannot be written before anything runs, not after the flip."""
    if value is None:
        return None
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


def pr_body_option() -> Callable[[F], F]:
    return option(
        "--pr-body",
        "pr_body",
        default=None,
        callback=_writable_file,
        metavar="FILE",
        help="Write a Markdown description of the flip (title, outcome, what turns on and off, "
        "check results, Mermaid graph) to FILE, for the pull request; with --dry-run too. "
        "Written only when the checks pass.",
    )


def dry_run_option() -> Callable[[F], F]:
    return option(
        "--dry-run", is_flag=True, help="Print the diff and the check results; write nothing."
    )


@cli.command()
@option(
    "--to",
    type=int,
    default=None,
    metavar="N",
    shell_complete=complete_stage,
    help="Advance to stage N; the checks of every stage in between must pass too.",
)
@dry_run_option()
@pr_body_option()
@format_option()
@pass_ctx
def advance(ctx: Context, to: int | None, dry_run: bool, pr_body: str | None, fmt: str) -> int:
    """Set `stage:` to the next stage (or N) once its checks pass; only that line changes."""
    from stagegate.commands.flip import advance as run
    from stagegate.report.results import stage_header

    with _watching(fmt, lambda n: stage_header(ctx.migration(), n)) as live:
        flip = run(ctx.file, to=to, dry_run=dry_run, pr_body=pr_body)
    return _flipped(flip, "advance", pr_body, fmt, streamed(live))


@cli.command()
@dry_run_option()
@pr_body_option()
@format_option()
@pass_ctx
def rollback(ctx: Context, dry_run: bool, pr_body: str | None, fmt: str) -> int:
    """Set `stage:` one lower; refused where the current stage is not reversible."""
    from stagegate.commands.flip import rollback as run
    from stagegate.report.results import stage_header

    with _watching(fmt, lambda n: stage_header(ctx.migration(), n)) as live:
        flip = run(ctx.file, dry_run=dry_run, pr_body=pr_body)
    return _flipped(flip, "rollback", pr_body, fmt, streamed(live))


@cli.command("verify-pr")
@commits_options(
    base_help="The pull request's base: a branch, tag or commit",
    head_help="The commit to judge (a commit, not the work tree's uncommitted changes).",
)
@format_option()
@pass_ctx
def verify_pr(ctx: Context, base: str, head: str, fmt: str) -> int:
    """The pull-request gate: one step, past stages unchanged, the base's checks pass."""
    from stagegate.commands.gate import verify
    from stagegate.report.flips import VERIFY, VERIFY_FAILED, VERIFY_STREAMED, gate_header

    try:
        with _watching(fmt, gate_header) as live:
            verdict = verify(ctx.file, base, head)
    except StagegateError as error:
        show(VERIFY_FAILED, fmt, error)
        raise
    return show(VERIFY_STREAMED if streamed(live) else VERIFY, fmt, verdict, ok=verdict.ok)


@cli.command()
@commits_options(
    base_help="The branch the change is compared with; the change is what the head added since "
    "their merge base",
    head_help="The change's commit.",
)
@stage_option("Stage to plan for (default: the current stage).")
@option(
    "--baseline",
    default=None,
    metavar="FILE",
    help='The baseline run: JSON {"sha": COMMIT or null, "artifacts": [NAME, ...]}. '
    "Without it nothing is reused.",
)
@format_option()
@pass_ctx
def affected(
    ctx: Context, base: str, head: str, stage: int | None, baseline: str | None, fmt: str
) -> int:
    """What a change makes a stage rebuild, rerun, reuse and release."""
    from stagegate.commands.affected import plan_change
    from stagegate.report.affected import AFFECTED

    migration = ctx.migration()
    result = plan_change(migration, ctx.stage(stage), base=base, head=head, baseline=baseline)
    return show(AFFECTED, fmt, result)


@cli.command("continuity")
@commits_options(base_help="The commit to compare with", head_help="The commit to judge.")
@option(
    "--accept",
    default=None,
    metavar="FILE",
    help="A file of `Release-Change: gained GLOB` / `lost GLOB` lines: changes the pull "
    "request means (on a pull_request event, its description is read too).",
)
@option(
    "--strict", is_flag=True, help="Fail (exit 1) on a release the base already could not read too."
)
@format_option()
@pass_ctx
def continuity(
    ctx: Context, base: str, head: str, accept: str | None, strict: bool, fmt: str
) -> int:
    """What each release job ships, at base and head: lost, gained, renamed (no model needed)."""
    from stagegate.commands.continuity import continuity as compare
    from stagegate.report.continuity import CONTINUITY

    result = compare(ctx.file, base, head, accept=accept, strict=strict, annotate=fmt == "github")
    return show(CONTINUITY, fmt, result, ok=result.ok)


@cli.command("log")
@format_option(("text", "json"))
@pass_ctx
def log_command(ctx: Context, fmt: str) -> int:
    """The stage flips, from the git history of the migration file."""
    from stagegate.commands.log import log
    from stagegate.report.flips import LOG

    return show(LOG, fmt, log(ctx.file))


@cli.command("history")
@format_option()
@pass_ctx
def history_command(ctx: Context, fmt: str) -> int:
    """Every stage: done, current or ahead, its flip commit and date, and the readiness
    of the stages ahead (their retired, flags-wired and workflows checks, run now)."""
    from stagegate.commands.history import history
    from stagegate.report.history import HISTORY

    return show(HISTORY, fmt, history(ctx.migration()))


@cli.command()
@option("--stage-file", is_flag=True, help="Print the schema of a stage file instead.")
def schema(stage_file: bool) -> int:
    """Print the JSON Schema of migration.yaml (or of a stage file)."""
    from stagegate.report import SCHEMA
    from stagegate.validation import schema as compose

    return show(SCHEMA, "json", compose("stage" if stage_file else "migration"))


@cli.command()
@stage_option("Compare at this stage (default: the current stage).")
@option("--strict", is_flag=True, help="Fail (exit 1) on values that cannot be evaluated too.")
@option(
    "--fresh",
    is_flag=True,
    help="Read the workflows even where a run on the same inputs printed its output before.",
)
@format_option()
@pass_ctx
def drift(ctx: Context, stage: int | None, strict: bool, fresh: bool, fmt: str) -> int:
    """The model against the real workflows: undeclared or missing uploads, other selections."""
    from stagegate.cli import remembered

    migration = ctx.migration()
    output, ok = remembered.drift(migration, ctx.stage(stage), strict=strict, fmt=fmt, fresh=fresh)
    return shown(output, fmt, ok=ok)


@cli.command()
@option(
    "--from-workflows",
    is_flag=True,
    help="Fill axes, producers, consumers and releases from .github/workflows (drift passes at once).",
)
@option("--force", is_flag=True, help="Replace an existing migration file.")
@pass_ctx
def init(ctx: Context, from_workflows: bool, force: bool) -> int:
    """Write a starting migration.yaml and an empty stages/ folder."""
    from stagegate.commands.scaffold import init as write
    from stagegate.report.scaffold import INIT

    return show(INIT, "text", write(ctx.file, from_workflows=from_workflows, force=force))


@cli.command("new-stage")
@argument("title")
@option("--before", type=int, help="Insert it before stage N, renumbering the later stages.")
@option(
    "--from-workflows",
    is_flag=True,
    help="Declare what drift finds undeclared at the last stage, behind a flag the stage sets.",
)
@pass_ctx
def new_stage(ctx: Context, title: str, before: int | None, from_workflows: bool) -> int:
    """Add the next numbered stage file, with a commented skeleton."""
    from stagegate.commands.scaffold import new_stage as write
    from stagegate.report.scaffold import NEW_STAGE, NewStage

    number = before if before is not None else ctx.migration().last + 1
    written = write(ctx.migration(), title, before, from_workflows=from_workflows)
    return show(NEW_STAGE, "text", NewStage(written, number))


@cli.command("flags")
@stage_option()
@format_option(("text", "json", "github", "env"))
@pass_ctx
def flags_command(ctx: Context, stage: int | None, fmt: str) -> int:
    """Flag values at a stage, for CI: github appends them to $GITHUB_OUTPUT and $GITHUB_ENV."""
    from stagegate.engine.resolve import resolve
    from stagegate.report.ciflags import FLAGS

    return show(FLAGS, fmt, resolve(ctx.migration(), ctx.stage(stage)))


@cli.command("flag")
@argument("name", shell_complete=complete_ids("flags"))
@stage_option()
@pass_ctx
def flag_command(ctx: Context, name: str, stage: int | None) -> int:
    """Print `true` or `false`; exit 0 when the flag is on, 1 when off, 2 when unknown."""
    from stagegate.ci import ciflags

    value = ciflags.flag(ctx.migration(), name, ctx.stage(stage))
    # printed here: the one command a CI script runs per flag imports no renderer module
    click.echo("true" if value else "false")
    return 0 if value else 1


@cli.command("matrix")
@argument(
    "producers",
    nargs=-1,
    required=True,
    metavar="PRODUCER...",
    shell_complete=complete_ids("producers"),
)
@stage_option()
@format_option(
    ("json", "github"),
    default="json",
    help="Output format; github also appends matrix=<JSON> to $GITHUB_OUTPUT.",
)
@pass_ctx
def matrix_command(ctx: Context, producers: tuple[str, ...], stage: int | None, fmt: str) -> int:
    """A producer's build rows as a GitHub strategy.matrix: {"include": [...]}; of several
    producers, the union of their rows, each naming its producer."""
    from stagegate.ci import ciflags
    from stagegate.report.ciflags import MATRIX, Matrix

    found = ciflags.matrices(ctx.migration(), producers, ctx.stage(stage))
    return show(MATRIX, fmt, Matrix(", ".join(producers), found))


def _internal_error(error: BaseException, state: Context) -> int:
    if state.show_traceback or os.environ.get("STAGEGATE_TRACEBACK"):
        import traceback

        traceback.print_exception(error)
    else:
        from stagegate.report import printable

        detail = printable(" ".join(str(error).split())[:200])
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
    from stagegate.report.github import guarded_output

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
    from stagegate.report import github

    if not _wants_github(argv) or any(
        line.startswith("::error") for line in set(getattr(github, "_EMITTED", ())) - before
    ):
        return
    command = next((a for a in argv if a in cli.commands), None)
    title = f"stagegate {command}" if command else "stagegate"
    if isinstance(error, InvalidInput):
        if error.problems:
            click.echo(github.problem_annotations(error.problems, title), err=True)
    else:
        message = error.format_message() if isinstance(error, click.ClickException) else str(error)
        click.echo(github.annotation("error", message, None, title), err=True)


def _run(argv: list[str] | None) -> int:
    from stagegate.report import github

    args = list(sys.argv[1:] if argv is None else argv)
    before = set(getattr(github, "_EMITTED", ()))
    state = Context()
    try:
        result = cli.main(args=argv, prog_name="stagegate", standalone_mode=False, obj=state)
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
        from stagegate.report import printable

        click.echo(printable(str(error)), err=True)
        return error.exit_code
    except KeyboardInterrupt:
        click.echo("stagegate: interrupted.", err=True)
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (e.g. `| head`); nothing left to say
        return 0
    except Exception as error:
        return _internal_error(error, state)
    return result if isinstance(result, int) else 0


def main() -> NoReturn:
    sys.exit(run())
