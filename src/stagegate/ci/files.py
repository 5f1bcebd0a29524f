"""The workflow files: finding them, reading them once (read limit, no links out of the
repository, the document cache), and the shapes a workflow's YAML must have.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from stagegate.ci.model import Action, Workflow, build_action, build_workflow, triggers
from stagegate.ci.model import invalid as invalid
from stagegate.ci.transfers import MAX_FILES, MAX_SCRIPT
from stagegate.errors import InvalidInput, Loc
from stagegate.git.objects import GitSource
from stagegate.load.sources import FileSource, Source
from stagegate.load.yamlsrc import Document, decode
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.load.yamlsrc import read as read_yaml
from stagegate.model import Migration
from stagegate.model.ghexpr import Unknown, Value

# --------------------------------------------------------------------------- files


def discover(root: Path | Source, patterns: Sequence[str]) -> list[str]:
    """The files (POSIX, relative to the top) that the ``workflows.paths`` globs match, in
    the work tree under ``root`` or in a commit (a ``Source``): regular files whose path,
    symbolic links followed, stays inside the repository."""
    source = FileSource(root) if isinstance(root, Path) else root
    found: set[str] = set()
    for pattern in patterns:
        posix = PurePosixPath(pattern)
        if posix.is_absolute() or ".." in posix.parts:
            continue  # refused by load with its location
        for rel in _glob(source, "", list(posix.parts)):
            if rel in found:
                continue
            if len(found) >= MAX_FILES:
                raise invalid(
                    Loc(rel, 1, 1),
                    f"workflows.paths match more than {MAX_FILES:,} files; "
                    "narrow the globs under workflows.paths.",
                )
            if not source.escapes(rel):  # a symbolic link out of the repository is not read
                found.add(rel)
    return sorted(found)


def _glob(source: Source, folder: str, parts: list[str]) -> Iterator[str]:
    """The files under ``folder`` matching the glob ``parts`` (``**``: any folders, none
    included), as pathlib's glob finds them."""
    if not parts:
        return
    head, rest = parts[0], parts[1:]
    try:
        entries = source.listdir(folder or ".")
    except (OSError, ValueError):
        return
    if head == "**":
        yield from _glob(source, folder, rest)
        for name, is_dir in sorted(entries):
            if is_dir:
                yield from _glob(source, _join(folder, name), parts)
        return
    literal = not any(c in head for c in "*?[")
    for name, is_dir in sorted(entries):
        if (name != head) if literal else not fnmatch.fnmatchcase(name, head):
            continue
        if rest:
            if is_dir:
                yield from _glob(source, _join(folder, name), rest)
        elif not is_dir:
            yield _join(folder, name)


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def top_levels(folder: Path) -> int | None:
    """How many folders up from ``folder`` the top of its git work tree is: the nearest
    folder at or above it that holds ``.git`` (a folder, or the file of a linked work
    tree); None outside a git repository."""
    absolute = Path(os.path.abspath(folder))
    for levels, candidate in enumerate((absolute, *absolute.parents)):
        if os.path.lexists(candidate / ".git"):
            return levels
    return None


def _up(folder: Path) -> Path:
    levels = top_levels(folder) or 0
    return Path(*([".."] * levels)) if levels else Path()


def shown_top(folder: Path, shown: Path) -> Path:
    """The top of the work tree holding ``folder`` (``workflow_root``), named as ``shown``
    (``folder`` as locations name it) names it."""
    return Path(os.path.normpath(shown / _up(folder)))


def workflow_root(folder: Path, shown: Path | None = None) -> Files:
    """The workflow files of the repository that holds ``folder`` (the migration's
    folder): found and named from the top of its git work tree, where GitHub reads them,
    wherever the migration lives; from ``folder`` itself outside a git repository.

    ``shown`` is ``folder`` as the migration's locations name it (relative to the current
    folder, or the user's checkout when ``folder`` is a temporary tree): a workflow's
    locations are named the same way (``ci/..`` -> ``.github/workflows/x.yml``)."""
    top = Path(os.path.normpath(folder / _up(folder)))
    return Files(top, shown=shown_top(folder, shown if shown is not None else folder))


def files_for(migration: Migration) -> Files:
    """The workflow files of the repository holding the migration (``workflow_root``)."""
    return workflow_root(migration.root if str(migration.root) else Path("."))


