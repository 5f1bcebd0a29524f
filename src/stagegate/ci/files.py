"""The workflow files: finding them, reading them once (read limit, no links out of the
repository, the document cache), and the shapes a workflow's YAML must have.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from stagegate.ci.transfers import MAX_FILES
from stagegate.errors import InvalidInput, Loc, Problem
from stagegate.load.yamlsrc import Document, decode
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.load.yamlsrc import read as read_yaml
from stagegate.model.ghexpr import Unknown, Value

# --------------------------------------------------------------------------- files


def invalid(loc: Loc, message: str) -> InvalidInput:
    return InvalidInput([Problem(loc, message)])


def discover(root: Path, patterns: Sequence[str]) -> list[str]:
    """The files (POSIX, relative to ``root``) that the ``workflows.paths`` globs match."""
    found: set[str] = set()
    resolved_root = root.resolve()
    for pattern in patterns:
        posix = PurePosixPath(pattern)
        if posix.is_absolute() or ".." in posix.parts:
            continue  # refused by load with its location
        try:
            matches = list(root.glob(pattern))
        except (ValueError, OSError):
            continue
        for path in matches:
            if len(found) > MAX_FILES:
                raise invalid(
                    Loc(str(path.relative_to(root).as_posix()), 1, 1),
                    f"workflows.paths match more than {MAX_FILES:,} files; "
                    "narrow the globs under workflows.paths.",
                )
            try:
                if not path.is_file():
                    continue
                target = path.resolve()
            except OSError:
                continue
            if target != resolved_root and resolved_root not in target.parents:
                continue  # a symbolic link out of the repository is not read
            found.add(path.relative_to(root).as_posix())
    return sorted(found)


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
    """Parsed workflow and action files, each read once."""

    def __init__(self, root: Path, *, shown: Path | None = None) -> None:
        """``root``: the folder the files are found under (their names, ``rel``, are
        relative to it); ``shown``: that folder as locations name it (None: ``rel``)."""
        from stagegate.load.cache import ValidCache

        self.root = root
        self.shown_root = shown
        self.cache = ValidCache()
        self.docs: dict[str, Document] = {}
        self.texts: dict[str, list[str]] = {}
        self.rels: dict[str, str] = {}
        """A file's name in locations -> its name from ``root``."""
        self.data: dict[str, tuple[bool, Any]] = {}
        """A repository file a script's ``yq`` reads -> (True, its data) or (False, why
        not): read once per reading, as the workflow files are."""

    def shown(self, rel: str) -> str:
        """How locations name the file ``rel``: from the current folder, like every file
        stagegate names (``rel`` itself when the files are read where they are shown)."""
        if self.shown_root is None or str(self.shown_root) == ".":
            return rel
        return Path(os.path.normpath(self.shown_root / rel)).as_posix()

    def rel(self, file: str) -> str:
        """The name from ``root`` of the file a location names."""
        return self.rels.get(file, file)

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
        from stagegate.load.sources import read_limited

        shown = name or self.shown(rel)
        path = self.root / rel
        resolved = path.resolve()
        root = self.root.resolve()
        if resolved != root and root not in resolved.parents:
            raise invalid(
                where or Loc(shown, 1, 1),
                f"{shown} leads outside the repository (a symbolic link); "
                "stagegate reads nothing from outside it.",
            )
        raw = read_limited(path)
        doc = self.cache.document(raw, shown)
        if doc is None:
            doc = read_yaml(raw, shown)
            self.cache.store_document(raw, doc)
        self.docs[rel] = doc
        self.rels[shown] = rel
        self.texts[shown] = decode(raw, shown).splitlines()
        return doc

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


def root_inputs(
    rel: str, data: dict[str, Any], triggers: set[str]
) -> Mapping[str, Value] | Unknown:
    """The inputs of a workflow that starts a run: chosen by whoever dispatches it, else none.

    A `workflow_call` workflow that nobody read here calls gets them from an unknown
    caller; a push or schedule run has an empty inputs context (each input is null)."""
    if triggers == {"workflow_call"}:
        return Unknown("inputs", f"no workflow read here calls {rel}; bind its inputs")
    on = data.get("on")
    dispatch = on.get("workflow_dispatch") if isinstance(on, dict) else None
    if isinstance(dispatch, dict) and dispatch.get("inputs"):
        return Unknown(
            "inputs",
            f"{rel} is started by workflow_dispatch, whose inputs are chosen then; bind them",
        )
    return {}


def triggers_of(data: dict[str, Any]) -> set[str]:
    on = data.get("on")
    if isinstance(on, str):
        return {on}
    if isinstance(on, list):
        return {str(t) for t in on}
    if isinstance(on, dict):
        return {str(t) for t in on}
    return set()


def call_inputs(data: dict[str, Any]) -> dict[str, Any]:
    on = data.get("on")
    if isinstance(on, dict) and isinstance(on.get("workflow_call"), dict):
        inputs = on["workflow_call"].get("inputs")
        if isinstance(inputs, dict):
            return inputs
    return {}


def local_target(uses: str, base: str) -> str | None:
    """The repository path of a local ``uses: ./...`` reference (None: not local)."""
    if not uses.startswith("./"):
        return None
    rel = PurePosixPath(uses[2:].split("@", 1)[0])
    if ".." in rel.parts or rel.is_absolute():
        return None
    return rel.as_posix()


def action_name(uses: str) -> str:
    return uses.split("@", 1)[0].strip().lower()
