"""The `paths` of producers and consumers: which changed files a glob covers.

The globs mean what ``audit.ignore`` and ``legacy.paths`` mean (``audit.glob_pathspecs``,
which hands them to git), read as in ``.gitignore``: ``*`` and ``?`` within one path
component, ``[...]`` a class of one character other than ``/``, ``**`` across folders; a
glob with a ``/`` before its end starts at the top of the repository, one without
(``*.md``) matches at any depth; a glob that matches a folder covers everything under
it, and one that ends in ``/`` matches folders only. Matching is case-sensitive.

``Index`` answers "which of these globs cover this path" for thousands of globs without
trying each: a glob is filed under the literal folder its anchored form starts with, so
a path is tried only against the globs filed under one of its own folders.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar

from stagegate.errors import Loc

K = TypeVar("K")

_GLOBBY = re.compile(r"[*?\[\\]")  # a glob character or an escape


class PathGlob:
    """One compiled `paths` glob. The common forms (a literal path, ``folder/**``) are
    decided by string comparison; the regex is compiled only for the others, on first use
    (thousands of producers each declare their globs; most are never tried)."""

    __slots__ = ("_regex", "folder_only", "literal", "text", "unanchored")

    def __init__(self, text: str) -> None:
        self.text = text
        self.folder_only = text.endswith("/")
        body = text.rstrip("/")
        self.unanchored = "/" not in body
        body = body.lstrip("/")
        self.literal: str | None = None  # the glob is this path (or a folder of it)
        found = _GLOBBY.search(body)
        first = -1 if found is None else found.start()
        if first < 0:
            self.literal = body
        elif not self.unanchored and first == len(body) - 2 and body.endswith("/**"):
            self.literal = body[:-3]  # folder/**: everything under folder
            self.folder_only = True
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = _compile(self.text)
        return self._regex

    def matches(self, path: str) -> bool:
        lit = self.literal
        if lit is None:
            return self.regex.fullmatch(path) is not None
        if self.unanchored:  # a name at any depth, or a folder of that name
            hit = path == lit or path.startswith(lit + "/") or path.endswith("/" + lit)
            hit = hit or f"/{lit}/" in path
            if self.folder_only:
                return path.startswith(lit + "/") or f"/{lit}/" in path
            return hit
        if self.folder_only:
            return path.startswith(lit + "/")
        return path == lit or path.startswith(lit + "/")


def folder_of(text: str) -> str:
    """The literal folder a glob starts with, under which ``Index`` files it: the
    folders before the first glob character of an anchored glob (a glob of a folder,
    ending in ``/``, without one: that folder), else the top (``""``)."""
    body = text.rstrip("/")
    if "/" not in body:
        return ""  # unanchored: a name at any depth
    body = body.lstrip("/")
    found = _GLOBBY.search(body)
    if found is not None:
        return body[: found.start()].rpartition("/")[0]
    return body if text.endswith("/") else body.rpartition("/")[0]


def _class(text: str, start: int) -> tuple[str, int] | None:
    """The regex of the ``[...]`` class opening at ``start`` and the index after it;
    None when it is not closed (then ``[`` is a literal, as git reads it)."""
    i = start + 1
    if i < len(text) and text[i] in "!^":
        i += 1
    if i < len(text) and text[i] == "]":
        i += 1
    end = text.find("]", i)
    if end < 0:
        return None
    body = text[start + 1 : end]
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    escaped = "".join("\\" + c if c in "\\^[]" else c for c in body)
    return (f"[^/{escaped}]" if negate else f"(?![/])[{escaped}]"), end + 1


def _component_regex(component: str) -> str:
    out = []
    i = 0
    while i < len(component):
        c = component[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            found = _class(component, i)
            if found is not None:
                out.append(found[0])
                i = found[1]
                continue
            out.append(re.escape(c))
        elif c == "\\" and i + 1 < len(component):
            i += 1
            out.append(re.escape(component[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def compile_glob(text: str) -> PathGlob:
    """The matcher of one `paths` glob (see the module's docstring)."""
    return PathGlob(text)


def _compile(text: str) -> re.Pattern[str]:
    folder_only = text.endswith("/")
    body = text.rstrip("/")
    anchored = "/" in body
    body = body.lstrip("/")
    parts = body.split("/") if body else []
    if not anchored:
        parts = ["**", *parts]
    pieces: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            pieces.append(".*" if last else "(?:.*/)?")
        else:
            pieces.append(_component_regex(part) + ("" if last else "/"))
    tail = "/.*" if folder_only else "(?:/.*)?"
    return re.compile("".join(pieces) + tail, re.DOTALL)