def nothing_found(files: Files, paths: Sequence[str], where: Loc | None, file: str) -> InvalidInput:
    """The error of a migration whose ``workflows.paths`` match no file: one, at the
    ``paths`` key (``where``), else at the top of the migration ``file``."""
    top = files.shown(".")
    in_git = top_levels(files.root) is not None
    place = (
        f"the top of the git work tree ({top})"
        if in_git
        else f"the migration's folder ({top}: it is in no git repository)"
    )
    default = where is None
    return invalid(
        where or Loc(file, 1, 1),
        f"no workflow file found: {'the default ' if default else ''}workflows.paths "
        f"({', '.join(repr(p) for p in paths)}) match nothing under {place}. "
        + (
            "Run stagegate in the repository whose workflows the migration describes, or "
            "set workflows.paths to where the workflow files are (relative to that folder)."
            if default
            else "Fix the globs: they are relative to that folder, like GitHub's "
            "'.github/workflows/*.yml'."
        ),
    )


class Files:
    """The repository's files as the workflow readers see them, each read once: the work
    tree under ``root``, or a commit (``source``, a ``git.objects.GitSource``); workflow
    and action files parsed (through the document cache) and built into the typed model
    (``ci.model``), scripts and data files read within the read limit, nothing from
    outside the repository."""

    def __init__(
        self, root: Path, *, shown: Path | None = None, source: Source | None = None
    ) -> None:
        """``root``: the top the files are named from (their names, ``rel``, are relative
        to it); ``shown``: that folder as locations name it (None: ``rel``); ``source``:
        where the bytes come from (default: the work tree under ``root``)."""
        from stagegate.load.cache import ValidCache

        self.root = root
        self.source: Source = source if source is not None else FileSource(root)
        self.shown_root = shown
        self.cache = ValidCache()
        self.docs: dict[str, Document] = {}
        self.texts: dict[str, list[str]] = {}
        self.rels: dict[str, str] = {}
        """A file's name in locations -> its name from ``root``."""
        self.data: dict[str, tuple[bool, Any]] = {}
        """A repository file a script's ``yq`` reads -> (True, its data) or (False, why
        not): read once per reading, as the workflow files are."""
        self.raw: dict[str, bytes | None] = {}
        """Every file read so far -> its bytes (None: not a regular file of the
        repository): what a reading depended on."""
        self.paths: dict[str, str | None] = {}
        """A path a script names -> the repository file it is (``repo_path``)."""
        self.workflows: dict[str, Workflow] = {}
        self.actions: dict[str, Action] = {}

    def shown(self, rel: str) -> str:
        """How locations name the file ``rel``: from the current folder, like every file
        stagegate names (``rel`` itself when the files are read where they are shown)."""
        if self.shown_root is None or str(self.shown_root) == ".":
            return rel
        return Path(os.path.normpath(self.shown_root / rel)).as_posix()

    def rel(self, file: str) -> str:
        """The name from ``root`` of the file a location names."""
        return self.rels.get(file, file)

    def bytes_of(self, rel: str) -> bytes | None:
        """The bytes (within the read limit, one past it at most) of the regular file
        ``rel`` of the repository; None where it is none (absent, a folder, a device,
        outside the repository)."""
        if rel in self.raw:
            return self.raw[rel]
        posix = PurePosixPath(rel)
        data: bytes | None = None
        if not (posix.is_absolute() or ".." in posix.parts or not posix.parts):
            try:
                if not self.source.escapes(rel):
                    data = self.source.read(rel)
            except (OSError, ValueError):
                data = None
        self.raw[rel] = data
        return data

    def is_file(self, rel: str) -> bool:
        """Whether ``rel`` is a regular file of the repository; in a commit, as its tree
        says, without reading the file (a script may name an archive a mirror or a partial
        clone does not hold: ``Expand-Archive src/libsodium.zip``)."""
        if rel not in self.raw and isinstance(self.source, GitSource):
            posix = PurePosixPath(rel)
            if posix.is_absolute() or ".." in posix.parts or not posix.parts:
                return False
            return self.source.is_file(rel)
        return self.bytes_of(rel) is not None

    def repo_path(self, written: str) -> str | None:
        """The repository path of a file a script names (relative to the top, as the
        step's working folder is), where it is a regular file inside the repository
        (answered once per text: scripts name the same paths in every context)."""
        if written in self.paths:
            return self.paths[written]
        posix = PurePosixPath(written)
        rel: str | None = None
        if not (posix.is_absolute() or ".." in posix.parts or not posix.parts):
            rel = posix.as_posix()
            rel = rel if self.is_file(rel) else None
        self.paths[written] = rel
        return rel

    def script(self, rel: str) -> str | None:
        """A shell script's text: one with a ``sh``/``bash`` shebang, or none and no
        suffix of another language; None for anything else (Python, PowerShell, binaries)
        or where it cannot be read as text within MAX_SCRIPT characters."""
        if PurePosixPath(rel).suffix not in ("", ".sh", ".bash"):
            return None
        data = self.bytes_of(rel)
        if data is None or len(data) > MAX_SCRIPT or b"\0" in data:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        first = text.split("\n", 1)[0]
        if first.startswith("#!") and not re.search(r"\b(ba)?sh\b", first):
            return None
        return text

    def get(self, rel: str, where: Loc | None = None) -> Document:
        """``rel``'s document; InvalidInput (at ``where``, what refers to it) where it
        cannot be read or parsed."""
        try:
            return self.document(rel, where)
        except FileNotFoundError:
            raise invalid(
                where or Loc(rel, 1, 1),
                f"{rel}: no such file; fix the reference or add the file.",
            ) from None
        except IsADirectoryError:
            raise invalid(where or Loc(rel, 1, 1), f"{rel} is a folder, not a file.") from None
        except OSError as exc:
            raise invalid(
                where or Loc(rel, 1, 1), f"{rel}: cannot read: {exc.strerror or exc}"
            ) from None

    def document(self, rel: str, where: Loc | None = None, *, name: str | None = None) -> Document:
        """``rel`` read (within the read limit) and parsed once, through the document cache;
        ``name`` is the file its locations name (``rel``: a path git gives may not be text).
        OSError where it cannot be read; InvalidInput where it leads outside the
        repository or is not a workflow's YAML."""
        if rel in self.docs:
            return self.docs[rel]
        shown = name or self.shown(rel)
        if self.source.escapes(rel):
            raise invalid(
                where or Loc(shown, 1, 1),
                f"{shown} leads outside the repository (a symbolic link); "
                "stagegate reads nothing from outside it.",
            )
        raw = self.source.read(rel)
        self.raw[rel] = raw
        doc = self.cache.document(raw, shown)
        if doc is None:
            doc = read_yaml(raw, shown)
            self.cache.store_document(raw, doc)
        self.docs[rel] = doc
        self.rels[shown] = rel
        self.texts[shown] = decode(raw, shown).splitlines()
        return doc

    def workflow(self, rel: str, where: Loc | None = None) -> Workflow:
        """The workflow file ``rel`` as the typed model, built once."""
        found = self.workflows.get(rel)
        if found is None:
            doc = self.get(rel, where)
            found = self.workflows[rel] = build_workflow(rel, doc, self.texts[doc.file])
        return found

    def action(self, rel: str, where: Loc | None = None) -> Action:
        """The action file ``rel`` as the typed model, built once."""
        found = self.actions.get(rel)
        if found is None:
            doc = self.get(rel, where)
            found = self.actions[rel] = build_action(rel, doc, self.texts[doc.file])
        return found

    def block_offset(self, doc: Document, path: DocPath) -> int:
        """1 when the value at ``path`` is a block scalar (its text starts on the next line)."""
        loc = doc.loc(path)
        lines = self.texts.get(doc.file, [])
        if 0 < loc.line <= len(lines):
            char = lines[loc.line - 1][loc.col - 1 : loc.col]
            return 1 if char in ("|", ">") else 0
        return 0


# --------------------------------------------------------------------------- structure


def as_mapping(doc: Document, path: DocPath, value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid(doc.loc(path), f"{what} must be a mapping (key: value); fix the workflow.")
    return value


def as_list(doc: Document, path: DocPath, value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise invalid(doc.loc(path), f"{what} must be a list; fix the workflow.")
    return value


def root_inputs(workflow: Workflow) -> Mapping[str, Value] | Unknown:
    """The inputs of a workflow that starts a run: chosen by whoever dispatches it, else none.

    A `workflow_call` workflow that nobody read here calls gets them from an unknown
    caller; a push or schedule run has an empty inputs context (each input is null)."""
    if workflow.triggers == {"workflow_call"}:
        return Unknown("inputs", f"no workflow read here calls {workflow.file}; bind its inputs")
    if workflow.dispatch_inputs:
        return Unknown(
            "inputs",
            f"{workflow.file} is started by workflow_dispatch, whose inputs are chosen then; "
            "bind them",
        )
    return {}


def triggers_of(data: dict[str, Any]) -> set[str]:
    return set(triggers(data))
