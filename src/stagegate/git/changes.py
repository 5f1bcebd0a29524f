"""What a change is, as `affected` and the check `reuse-safe` read it: the paths that differ
between the merge base and the head, the symbolic links of both trees, and the
baseline run the planning job found (a small JSON file it writes).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stagegate.engine.affected import Baseline, Change, Compared
from stagegate.engine.paths import link_target
from stagegate.errors import GitError, InvalidInput, Loc, Problem
from stagegate.git.repo import Repository
from stagegate.git.run import Pending, status
from stagegate.model import Migration
from stagegate.records import record

_SHAPE = (
    'a JSON object {"sha": "<the baseline run\'s 40-hex commit, or null when no run was '
    'found>", "artifacts": ["<artifact name>", ...]}'
)
MAX_BASELINE_BYTES = 64 << 20


def _bad(file: str, message: str, line: int = 1, column: int = 1) -> InvalidInput:
    return InvalidInput([Problem(Loc(file, line, column), message)])


def read_baseline(file: str) -> tuple[str | None, frozenset[str]]:
    """The baseline file's commit and artifact names; InvalidInput, located, otherwise."""
    path = Path(file)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BASELINE_BYTES + 1)
    except OSError as error:
        raise _bad(
            file,
            f"cannot read the baseline file: {error.strerror or error}; write it in the "
            f"planning job before running affected ({_SHAPE})",
        ) from None
    if len(data) > MAX_BASELINE_BYTES:
        raise _bad(file, f"the baseline file is larger than {MAX_BASELINE_BYTES >> 20} MB")
    try:
        value: Any = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise _bad(file, f"not UTF-8 text ({error.reason}); write {_SHAPE}") from None
    except json.JSONDecodeError as error:
        raise _bad(
            file, f"not JSON: {error.msg}; write {_SHAPE}", error.lineno, error.colno
        ) from None
    if not isinstance(value, dict) or set(value) - {"sha", "artifacts", "run"}:
        extra = sorted(set(value) - {"sha", "artifacts", "run"}) if isinstance(value, dict) else []
        what = f"unknown keys {extra}" if extra else "not an object"
        raise _bad(file, f"{what}; write {_SHAPE}")
    sha = value.get("sha")
    artifacts = value.get("artifacts", [])
    if sha is not None and (
        not isinstance(sha, str) or len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha)
    ):
        raise _bad(file, f"sha: {sha!r} is not a 40-hex commit id (lower case) nor null")
    if not isinstance(artifacts, list) or not all(isinstance(a, str) for a in artifacts):
        raise _bad(file, "artifacts: not a list of artifact names (strings)")
    return sha, frozenset(artifacts)


def _baseline(repo: Repository, file: str, merge_base: str, head: str) -> Baseline:
    sha, artifacts = read_baseline(file)
    if sha is None or sha == merge_base:
        return Baseline(source=file, sha=sha, artifacts=artifacts)
    try:
        known = repo.resolve(sha)
    except GitError:
        return Baseline(
            source=file,
            sha=sha,
            artifacts=artifacts,
            problem=(
                f"its commit {sha[:12]} is not in this clone, so what changed since it is "
                f"unknown (fetch it: `git fetch origin {sha}`)"
            ),
        )
    return Baseline(
        source=file, sha=sha, artifacts=artifacts, since=tuple(repo.changed_paths(known, head))
    )


def model_paths(repo: Repository, migration: Migration) -> tuple[str, ...]:
    """The migration's own files from the top of the repository: its file, and its
    stages folder (ending in ``/``)."""
    from pathlib import PurePosixPath

    folder = repo.rel(migration.root).as_posix()
    top = PurePosixPath("" if folder == "." else folder)
    stages = (top / migration.stages_dir).as_posix()
    return ((top / Path(migration.file).name).as_posix(), stages.rstrip("/") + "/")


_LINK = "120000"
_NO_MODE = "000000"


@record
class _Entry:
    """One path of ``git diff --raw``: its modes and object ids before and after."""

    path: str
    old_mode: str
    new_mode: str
    old_id: str
    new_id: str


def _raw_diff(out: bytes) -> list[_Entry]:
    """``git diff --raw -z --no-abbrev`` output: ``:MODE MODE ID ID STATUS\0PATH\0``."""
    fields = out.split(b"\0")
    entries = []
    for at in range(0, len(fields) - 1, 2):
        meta, path = fields[at], fields[at + 1]
        if not meta.startswith(b":"):
            raise ValueError(f"unexpected git diff --raw output: {meta!r}")
        old_mode, new_mode, old_id, new_id, _status = meta[1:].decode("ascii").split(" ")
        entries.append(_Entry(os.fsdecode(path), old_mode, new_mode, old_id, new_id))
    return entries


