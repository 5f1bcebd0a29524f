"""Renderers: what a command prints is an ``Output``, made by the renderer its
``--format`` picks. (Here, in the package, because every command imports it: the
package is loaded at start-up for ``report.github`` anyway.)

Each command has one result type (what its core call returns, or a small record of
that and the options that shape the output) and one renderer table in ``report/``:
``{format name: renderer}``, where a renderer is a function from that result to an
``Output`` (check-jsonschema's reporter table, one per command). ``stagegate.cli`` looks the
renderer up by the option's value, prints the ``Output`` (and appends its step
summary) and returns the exit code; it holds no ``if fmt == ...``.
Nothing in a renderer acts, but for ``flags``/``matrix --format github``, whose
renderers append to ``$GITHUB_OUTPUT`` (all or nothing, before anything is printed).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from stagegate.records import record

if TYPE_CHECKING:
    from stagegate.errors import InvalidInput
    from stagegate.model import Migration

R = TypeVar("R")


@record
class Output:
    """The exact text for standard output and for standard error (line ends included),
    and the Markdown for ``$GITHUB_STEP_SUMMARY`` (appended after both are printed, where
    the variable is set; None: nothing)."""

    out: str = ""
    err: str = ""
    summary: str | None = None


Renderers = Mapping[str, Callable[[R], Output]]
"""A command's table: format name -> renderer."""


def lines(*texts: str | None) -> str:
    """Each text on its own: followed by a line break; a None is left out (a part that is
    printed only when there is any: ``lines(annotations or None, report)``)."""
    return "".join(f"{text}\n" for text in texts if text is not None)


_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""The C0 controls but line feed and tab, DEL, and the C1 controls."""


def single_lines(texts: Iterable[str]) -> str:
    """The lines of a text report, joined: each on one line whatever values it holds
    (``words.one_line``), so that a value with a line break cannot add a line (a forged
    ``continuity ...: ok``)."""
    from stagegate.words import one_line

    return "\n".join(one_line(text) for text in texts)


_BACKTICKS = re.compile("`+")


def fenced(text: str, info: str = "") -> str:
    """``text`` as a Markdown fenced code block that nothing in it can close: its fence is
    longer than any run of backticks in it (CommonMark closes a block only with a fence at
    least as long), so no heading, image, link or HTML of the text is rendered."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def annotated(commands: str, report: str, title: str) -> Output:
    """The github format of a report: its workflow commands (annotations), then the report
    itself, which is also the step summary under ``title``."""
    return Output(lines(commands or None, report), summary=f"### {title}\n\n{fenced(report)}")


def shallow_note(shallow: bool, lost: str, everything: str) -> list[str]:
    """The note of a command that reads the history, in a shallow clone (none in a full
    one): what it misses, and how to see all of it."""
    if not shallow:
        return []
    return [
        f"note: this clone is shallow, so {lost}; `git fetch --unshallow` (in GitHub "
        f"Actions: fetch-depth: 0) shows all of {everything}."
    ]


def printable(text: str) -> str:
    """``text`` with every control character but line feed and tab shown as ``\\xNN``.

    Summaries, titles, file names, file lines and commit messages reach the output; an
    escape sequence in them would act on the reader's terminal (an OSC 52 clipboard
    write, a screen clear) and a bare carriage return would overwrite a ``FAIL`` line
    with ``ok``. Every text output goes through here (``cli.show``, the live lines of
    ``check``, error messages, annotations); JSON escapes them its own way (``dumps``)."""
    if text.isascii() and text.isprintable():
        return text
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def dumps(data: Any) -> str:
    """The JSON style of every command: indented, UTF-8 as is, but control characters
    escaped (``json`` escapes C0 itself; DEL and C1 as ``\\u00NN`` here)."""
    import json

    text = json.dumps(data, indent=2, ensure_ascii=False)
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def echo_text(render: Callable[[R], str]) -> Callable[[R], Output]:
    """The renderer that prints ``render(result)`` on standard output."""
    return lambda result: Output(lines(render(result)))


def echo_json(build: Callable[[R], Any]) -> Callable[[R], Output]:
    """The renderer that prints ``build(result)`` as JSON (``dumps``) on standard output."""
    return lambda result: Output(lines(dumps(build(result))))


def nothing(_result: object) -> Output:
    """The renderer of a format that prints nothing more (what it shows was shown already)."""
    return Output()


SCHEMA: Renderers[Any] = {"json": echo_json(lambda schema: schema)}
"""`schema`: the JSON Schema as it is."""


# --------------------------------------------------------------------------- validate
# Here rather than in a module of its own: `validate` is the pre-commit hook's command,
# and this package is loaded at start-up anyway, so its output costs no module import.


@record
class Validation:
    """`validate`'s result: the migration, or the problems that keep it from loading."""

    migration: Migration | None = None
    error: InvalidInput | None = None

    @property
    def exit_code(self) -> int:
        return self.error.exit_code if self.error is not None else 0


def summary_line(migration: Migration) -> str:
    from stagegate.words import counted

    counts = ", ".join(
        counted(n, noun)
        for n, noun in (
            (len(migration.stages), "stage file"),
            (len(migration.flags), "flag"),
            (len(migration.producers), "producer"),
            (len(migration.consumers), "consumer"),
            (len(migration.releases), "release"),
        )
    )
    return f"{migration.file}: valid: {counts}; at stage {migration.stage} of {migration.last}."


def as_json(result: Validation) -> dict[str, Any]:
    if result.error is not None:
        problems = [
            {
                "file": p.loc.file,
                "line": p.loc.line,
                "col": p.loc.col,
                "path": p.path,
                "message": p.message,
            }
            for p in result.error.problems
        ]
        return {"ok": False, "problems": problems}
    assert result.migration is not None
    migration = result.migration
    return {"ok": True, "problems": [], "stage": migration.stage, "stages": len(migration.stages)}


def _text(result: Validation) -> Output:
    if result.error is not None:
        return Output(err=lines(str(result.error)))
    assert result.migration is not None
    return Output(lines(summary_line(result.migration)))


def _github(result: Validation) -> Output:
    from stagegate.report import github
    from stagegate.words import counted

    if result.error is not None:
        annotations = github.problem_annotations(result.error.problems, "stagegate validate")
        count = counted(len(result.error.problems), "problem")
        return Output(
            lines(annotations or None),
            _text(result).err,
            f"### stagegate validate\n\n{count} in the migration files.",
        )
    migration = result.migration
    assert migration is not None
    return Output(
        _text(result).out,
        summary=f"### stagegate validate\n\n{github.md_code(migration.file)} is valid "
        f"(stage {migration.stage} of {migration.last}).",
    )


VALIDATE: Renderers[Validation] = {
    "text": _text,
    "json": lambda result: Output(lines(dumps(as_json(result)))),
    "github": _github,
}
