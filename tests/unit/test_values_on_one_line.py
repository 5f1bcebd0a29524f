"""A value from the workflows or the migration stays in its place in every report.

A matrix value (or a title, an outcome, a summary, a file name) with line breaks used to
forge a second `continuity ...: ok` line in the text output, and to leave the step
summary's code block for a heading and an external image. Now each text format keeps one
line per value (its line breaks shown as `\\n`), and no Markdown a renderer writes lets a
value out of its place: a code block's fence is longer than any backtick run inside it,
and text outside code is escaped (no heading, image, link target or HTML of its own).

One hostile repository, every renderer that prints such values, each format: the table.
Each row also asserts that the value was printed (escaped), so that no row can pass by
not showing it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from conftest import Result
from scratch import WHEELS_RELEASE, dedent, init, pin_git

Sg = Callable[..., Result]

PAYLOAD = "x\ncontinuity FORGED: ok\n```\n# Owned\n![x](https://evil.example/p.png)\n<img src=x>"
"""What a hostile value holds: a forged verdict line, a fence, a heading, an image, HTML."""
QUOTED = PAYLOAD.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
SHOWN = "continuity FORGED: ok"
"""The part of the value every output shows (escaped or folded onto its line)."""
FORGED_STARTS = ("continuity FORGED", "# Owned", "```", "![x]", "<img")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A migration at stage 1 whose titles, outcome and summaries hold the payload, whose
    release workflow gains a matrix row of it, and a tracked file named with it; the
    commit before the flip (the base)."""
    repo = init(tmp_path_factory.mktemp("hostile") / "repo")
    repo.write(".github/workflows/release.yml", WHEELS_RELEASE)
    repo.write(
        "migration.yaml",
        dedent(
            f"""\
            version: 1
            migration: hostile
            summary: "{QUOTED}"
            stage: 0
            flags:
              no-windows:
                summary: "{QUOTED}"
                env: SG_NO_WINDOWS
            producers:
              linux:
                summary: "{QUOTED}"
                artifacts: ["wheels-ubuntu-latest"]
                jobs: [".github/workflows/release.yml#wheels"]
              windows:
                when: not no-windows
                artifacts: ["wheels-windows-latest"]
                jobs: [".github/workflows/release.yml#wheels"]
            releases:
              rel:
                tags: ["v1.*"]
                select: ["wheels-*"]
                jobs: [".github/workflows/release.yml#publish"]
            invariants:
              - check: release-continuity
                tag: v1.0.0
            """
        ),
    )
    repo.write(
        "stages/01-hostile.yaml",
        f'stage: 1\ntitle: "{QUOTED}"\noutcome: "{QUOTED}"\nset:\n  no-windows: true\n'
        "acceptance:\n  - check: workflows\n",
    )
    repo.write("stages/02-next.yaml", f'stage: 2\ntitle: "{QUOTED}"\n')
    base = repo.commit("The hostile migration at stage 0")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.edit(
        ".github/workflows/release.yml",
        "os: [ubuntu-latest, windows-latest]",
        f'os: [ubuntu-latest, windows-latest, "{QUOTED}"]',
    )
    repo.write(f"notes-{PAYLOAD.splitlines()[1]}\n{PAYLOAD}", "x\n")
    repo.commit("Flip to stage 1")
    return repo.root, base


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    pin_git(monkeypatch)
    yield


BASE = "{base}"
ROWS: list[tuple[str, tuple[str, ...], tuple[str, ...], bool]] = [
    # (name, argv, formats, whether the step summary shows the value)
    ("continuity", ("continuity", "--base", BASE), ("text", "github"), True),
    ("drift", ("drift",), ("text", "github"), True),
    ("check", ("check",), ("text", "github"), True),
    ("check --all", ("check", "--all"), ("text", "github"), True),
    ("verify-pr", ("verify-pr", "--base", BASE), ("text", "github"), True),
    ("audit", ("audit",), ("text", "github", "markdown"), True),
    ("status", ("status",), ("text",), False),
    ("plan", ("plan",), ("text",), False),
    ("diff", ("diff", "2"), ("text",), False),
    ("log", ("log",), ("text",), False),
    ("history", ("history",), ("text", "github"), True),
    ("flags", ("flags",), ("text", "github"), True),
    ("advance --dry-run", ("advance", "--dry-run"), ("text", "github"), True),
    ("affected", ("affected", "--base", BASE), ("text", "github"), False),
]
CASES = [
    pytest.param(argv, fmt, shows, id=f"{name}-{fmt}")
    for name, argv, formats, shows in ROWS
    for fmt in formats
]