_LINK_ENTRY = b"120000 blob "


def _link_entries(out: bytes) -> list[tuple[str, str]]:
    """(path, blob id) of the symbolic links in ``git ls-tree -r -z`` output
    (``MODE TYPE ID\tPATH\0`` per entry): each entry that starts with the link mode,
    found by a byte search (a regex over a hundred thousand entries takes a tenth of a
    second); one in the middle of a name is not at the start of an entry."""
    found = []
    at = out.find(_LINK_ENTRY)
    while at >= 0:
        tab = out.find(b"\t", at)
        end = out.find(b"\0", tab)
        if at == 0 or out[at - 1] == 0:
            sha = out[at + len(_LINK_ENTRY) : tab].decode("ascii")
            found.append((os.fsdecode(out[tab + 1 : len(out) if end < 0 else end]), sha))
        at = out.find(_LINK_ENTRY, at + 1)
    return found


def _links_file(tree: str) -> tuple[Path, Path] | None:
    """The cache folder and the file of the links of ``tree`` in it (None: no cache)."""
    from stagegate.load.cache import cache_directory

    folder = cache_directory()
    return None if folder is None else (folder, folder / "links" / f"{tree}.json")


def tree_links(repo: Repository, commit: str, tree: str | None = None) -> list[tuple[str, str]]:
    """The symbolic links of ``commit``'s tree (``tree``, when known): (link path, target
    text), as git stores them. Kept in the cache per tree (a tree's content never
    changes): listing every file of a large tree is most of what `affected` waits for."""
    objects = repo.objects()
    if tree is None:
        kind, data = objects.read(commit, action=f"read commit {commit[:12]}")
        if kind != "commit" or not data.startswith(b"tree "):
            raise GitError(f"cannot read commit {commit[:12]}: it is a {kind}, not a commit")
        tree = data[5 : data.index(b"\n")].decode("ascii")
    from stagegate.load.cache import read_json, store_json

    where = _links_file(tree)
    if where is not None:  # not cached yet, unreadable or not sealed: list the tree
        kept = read_json(*where)
        if isinstance(kept, list) and all(
            isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) for x in e)
            for e in kept
        ):
            return [(link, text) for link, text in kept]
    out = Pending(
        ["ls-tree", "-r", "-z", "--full-tree", tree], repo.root, bytes,
        action=f"list the files of {commit[:12]}",
    ).result()  # fmt: skip
    found: dict[tuple[str, str], None] = {}
    for path, sha in _link_entries(out):
        kind, text = objects.read(sha, action=f"read the link {path}")
        if kind == "blob":
            found.setdefault((path, text.decode("utf-8", "surrogateescape")))
    links = list(found)
    if where is not None:
        store_json(*where, [list(e) for e in links])
    return links


def _link_changes(
    repo: Repository, entries: list[_Entry], merge_base: str, head: str
) -> list[tuple[str, str, str]]:
    """(name, link, how) for each file a changed symbolic link led to before the change
    (read from the merge base) or leads to after it: a link deleted, added or retargeted
    takes those files away from, or gives them to, whoever's `paths` cover them."""
    objects = repo.objects()
    sides: dict[str, list[tuple[str, str, str]]] = {merge_base: [], head: []}
    for e in entries:
        old, new = e.old_mode == _LINK, e.new_mode == _LINK
        if not (old or new) or (old and new and e.old_id == e.new_id):
            continue
        if old and new:
            how = "retargets"
        elif old:
            how = "deletes" if e.new_mode == _NO_MODE else "replaces"
        else:
            how = "adds" if e.old_mode == _NO_MODE else "puts in place of a file"
        for is_link, commit, sha in ((old, merge_base, e.old_id), (new, head, e.new_id)):
            if not is_link:
                continue
            kind, text = objects.read(sha, action=f"read the link {e.path}")
            target = link_target(e.path, text.decode("utf-8", "surrogateescape"))
            if kind == "blob" and target is not None:
                sides[commit].append((e.path, target, how))
    found: dict[tuple[str, str, str], None] = {}
    for commit, links in sides.items():
        for at in range(0, len(links), 500):
            chunk = links[at : at + 500]
            listed = repo.git(
                "--literal-pathspecs", "ls-tree", "-r", "-z", "--name-only", "--full-tree",
                commit, "--", *dict.fromkeys(t for _l, t, _h in chunk),
                action=f"list the files the links of {commit[:12]} lead to",
            )  # fmt: skip
            files = [f for f in listed.split("\0") if f]
            for link, target, how in chunk:
                for name in files:
                    if name == target or name.startswith(target + "/"):
                        found.setdefault((link + name[len(target) :], link, how))
    return list(found)


