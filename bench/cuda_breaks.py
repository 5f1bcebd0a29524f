#!/usr/bin/env python3
"""Nine breaks of the CUDA 13 release and five harmless edits, on the real cuda-python tree.

    .venv/bin/python bench/cuda_breaks.py /path/to/cuda-python [--only NAME ...]
    STAGEGATE_REAL_TREE=/path/to/cuda-python .venv/bin/python bench/cuda_breaks.py

The clone's commit cb56ab9f (main, before the migration; `--commit` for another) is
written with `git archive` into a temporary git repository with the worked example's
`migration.yaml` and `stages/` at its top, committed as the base. For each edit one
commit goes on top of the base, and the table shows what `stagegate check --all` and
`stagegate continuity --base HEAD~1` exit with, and the first thing each reports. Every
edit is a small exact text transformation that stops the run, naming the file and the
text, when the tree no longer holds the text it edits (a new commit of cuda-python may
move it).

The breaks are what issue 36 lists: each one breaks what the CUDA 13 release ships or
what the migration's consumers take. The harmless edits change nothing a release or a
consumer gets; `${PY_VER//./}` and `sed 's/\\.//g'` need a shell reader that computes
them (marked `shell`). Without a tree (argument or STAGEGATE_REAL_TREE) it says so and
exits 0; tests/example/test_cuda_breaks.py applies the same edits to the mirror
(tests/fixtures/cuda-python-tree) in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STAGEGATE = str(Path(sys.executable).parent / "stagegate")
COMMIT = "cb56ab9f"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Breaks Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2026-07-23T00:00:00Z",
    "GIT_COMMITTER_NAME": "Breaks Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_DATE": "2026-07-23T00:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


class EditFailed(Exception):
    """The tree does not hold the text an edit changes (as many times as it expects)."""


# --------------------------------------------------------------------------- changes


@dataclass(frozen=True)
class Replace:
    """``old`` -> ``new`` in ``path``, which must hold ``old`` exactly ``count`` times."""

    path: str
    old: str
    new: str
    count: int = 1

    def apply(self, root: Path) -> None:
        file = root / self.path
        text = _read(file, self.path)
        found = text.count(self.old)
        if found != self.count:
            raise EditFailed(
                f"{self.path}: expected {self.count} occurrence(s) of {self.old!r}, found {found}"
            )
        file.write_text(text.replace(self.old, self.new), encoding="utf-8")


@dataclass(frozen=True)
class DeleteJob:
    """The job ``job`` of the workflow ``path``: from its `  job:` line to the next line
    indented by two spaces (the next job, or the comment above it)."""

    path: str
    job: str

    def apply(self, root: Path) -> None:
        file = root / self.path
        lines = _read(file, self.path).splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines) if line.rstrip("\n") == f"  {self.job}:"]
        if len(starts) != 1:
            raise EditFailed(f"{self.path}: expected one job {self.job!r}, found {len(starts)}")
        start = starts[0]
        end = next(
            (i for i in range(start + 1, len(lines)) if re.match(r"  \S", lines[i])), len(lines)
        )
        file.write_text("".join(lines[:start] + lines[end:]), encoding="utf-8")


Change = Replace | DeleteJob


def _read(file: Path, shown: str) -> str:
    if not file.is_file():
        raise EditFailed(f"{shown}: no such file")
    return file.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- the edits


@dataclass(frozen=True)
class Edit:
    name: str
    kind: str  # "break" or "harmless"
    what: str
    real: tuple[Change, ...]
    on_mirror: tuple[Change, ...] | str | None = "same"
    """The edit on tests/fixtures/cuda-python-tree: "same" (the real tree's changes), other
    changes where the mirror's text differs, or None (the mirror cannot show it)."""
    shell: bool = False
    """Harmless only to a shell reader that computes the new text (issue 33)."""

    @property
    def mirror(self) -> tuple[Change, ...] | None:
        return self.real if self.on_mirror == "same" else self.on_mirror  # type: ignore[return-value]


BUILD = ".github/workflows/build-wheel.yml"
CI = ".github/workflows/ci.yml"
RELEASE = ".github/workflows/release.yml"
ENV_VARS = "ci/tools/env-vars"
WHEELS = "ci/tools/download-wheels"
MATRIX = "ci/test-matrix.yml"

_BINDINGS_UPLOAD = (
    "          name: ${{ env.CUDA_BINDINGS_ARTIFACT_NAME }}\n"
    "          path: ${{ env.CUDA_BINDINGS_ARTIFACTS_DIR }}/*.whl\n"
    "          if-no-files-found: error\n"
)
_CU12_UPLOAD = (
    "\n"
    "      - name: Upload CUDA 12 cuda.bindings build artifacts\n"
    "        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a  # v7.0.1\n"
    "        with:\n"
    "          name: cuda-bindings-python${{ env.PYTHON_VERSION_FORMATTED }}-cuda${{ inputs.prev-cuda-version }}-${{ inputs.host-platform }}-${{ github.sha }}\n"
    "          path: cuda_bindings_12/dist/*.whl\n"
    "          if-no-files-found: error\n"
)
_PY = '          - "3.10"\n          - "3.11"\n          - "3.12"\n          - "3.13"\n          - "3.14"\n          - "3.14t"\n          - "3.15"\n          - "3.15t"\n'
_PY_REORDERED = '          - "3.15t"\n          - "3.15"\n          - "3.14t"\n          - "3.14"\n          - "3.13"\n          - "3.12"\n          - "3.11"\n          - "3.10"\n'
_BASENAME = 'CUDA_BINDINGS_ARTIFACT_BASENAME="cuda-bindings-python${PYTHON_VERSION_FORMATTED}-cuda${CUDA_VER}-${HOST_PLATFORM}"'
_TR = """PYTHON_VERSION_FORMATTED=$(echo "${PY_VER}" | tr -d '.')"""
_DIST = '"${{ github.repository }}" "dist"'
_CORE_ROW = (
    "    - { ARCH: 'amd64', PY_VER: '3.12',  CUDA_VER: '13.3.0', LOCAL_CTK: '0', "
    "GPU: 'a100',       GPU_COUNT: '1', DRIVER: 'latest',     ENV: { MODE: 'nightly-cuda-core' } }\n"
)
_CORE_ROW_MIRROR = (
    "    - { ARCH: 'amd64', PY_VER: '3.12',  CUDA_VER: '13.3.0', LOCAL_CTK: '0', "
    "GPU: 'rtxpro6000',  GPU_COUNT: '1', DRIVER: 'latest', ENV: { MODE: 'nightly-cuda-core' } }\n"
)
_GPU_ROW_MIRROR = (
    "    - { ARCH: 'amd64', PY_VER: '3.11',  CUDA_VER: '13.3.0', LOCAL_CTK: '1', "
    "GPU: 'v100',        GPU_COUNT: '1', DRIVER: 'latest' }\n"
)
_GPU_ROW = (
    "    - { ARCH: 'amd64', PY_VER: '3.10',  CUDA_VER: '12.9.1', LOCAL_CTK: '1', "
    "GPU: 'v100',       GPU_COUNT: '1', DRIVER: 'latest' }\n"
)


def _aarch64(checks: bool) -> tuple[Change, ...]:
    """ci.yml without its aarch64 build and test jobs (and, in the real file, the
    aggregating `checks` job's references to them, so that the workflow stays valid)."""
    out: list[Change] = [DeleteJob(CI, "build-linux-aarch64"), DeleteJob(CI, "test-linux-aarch64")]
    if checks:
        out += [
            Replace(CI, "      - test-linux-aarch64\n", ""),
            Replace(
                CI,
                '          check_result "test-linux-aarch64" "$expected" '
                '"${{ needs.test-linux-aarch64.result }}"\n',
                "",
            ),
        ]
    return tuple(out)


EDITS: tuple[Edit, ...] = (
    Edit(
        "bindings-upload-renamed",
        "break",
        "the cuda.bindings wheel upload renamed out of the release's cuda-bindings* prefix",
        (
            Replace(
                BUILD,
                "          name: ${{ env.CUDA_BINDINGS_ARTIFACT_NAME }}\n",
                "          name: wheels-${{ env.CUDA_BINDINGS_ARTIFACT_NAME }}\n",
            ),
        ),
    ),
    Edit(
        "download-pattern-narrowed",
        "break",
        'download-wheels asks for Linux artifacts only (-p "${COMPONENT}*-linux-*")',
        (
            Replace(
                WHEELS,
                '-p "${COMPONENT}*" -R "$REPOSITORY"',
                '-p "${COMPONENT}*-linux-*" -R "$REPOSITORY"',
            ),
        ),
        (
            Replace(
                WHEELS,
                '-p "${COMPONENT}*" -R "${REPOSITORY}"',
                '-p "${COMPONENT}*-linux-*" -R "${REPOSITORY}"',
            ),
        ),
    ),
    Edit(
        "tests-skip-dropped",
        "break",
        "download-wheels no longer skips *-tests folders (cuda-python #705)",
        (
            Replace(
                WHEELS,
                "    # exclude cython test artifacts\n"
                '    if [[ "${p}" == *-tests ]]; then\n'
                '        echo "Skipping test artifact: $p"\n'
                "        continue\n"
                "    fi\n\n",
                "",
            ),
        ),
        (
            Replace(
                WHEELS,
                "  # Test artifacts are never released.\n"
                '  if [[ "${folder}" == *-tests ]]; then\n'
                "    continue\n"
                "  fi\n",
                "",
            ),
        ),
    ),
    Edit(
        "py313-dropped",
        "break",
        "Python 3.13 dropped from build-wheel.yml's matrix",
        (Replace(BUILD, '          - "3.13"\n', ""),),
    ),
    Edit(
        "aarch64-deleted",
        "break",
        "ci.yml's linux-aarch64 build and test jobs deleted",
        _aarch64(checks=True),
        _aarch64(checks=False),
    ),
    Edit(
        "one-name-eight-legs",
        "break",
        "env-vars' build basename without the Python version: eight legs upload one name",
        (
            Replace(
                ENV_VARS, _BASENAME, _BASENAME.replace("python${PYTHON_VERSION_FORMATTED}-", "")
            ),
        ),
    ),
    Edit(
        "release-into-wheelhouse",
        "break",
        "release.yml's publish jobs download into wheelhouse; the publish step reads dist",
        (Replace(RELEASE, _DIST, '"${{ github.repository }}" "wheelhouse"', count=2),),
    ),
    Edit(
        "matrix-row-removed",
        "break",
        "ci/test-matrix.yml loses its one Linux nightly-cuda-core row",
        (Replace(MATRIX, _CORE_ROW, ""),),
        (Replace(MATRIX, _CORE_ROW_MIRROR, ""),),
    ),
    Edit(
        "same-run-cu12-upload",
        "break",
        "build-wheel.yml uploads CUDA 12 bindings in the same run (the seed's central risk)",
        (Replace(BUILD, _BINDINGS_UPLOAD, _BINDINGS_UPLOAD + _CU12_UPLOAD),),
    ),
    Edit(
        "step-renamed",
        "harmless",
        "the bindings upload step renamed",
        (
            Replace(
                BUILD,
                "      - name: Upload cuda.bindings build artifacts\n",
                "      - name: Upload cuda.bindings wheels\n",
            ),
        ),
    ),
    Edit(
        "matrix-reordered-retention",
        "harmless",
        "build-wheel.yml's Python versions reversed; the bindings upload keeps 7 days",
        (
            Replace(BUILD, _PY, _PY_REORDERED),
            Replace(BUILD, _BINDINGS_UPLOAD, _BINDINGS_UPLOAD + "          retention-days: 7\n"),
        ),
    ),
    Edit(
        "gpu-label-changed",
        "harmless",
        "one test row's GPU runner label v100 -> t4",
        (Replace(MATRIX, _GPU_ROW, _GPU_ROW.replace("'v100',", "'t4',  ")),),
        (Replace(MATRIX, _GPU_ROW_MIRROR, _GPU_ROW_MIRROR.replace("'v100',", "'t4',  ")),),
    ),
    Edit(
        "tr-as-expansion",
        "harmless",
        "env-vars writes tr -d '.' as ${PY_VER//./}",
        (Replace(ENV_VARS, _TR, 'PYTHON_VERSION_FORMATTED="${PY_VER//./}"'),),
        shell=True,
    ),
    Edit(
        "tr-as-sed",
        "harmless",
        "env-vars writes tr -d '.' as sed 's/\\.//g'",
        (
            Replace(
                ENV_VARS, _TR, """PYTHON_VERSION_FORMATTED=$(echo "${PY_VER}" | sed 's/\\.//g')"""
            ),
        ),
        shell=True,
    ),
)


# --------------------------------------------------------------------------- repositories


def git(root: Path, *argv: str) -> str:
    done = subprocess.run(
        ["git", *argv],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def example_into(root: Path, example: Path = REPO) -> None:
    """The worked example's migration.yaml and stages/ at the top of ``root``."""
    shutil.copy2(example / "migration.yaml", root / "migration.yaml")
    shutil.rmtree(root / "stages", ignore_errors=True)
    shutil.copytree(
        example / "stages", root / "stages", ignore=shutil.ignore_patterns("__pycache__")
    )


def commit_base(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")


def real_base(clone: Path, root: Path, commit: str = COMMIT) -> Path:
    """The clone's tree at ``commit`` with the example at its top, committed in ``root``."""
    root.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(clone), "archive", "--format=tar", commit],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    example_into(root)
    commit_base(root)
    return root


def apply(root: Path, edit: Edit, changes: Sequence[Change]) -> None:
    """``changes`` applied and committed on top of ``root``'s HEAD."""
    for change in changes:
        change.apply(root)
    git(root, "commit", "-q", "-am", edit.name)


# --------------------------------------------------------------------------- running


@dataclass
class Outcome:
    edit: Edit
    check: int
    continuity: int
    check_first: str = ""
    continuity_first: str = ""
    failed: list[str] = field(default_factory=list)
    check_out: str = field(default="", repr=False)
    """What ``check --all --format json`` printed."""
    continuity_out: str = field(default="", repr=False)
    """What ``continuity --base HEAD~1 --format json`` printed."""

    @property
    def caught(self) -> tuple[bool, bool]:
        return self.check == 1, self.continuity == 1


Runner = Callable[[Path, Sequence[str]], tuple[int, str]]


def process(root: Path, argv: Sequence[str]) -> tuple[int, str]:
    done = subprocess.run([STAGEGATE, *argv], cwd=root, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout if done.returncode in (0, 1) else done.stderr


def first_check_finding(out: str) -> tuple[str, list[str]]:
    """The first failing check's first finding in ``check --all --format json``, and the
    labels of every failing check (``kind@stage``)."""
    try:
        report = json.loads(out)
    except ValueError:
        return out.strip().splitlines()[0] if out.strip() else "", []
    failed = [r for r in report["results"] if not r["ok"] and not r.get("readiness")]
    if not failed:
        return "", []
    first = failed[0]
    findings = first.get("findings") or [{"message": first["message"]}]
    return (
        f"stage {first['stage']} {first['check']}: {findings[0]['message']}",
        sorted({f"{r['check']}@{r['stage']}" for r in failed}),
    )


def first_continuity_finding(out: str) -> str:
    try:
        report = json.loads(out)
    except ValueError:
        return out.strip().splitlines()[0] if out.strip() else ""
    for finding in report.get("findings", ()):
        return f"{finding['kind']}: {finding['message']}"
    for release in report.get("releases", ()):
        for side in ("lost", "gained"):
            if release.get(side):
                ctx = release[side][0]
                return f"{release['job']} {side} {ctx['name']}"
    return ""


def judge(root: Path, edit: Edit, run: Runner = process) -> Outcome:
    """``check --all`` and ``continuity --base HEAD~1`` on ``root`` (the edit committed)."""
    check, out = run(root, ["check", "--all", "--format", "json"])
    first, failed = first_check_finding(out)
    cont, cout = run(root, ["continuity", "--base", "HEAD~1", "--format", "json"])
    return Outcome(edit, check, cont, first, first_continuity_finding(cout), failed, out, cout)


def table(outcomes: Sequence[Outcome], width: int = 110) -> str:
    lines = [
        f"{'edit':<28} {'kind':<9} {'check --all':>11} {'continuity':>10}  first finding",
    ]
    for o in outcomes:
        kind = o.edit.kind + ("*" if o.edit.shell else "")
        shown = o.check_first or o.continuity_first or "-"
        if o.check_first and o.continuity_first:
            shown = f"{o.check_first} | continuity: {o.continuity_first}"
        elif o.continuity_first:
            shown = f"continuity: {o.continuity_first}"
        lines.append(
            f"{o.edit.name:<28} {kind:<9} {o.check:>11} {o.continuity:>10}  "
            + (shown if len(shown) <= width else shown[: width - 3] + "...")
        )
    breaks = [o for o in outcomes if o.edit.kind == "break"]
    harmless = [o for o in outcomes if o.edit.kind == "harmless"]
    lines += [
        "",
        f"breaks caught by check --all: {sum(o.check == 1 for o in breaks)} of {len(breaks)}; "
        f"by continuity: {sum(o.continuity == 1 for o in breaks)} of {len(breaks)}",
        f"harmless edits passed by check --all: {sum(o.check == 0 for o in harmless)} of "
        f"{len(harmless)}; by continuity: {sum(o.continuity == 0 for o in harmless)} of "
        f"{len(harmless)}",
        "(* harmless only to a shell reader that computes the new text)",
    ]
    return "\n".join(lines)


def shown(root: Path, edit: Edit, argv: Sequence[str]) -> None:
    """What ``stagegate ARGV`` prints on the edit's commit, as a console session."""
    done = subprocess.run([STAGEGATE, *argv], cwd=root, capture_output=True, text=True, check=False)
    print(f"--- {edit.name}: {edit.what}")
    print(f"$ stagegate {' '.join(argv)}")
    print((done.stdout + done.stderr).rstrip("\n"))
    print(f"$ echo $?\n{done.returncode}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tree", nargs="?", help="a clone of cuda-python")
    parser.add_argument("--commit", default=COMMIT, help="the commit to read (default cb56ab9f)")
    parser.add_argument("--only", action="append", default=[], help="an edit's name (repeat)")
    parser.add_argument("--keep", help="build the repositories in this folder and keep them")
    parser.add_argument("--width", type=int, default=110, help="first finding's characters")
    parser.add_argument(
        "--show",
        action="append",
        default=[],
        metavar="COMMAND",
        help="also print what this stagegate command (e.g. 'drift --stage 0') prints on "
        "each edit, as a console session (docs/drift.md's blocks are made so)",
    )
    args = parser.parse_args(argv)
    where = args.tree or os.environ.get("STAGEGATE_REAL_TREE")
    if not where or not (Path(where) / ".git").exists():
        print("skipped: pass a clone of cuda-python or set STAGEGATE_REAL_TREE (docs/drift.md)")
        return 0
    unknown = set(args.only) - {e.name for e in EDITS}
    if unknown:
        parser.error(f"no edit named {', '.join(sorted(unknown))}")
    chosen = [e for e in EDITS if not args.only or e.name in args.only]
    with tempfile.TemporaryDirectory(prefix="stagegate-breaks-") as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        base = real_base(Path(where), work / "base", args.commit)
        outcomes = []
        for edit in chosen:
            root = work / edit.name
            shutil.copytree(base, root, symlinks=True)
            try:
                apply(root, edit, edit.real)
            except EditFailed as error:
                print(f"{edit.name}: {error}", file=sys.stderr)
                return 2
            outcomes.append(judge(root, edit))
            for command in args.show:
                shown(root, edit, command.split())
            if not args.keep:
                shutil.rmtree(root)
    print(table(outcomes, args.width))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