def never_matches(text: str) -> str | None:
    """Why the glob can match no path git reports, or None.

    Git names files by their path from the top of the repository: never with an empty,
    ``.`` or ``..`` component, never inside ``.git``; a class that admits no character
    (``[!/]`` aside, ``[]`` in git's reading is not closed) makes the glob empty too."""
    body = text.strip("/")
    if not body:
        return "it names no file (empty or only '/')"
    if "//" not in body and "/." not in "/" + body and "[" not in text:
        return None  # no empty component, none starting with '.', no class
    parts = body.split("/")
    for part in parts:
        if part == "":
            return "it has an empty path component ('//'); git never names a file that way"
        if part in (".", ".."):
            return (
                f"it has a {part!r} component; `paths` are relative to the repository root "
                "and git names files without '.' or '..'"
            )
        if part == ".git":
            return "it points inside .git, which git never reports as a changed file"
    if "[" in text:
        try:
            _compile(text)
        except re.error as exc:  # a class such as [z-a]
            return f"it is not a valid glob ({exc})"
    return None


def refused(
    texts: Sequence[str], locs: Sequence[Loc], why: Callable[[str], str | None]
) -> Iterator[tuple[str, Loc, str]]:
    """Each glob of ``texts`` (written at ``locs``, one each) that ``why`` refuses: the
    glob, where it is written and the reason (``never_matches`` for `paths`, the audit's
    own rule for ``audit.ignore``)."""
    for text, loc in zip(texts, locs, strict=True):
        reason = why(text)
        if reason:
            yield text, loc, reason


class Index(Generic[K]):
    """Globs, each with the key it stands for (a producer, a consumer), filed by the
    literal folder they start with."""

    def __init__(self, entries: Iterable[tuple[K, str]]) -> None:
        self._by_folder: dict[str, list[tuple[K, str]]] = {}
        self._compiled: dict[str, PathGlob] = {}  # made when a path of its folder is tried
        for key, text in entries:
            self._by_folder.setdefault(folder_of(text), []).append((key, text))

    def matches(self, path: str) -> list[tuple[K, str]]:
        """Every (key, glob text) whose glob covers ``path``, in the order declared
        within each folder, folders from the top."""
        out: list[tuple[K, str]] = []
        folders = [""]
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            folders.append("/".join(parts[:i]))
        for folder in folders:
            for key, text in self._by_folder.get(folder, ()):
                glob = self._compiled.get(text)
                if glob is None:
                    glob = self._compiled[text] = PathGlob(text)
                try:
                    hit = glob.matches(path)
                except re.error:  # never_matches reports it
                    continue
                if hit:
                    out.append((key, glob.text))
        return out


def aliases(
    path: str, links: Sequence[tuple[str, str]], *, depth: int = 8
) -> list[tuple[str, str]]:
    """The other names ``path`` has through symbolic links inside the repository: each
    (alias, link) where ``link`` points at ``path`` or at a folder above it. ``links`` are
    (link path, resolved target path) pairs; links to links are followed ``depth`` deep."""
    return Links(links, depth=depth).aliases(path)


class Links:
    """``aliases`` for many paths over many links: the links filed by their target, so that
    a path is tried only against the links that point at it or at a folder above it."""

    def __init__(self, links: Sequence[tuple[str, str]], *, depth: int = 8) -> None:
        self.depth = depth
        self._by_target: dict[str, list[tuple[int, str, str]]] = {}
        for position, (link, target) in enumerate(links):
            self._by_target.setdefault(target, []).append((position, link, target))

    def _pointing_at(self, name: str) -> list[tuple[int, str, str]]:
        if not self._by_target:
            return []
        found: list[tuple[int, str, str]] = []
        at = len(name)
        while at > 0:
            found += self._by_target.get(name[:at], ())
            at = name.rfind("/", 0, at)
        return sorted(found) if len(found) > 1 else found

    def aliases(self, path: str) -> list[tuple[str, str]]:
        """The other names ``path`` has through the links (``aliases``)."""
        found: list[tuple[str, str]] = []
        seen = {path}
        frontier = [path]
        for _ in range(self.depth):
            nxt = []
            for name in frontier:
                for _position, link, target in self._pointing_at(name):
                    alias = link + name[len(target) :]
                    if alias not in seen:
                        seen.add(alias)
                        found.append((alias, link))
                        nxt.append(alias)
            if not nxt:
                break
            frontier = nxt
        return found


def link_target(link: str, target: str) -> str | None:
    """The repository path a symbolic link at ``link`` whose text is ``target`` points at;
    None when it leads outside the repository (absolute, or too many ``..``)."""
    if target.startswith("/") or not target:
        return None
    parts = link.split("/")[:-1]
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) if parts else None