def open_change(
    start: Path,
    base: str,
    head: str = "HEAD",
    baseline: str | None = None,
    *,
    meanwhile: Callable[[], object] | None = None,
) -> tuple[Repository, Change]:
    """The repository holding ``start`` and the change (``gather``), with the repository,
    the refs, the head's tree and the merge base (``BASE...HEAD`` lists it after a ``^``:
    the first is the one ``git merge-base`` names) asked of git by one process where all
    is well; anything
    else takes the long way, whose messages say what is wrong (``open_repository``: not a
    repository, a bare one, no commits; ``Repository.resolve``: how to fetch a ref)."""
    from stagegate.git.repo import open_repository

    found = None
    if start.is_dir() and _plain(base) and _plain(head):
        code, out, _err = status(
            ["rev-parse", "--is-bare-repository", "--show-toplevel", f"{base}^{{commit}}",
             f"{head}^{{commit}}", f"{head}^{{tree}}", f"{base}^{{commit}}...{head}^{{commit}}"],
            start,
        )  # fmt: skip
        lines = out.split("\n")
        known = code == 0 and len(lines) >= 8 and lines[0] == "false" and lines[1] != ""
        known = known and lines[5:7] == [lines[3], lines[2]] and lines[7].startswith("^")
        if known and all(_HEX.fullmatch(x) for x in [*lines[2:5], lines[7][1:]]):
            found = lines
    if found is None:
        repo = open_repository(start)
        return repo, gather(repo, base, head, baseline, meanwhile=meanwhile)
    repo = Repository(root=Path(found[1]).resolve())
    return repo, gather(
        repo,
        base,
        head,
        baseline,
        resolved=(found[2], found[3], found[4], found[7][1:]),
        meanwhile=meanwhile,
    )


def _plain(ref: str) -> bool:
    return bool(ref) and not ref.startswith("-") and "\n" not in ref


def _resolve(repo: Repository, base: str, head: str) -> tuple[str, str, str | None]:
    """The commits ``base`` and ``head`` name and the head's tree, asked of git at once;
    where that fails, each ref alone (``Repository.resolve``: the message says how to
    fetch the one the clone does not have)."""
    if _plain(base) and _plain(head):
        code, out, _err = status(
            ["rev-parse", f"{base}^{{commit}}", f"{head}^{{commit}}",
             f"{head}^{{tree}}"],
            repo.root,
        )  # fmt: skip
        found = out.split("\n")
        if code == 0 and len(found) == 3 and all(_HEX.fullmatch(x) for x in found):
            return found[0], found[1], found[2]
    return repo.resolve(base), repo.resolve(head), None


_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def gather(
    repo: Repository,
    base: str,
    head: str = "HEAD",
    baseline: str | None = None,
    *,
    resolved: tuple[str, str, str, str] | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> Change:
    """The change from the merge base of ``base`` and ``head`` to ``head``; GitError (exit
    3, saying how to fetch) for a ref the clone does not have. ``resolved``: the commits
    of ``base`` and ``head``, the head's tree and their merge base, when already known;
    ``meanwhile``: work of the caller's, done while git compares the commits."""
    if resolved is None:
        base_sha, head_sha, tree = _resolve(repo, base, head)
        merge_base = repo.merge_base(base_sha, head_sha, shown=(base, head))
    else:
        base_sha, head_sha, tree, merge_base = resolved
    diff = Pending(
        [
            "diff", "--raw", "-z", "--no-abbrev", "--no-renames", "--no-ext-diff",
            "--no-textconv", "--ignore-submodules=none", merge_base, head_sha, "--",
        ],
        repo.root,
        _raw_diff,
        action=f"compare {merge_base[:12]} with {head_sha[:12]}",
    )  # fmt: skip
    if meanwhile is not None:
        meanwhile()
    entries = diff.result()
    changed = list(dict.fromkeys(e.path for e in entries))
    links: list[tuple[str, str]] = []
    through: list[tuple[str, str, str]] = []
    if changed:
        for link, text in tree_links(repo, head_sha, tree):
            target = link_target(link, text)
            if target is not None:
                links.append((link, target))
        through = _link_changes(repo, entries, merge_base, head_sha)
    found = _baseline(repo, baseline, merge_base, head_sha) if baseline is not None else None
    return Change(
        commits=Compared(base=base_sha, head=head_sha, merge_base=merge_base),
        changed=tuple(changed),
        links=tuple(links),
        baseline=found,
        through=tuple(through),
    )
