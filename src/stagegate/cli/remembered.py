"""Verdicts remembered: `stagegate drift` on inputs it has read before prints what it
printed then, without reading the workflows again.

A drift's output is a function of its inputs, and every input is named here:

- the command line (stage, ``--strict``, format), the current folder, and the
  environment variables a renderer reads (``GITHUB_*``);
- stagegate itself (its version and the name, size and time of each of its modules, as
  for the validation cache) and the libraries that read for it (tree-sitter and its bash
  grammar, PyYAML, packaging, cibuildwheel), by version;
- the migration as loaded (every field of it, stages included: its ``repr``);
- the repository's files, as the reading asked for them: every ``read``, ``listdir`` and
  ``escapes`` question to the ``Source`` the workflow files come from, with the digest of
  its answer (an error by its kind), in the order asked, and the files the
  ``workflows.paths`` globs find.

The first four make the entry's name; the questions are stored in it, and a later run
asks each again of the work tree: one answer that differs, and the workflows are read
afresh (and the entry replaced). A question is a file's bytes or a folder's listing, so
an edit, a new script, a deleted file or a link pointing elsewhere is seen whatever its
time stamp says. Entries are sealed with the cache folder's key (``load.cache``): an
entry no run of this user wrote is never read. ``STAGEGATE_NO_CACHE`` turns it off. Only
a finished comparison is remembered (exit 0 or 1), never an error.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stagegate._version import __version__
from stagegate.load.digest import blake2b

if TYPE_CHECKING:
    from stagegate.ci.files import Files
    from stagegate.load.sources import Source
    from stagegate.model import Migration
    from stagegate.report import Output

LIBRARIES = ("tree_sitter", "tree_sitter_bash", "yaml", "packaging", "cibuildwheel")
"""What reads for drift besides stagegate (import names): another release of one may read
otherwise. Each is known by its files' name, size and time, as stagegate's own modules."""

Question = tuple[str, str]
"""(kind, path): ``read``, ``listdir`` or ``escapes`` of a path from the top."""


def _digest(data: bytes) -> str:
    return blake2b(data, digest_size=20).hexdigest()


def answer(source: Source, question: Question) -> str:
    """What ``source`` answers to ``question``, as a short digest (an error by its kind)."""
    kind, rel = question
    try:
        if kind == "read":
            return _digest(source.read(rel))
        if kind == "listdir":
            return _digest(json.dumps(sorted(source.listdir(rel))).encode())
        return "1" if source.escapes(rel) else "0"
    except (OSError, ValueError) as exc:
        return "!" + type(exc).__name__


class Recording:
    """A ``Source`` that remembers each question asked of it and the digest of its answer
    (the first time it is asked: the files do not change within one run)."""

    def __init__(self, inner: Source) -> None:
        self.inner = inner
        self.asked: dict[Question, str] = {}

    def _note(self, question: Question, found: Callable[[], Any]) -> Any:
        try:
            value = found()
        except (OSError, ValueError) as exc:
            self.asked.setdefault(question, "!" + type(exc).__name__)
            raise
        if question not in self.asked:
            kind = question[0]
            if kind == "read":
                self.asked[question] = _digest(value)
            elif kind == "listdir":
                self.asked[question] = _digest(json.dumps(sorted(value)).encode())
            else:
                self.asked[question] = "1" if value else "0"
        return value

    def read(self, rel: str) -> bytes:
        data: bytes = self._note(("read", rel), lambda: self.inner.read(rel))
        return data

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        entries: list[tuple[str, bool]] = self._note(
            ("listdir", rel), lambda: self.inner.listdir(rel)
        )
        return entries

    def escapes(self, rel: str) -> bool:
        found: bool = self._note(("escapes", rel), lambda: self.inner.escapes(rel))
        return found


def _libraries() -> list[str]:
    """Where each of ``LIBRARIES`` is installed and the size and time of its first file
    (a new release is new files), found without importing it."""
    from importlib.util import find_spec

    found = []
    for name in LIBRARIES:
        try:
            spec = find_spec(name)
            origin = spec.origin if spec is not None else None
            stat = os.stat(origin) if origin else None
        except (ImportError, ValueError, OSError):
            stat = origin = None
        found.append(f"{name}:{origin}:{stat.st_size}:{stat.st_mtime_ns}" if stat else f"{name}:-")
    return found


class Remembered:
    """The entry of one drift: its name (everything but the files) and, once read or
    made, the questions and the output."""

    def __init__(
        self, migration: Migration, files: Files, listed: list[str], options: list[str]
    ) -> None:
        from stagegate.load.cache import cache_directory, fingerprint, sealed, secret

        self.files = files
        directory = cache_directory()
        key = secret(directory) if directory is not None else None
        self.path: Path | None = None
        if directory is None or key is None:
            return
        self.directory = directory
        env = sorted((k, v) for k, v in os.environ.items() if k.startswith("GITHUB_"))
        parts = [
            "drift",
            __version__,
            sys.version,
            fingerprint(),
            *_libraries(),
            *options,
            os.getcwd(),
            str(files.root),
            str(files.shown_root),
            _digest(repr(migration).encode("utf-8", "surrogateescape")),
            json.dumps(env),
            json.dumps(listed),
        ]
        digest = blake2b()
        for part in parts:  # length-prefixed, so no two sequences of parts hash alike
            data = part.encode("utf-8", "surrogateescape")
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        name = sealed(key, "verdict", digest.hexdigest().encode("ascii"))
        self.path = directory / "verdicts" / f"{name}.json"

    def recall(self) -> tuple[Output, bool] | None:
        """The output and verdict of the same drift, if every question it asked gets the
        same answer now."""
        from stagegate.load.cache import read_json
        from stagegate.report import Output

        if self.path is None:
            return None
        stored = read_json(self.directory, self.path)
        try:
            asked = [((kind, rel), found) for kind, rel, found in stored["asked"]]
            output = Output(stored["out"], stored["err"], stored["summary"])
            ok = stored["ok"]
        except (TypeError, KeyError, ValueError):
            return None  # none, or not of this shape
        source = self.files.source
        if not isinstance(ok, bool) or any(answer(source, q) != found for q, found in asked):
            return None
        return output, ok

    def store(self, asked: dict[Question, str], output: Output, ok: bool) -> None:
        from stagegate.load.cache import store_json

        if self.path is None:
            return
        data = {
            "asked": [[kind, rel, found] for (kind, rel), found in asked.items()],
            "out": output.out,
            "err": output.err,
            "summary": output.summary,
            "ok": ok,
        }
        store_json(self.directory, self.path, data)


def drift(
    migration: Migration, stage: int, *, strict: bool, fmt: str, fresh: bool = False
) -> tuple[Output, bool]:
    """``stagegate drift``'s output at ``stage`` and whether it passed: remembered where
    nothing it reads has changed since a run that printed it, else compared afresh
    (``fresh``: compared afresh whatever is remembered, and remembered again)."""
    from stagegate.ci.files import discover, files_for

    files = files_for(migration)
    listed = discover(files.root, migration.workflows.paths)
    entry = Remembered(migration, files, listed, [str(stage), str(strict), fmt])
    found = None if fresh else entry.recall()
    if found is not None:
        return found
    from stagegate.ci.drift import drift as compare
    from stagegate.report.drift import DRIFT

    recording = Recording(files.source)
    files.source = recording
    result = compare(migration, stage, strict=strict, files=files)
    output = DRIFT[fmt](result)
    entry.store(recording.asked, output, not result.failed)
    return output, not result.failed