def _forged_lines(text: str) -> list[str]:
    """The lines of ``text`` that a value made: they start with a piece of the payload."""
    return [line for line in text.splitlines() if line.lstrip().startswith(FORGED_STARTS)]


def _escaped_markdown(summary: str) -> list[str]:
    """What of the payload renders as Markdown of its own: a heading, an image, a link to
    its site or HTML beyond stagegate's own `<br>` and `<details>`. (A code block closed
    by the payload's fence would leave the rest of the value outside it, raw.)"""
    tokens = MarkdownIt("commonmark").enable("table").parse(summary)
    found = []
    own_html = {"<br>", "<details>", "</details>", "<summary>", "</summary>"}
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and tokens[i + 1].content.startswith("Owned"):
            found.append(f"heading {tokens[i + 1].content!r}")
        if token.type == "html_block" and not token.content.startswith(("<details>", "</details>")):
            found.append(f"html block {token.content!r}")
        for child in token.children or []:
            if child.type == "image":
                found.append(f"image {child.attrGet('src')}")
            if child.type == "link_open" and "evil" in str(child.attrGet("href")):
                found.append(f"link {child.attrGet('href')}")
            if child.type == "html_inline" and child.content not in own_html:
                found.append(f"html {child.content!r}")
    return found


@pytest.mark.parametrize(("argv", "fmt", "shows"), CASES)
def test_a_value_keeps_its_line_and_its_block(
    hostile: tuple[Path, str],
    argv: tuple[str, ...],
    fmt: str,
    shows: bool,
    sg: Sg,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, base = hostile
    summary_file = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output"))
    result = sg(*(a.replace(BASE, base) for a in argv), "--format", fmt, cwd=root)
    assert result.code in (0, 1), result.output
    assert _forged_lines(result.output) == [], result.output
    printed = result.output if fmt != "markdown" else ""
    if fmt == "text":
        assert SHOWN in printed, result.output  # the value was shown, on its line
    markdown = summary_file.read_text() if summary_file.exists() else ""
    if fmt == "markdown":
        markdown = result.out
    if fmt in ("github", "markdown"):
        assert _escaped_markdown(markdown) == [], markdown
        assert (SHOWN in markdown) is shows or fmt == "markdown", markdown
        if fmt == "markdown":
            assert SHOWN in markdown


def test_the_values_are_escaped_not_dropped(hostile: tuple[Path, str], sg: Sg) -> None:
    """The forged verdict shows inside the value it came in, escaped, on the gained
    context's line: continuity's own verdict is the only line that says how it ended."""
    root, base = hostile
    result = sg("continuity", "--base", base, cwd=root)
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[1].startswith(
        "  gained: wheels{os=x\\ncontinuity FORGED: ok\\n```\\n# Owned\\n"
        "![x](https://evil.example/p.png)\\n<img src=x>} ("
    )
    assert [line for line in lines if line.startswith("continuity ")] == [lines[-1]]
    assert lines[-1].endswith(": FAILED")


@pytest.mark.parametrize(
    ("text", "fenced"),
    [
        ("plain", "```\nplain\n```"),
        ("a ``` b", "````\na ``` b\n````"),
        ("`````", "``````\n`````\n``````"),
    ],
)
def test_a_fence_is_longer_than_any_backtick_run_inside(text: str, fenced: str) -> None:
    from stagegate.report import fenced as fence

    assert fence(text) == fenced


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("a\nb", "a\\nb"),
        ("a\r\nb", "a\\x0d\\nb"),
        ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),
        ("a\x0bb\x0cc\x1cd\x85e", "a\\x0bb\\x0cc\\x1cd\\x85e"),
        ("tab\tand ünïcode", "tab\tand ünïcode"),
    ],
)
def test_one_line_shows_every_line_break(value: str, shown: str) -> None:
    from stagegate.words import one_line

    assert one_line(value) == shown
    assert len(one_line(value).splitlines()) == 1
