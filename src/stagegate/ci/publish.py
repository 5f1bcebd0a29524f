"""What a release step hands to its index or release page, and how a job moves files around.

Each reader turns one step into the path globs it reads (relative to the workspace) or
the ``mv``/``cp`` it does; paths are compared segment by segment (``glob_meets``), each
segment an fnmatch glob, ``**`` any number of segments.
"""

from __future__ import annotations

import functools
import itertools
import posixpath
import re
import shlex
from collections.abc import Callable, Iterator, Sequence

from stagegate.records import record

GLOB_CHARS = frozenset("*?[")


@record(kw_only=True)
class Command:
    """A publish command found in a ``run:`` script: what it is and the files it reads."""

    tool: str  # "gh release upload", "twine upload", "maturin upload"
    reads: tuple[str, ...]
    lost: bool = False
    """It runs after a ``cd`` stagegate does not follow: which files it reads is not known."""


@record(kw_only=True)
class Outside:
    """Files a script fetches from outside the run (``curl``, ``wget``, ``gh release
    download``): what it runs, and where they land (a path glob)."""

    what: str
    path: str


@record(kw_only=True)
class Lookup:
    """A script looks up the runs of a workflow (``gh run list --workflow X``): the run
    id it computes is of a run of X (a workflow file or its ``name:``)."""

    workflow: str


@record(kw_only=True)
class Move:
    """``mv``/``cp`` of files in a ``run:`` script: the globs moved and where to."""

    copy: bool
    sources: tuple[str, ...]
    dest: str
    flat: bool = False
    """``find ... -exec mv {} DEST``: each file lands in DEST itself, whatever its folder."""
    remove: bool = False
    """``rm SRC...``: the files under the sources are gone."""
    unknown: bool = False
    """A move whose sources or destination cannot be worked out: where files are after
    it is not known."""


# --------------------------------------------------------------------------- paths


@functools.lru_cache(maxsize=4_096)
def norm(path: str, base: str = ".") -> str:
    """A workspace-relative path: ``base`` joined, ``./`` and trailing ``/`` gone (once
    per path and base: a step's folders are the same in every row it is read in)."""
    path = path.strip()
    if path in ("$GITHUB_WORKSPACE", "${GITHUB_WORKSPACE}", "${{ github.workspace }}"):
        path, base = ".", "."
    if path.startswith(("$GITHUB_WORKSPACE/", "${GITHUB_WORKSPACE}/", "${{ github.workspace }}/")):
        path = path.split("/", 1)[1]
        base = "."
    joined = posixpath.normpath(posixpath.join(base or ".", path or "."))
    return "." if joined in ("", ".") else joined


def segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s not in ("", ".")]


def _tokens(glob: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "[":
            end = glob.find("]", i + 2)
            if end != -1:
                out.append(glob[i : end + 1])
                i = end + 1
                continue
        out.append(c)
        i += 1
    return out


def _chars(token: str) -> set[str] | None:
    """The characters a token may be (None: any; ``*`` handled apart)."""
    if token == "?":
        return None
    if len(token) > 1 and token.startswith("["):
        body = token[1:-1]
        negate = body.startswith(("!", "^"))
        body = body[1:] if negate else body
        chars: set[str] = set()
        i = 0
        while i < len(body):
            if i + 2 < len(body) and body[i + 1] == "-":
                chars |= {chr(c) for c in range(ord(body[i]), ord(body[i + 2]) + 1)}
                i += 3
            else:
                chars.add(body[i])
                i += 1
        if negate:
            return {chr(c) for c in range(32, 127)} - chars
        return chars
    return {token}


def _both(a: str, b: str) -> bool:
    ca, cb = _chars(a), _chars(b)
    if ca is None or cb is None:
        return True
    return bool(ca & cb)


def _meets(a: Sequence[str], b: Sequence[str], star: str, one: Callable[[str, str], bool]) -> bool:
    """Whether two token sequences, ``star`` standing for any run of tokens and ``one``
    saying whether two other tokens can be the same, match a common sequence."""
    return _aligned(a, b, star, one, either=True)


def _aligned(
    a: Sequence[str], b: Sequence[str], star: str, one: Callable[[str, str], bool], *, either: bool
) -> bool:
    """Whether ``a`` and ``b`` align token by token, a ``star`` of ``a`` taking any run
    of ``b`` and (``either``) a ``star`` of ``b`` any run of ``a``; without ``either``
    a ``star`` of ``b`` is taken only by one of ``a``."""
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(a) and j == len(b):
            return True
        if i < len(a) and a[i] == star:
            todo.append((i + 1, j))
            if j < len(b):
                todo.append((i, j + 1))
        elif either and j < len(b) and b[j] == star:
            todo.append((i, j + 1))
            if i < len(a):
                todo.append((i + 1, j))
        elif i < len(a) and j < len(b) and b[j] != star and one(a[i], b[j]):
            todo.append((i + 1, j + 1))
    return False


@functools.lru_cache(maxsize=4096)
def segment_meets(a: str, b: str) -> bool:
    """Whether two fnmatch globs (no ``/``) match a common string. A function of the two
    texts alone, answered once per pair: following a release asks it of the same few
    globs for every landed file and move (a third of a reading of cuda-python's tree)."""
    return _meets(_tokens(a), _tokens(b), "*", _both)


@functools.lru_cache(maxsize=4096)
def glob_meets(a: str, b: str) -> bool:
    """Whether two path globs (``**`` any number of segments) match a common path
    (answered once per pair, as ``segment_meets``)."""
    return _meets(segments(a), segments(b), "**", segment_meets)


def _covers(a: Sequence[str], b: Sequence[str], star: str, one: Callable[[str, str], bool]) -> bool:
    """Whether ``a`` surely matches every sequence ``b`` matches: an alignment in which
    each token of ``b`` is covered by one of ``a`` (``b``'s ``star`` only by a ``star``
    of ``a``, which covers any run). No alignment: not known to cover (answered no)."""
    return _aligned(a, b, star, one, either=False)


def _within(a: str, b: str) -> bool:
    ca, cb = _chars(a), _chars(b)
    return ca is None or (cb is not None and cb <= ca)


@functools.lru_cache(maxsize=4096)
def glob_covers(a: str, b: str) -> bool:
    """Whether the path glob ``a`` surely matches every path ``b`` matches (``rm a`` takes
    all the files ``b`` stands for)."""
    return _covers(
        segments(a), segments(b), "**", lambda x, y: _covers(_tokens(x), _tokens(y), "*", _within)
    )


def artifact_paths(path_text: str) -> tuple[str, ...]:
    """The paths an upload's ``path:`` takes, from the workspace (its exclusions left out)."""
    return tuple(
        line.strip()
        for line in path_text.replace(",", "\n").splitlines()
        if line.strip() and not line.strip().startswith("!")
    )


def artifact_files(path_text: str) -> tuple[str, ...]:
    """The files an upload's ``path:`` puts in its artifact, as globs from the artifact's
    root: one path is taken relative to its non-glob prefix (``wheelhouse/*.whl`` ->
    ``*.whl``; a folder ``dist/`` -> its files ``*``), several relative to their common
    folder."""
    lines = artifact_paths(path_text)
    split: list[tuple[list[str], list[str]]] = []
    for line in lines:
        parts = segments(norm(line))
        cut = next((i for i, p in enumerate(parts) if GLOB_CHARS & set(p)), len(parts))
        prefix, rest = parts[:cut], parts[cut:]
        if not rest:
            if prefix and re.search(r"\.(whl|gz|zip|tar|bz2|xz|exe|dmg|deb|rpm|msi)$", prefix[-1]):
                prefix, rest = prefix[:-1], prefix[-1:]
            else:
                rest = ["*"]
        split.append((prefix, rest))
    if not split:
        return ()
    common = split[0][0]
    for prefix, _rest in split[1:]:
        n = 0
        while n < min(len(common), len(prefix)) and common[n] == prefix[n]:
            n += 1
        common = common[:n]
    return tuple(sorted({"/".join([*prefix[len(common) :], *rest]) for prefix, rest in split}))


# --------------------------------------------------------------------------- run: scripts

_TWINE_VALUED = frozenset(
    {
        "-r",
        "--repository",
        "--repository-url",
        "-u",
        "--username",
        "-p",
        "--password",
        "-c",
        "--comment",
        "--config-file",
        "-i",
        "--identity",
        "--sign-with",
        "--cert",
        "--client-cert",
        "--attestations-dir",
    }
)
_MATURIN_VALUED = frozenset(
    {"-r", "--repository", "--repository-url", "-u", "--username", "-p", "--password"}
)
_UV_VALUED = frozenset(
    {
        "--publish-url",
        "--index",
        "-u",
        "--username",
        "-p",
        "--password",
        "-t",
        "--token",
        "--trusted-publishing",
        "--keyring-provider",
        "--check-url",
        "--directory",
        "--project",
        "--config-file",
        "--cache-dir",
        "--python",
        "--color",
        "--allow-insecure-host",
    }
)
_POETRY_VALUED = frozenset(
    {"-r", "--repository", "-u", "--username", "-p", "--password", "--cert", "--client-cert",
     "--dist-dir", "-C", "--directory", "-P", "--project"}
)  # fmt: skip
_HATCH_VALUED = frozenset(
    {"-r", "--repo", "-u", "--user", "-a", "--auth", "--ca-cert", "--client-cert",
     "--client-key", "-p", "--publisher", "-o", "--option"}
)  # fmt: skip
_PDM_VALUED = frozenset(
    {"-r", "--repository", "-u", "--username", "-P", "--password", "-S", "--sign",
     "-i", "--identity", "-c", "--comment", "--ca-certs", "--dest", "-p", "--project"}
)  # fmt: skip
_GH_CREATE_VALUED = frozenset(
    {"-R", "--repo", "-t", "--title", "-n", "--notes", "-F", "--notes-file", "--target",
     "--notes-start-tag", "--discussion-category", "--latest", "--fail-on-no-commits"}
)  # fmt: skip
_CURL_OUT = frozenset({"-o", "--output"})
_CURL_VALUED = frozenset(
    {"-H", "--header", "-u", "--user", "-d", "--data", "-X", "--request", "-A", "--user-agent",
     "-e", "--referer", "--retry", "--max-time", "-m", "--connect-timeout", "-w",
     "--write-out", "--cacert", "--cert", "--key", "-b", "--cookie", "-c", "--cookie-jar",
     "--retry-delay", "--retry-max-time", "-T", "--upload-file", "-F", "--form"}
)  # fmt: skip
_WGET_VALUED = frozenset(
    {"--header", "-t", "--tries", "-T", "--timeout", "--user", "--password", "-U",
     "--user-agent", "-a", "--append-output", "-o", "--output-file", "-i", "--input-file"}
)  # fmt: skip


def _option(words: Sequence[str], names: frozenset[str]) -> str | None:
    """The value of the last option in ``names`` (``-o X``, ``--out=X``, ``-oX``)."""
    found: str | None = None
    shorts = {n[1] for n in names if len(n) == 2}
    for i, word in enumerate(words):
        if word in names and i + 1 < len(words):
            found = words[i + 1]
        elif (
            len(word) > 2
            and word[0] == "-"
            and word[1] != "-"
            and word[-1] in shorts
            and word[1:].isalpha()
            and i + 1 < len(words)
        ):  # combined short flags ending in the option: curl -sSLo FILE
            found = words[i + 1]
            continue
        for name in names:
            if name.startswith("--") and word.startswith(name + "="):
                found = word[len(name) + 1 :]
            elif (
                len(name) == 2
                and word.startswith(name)
                and len(word) > 2
                and not word.startswith("--")
            ):
                found = word[2:]
    return found


def _publisher(words: list[str], base: str) -> Command | None:
    """The publish command ``words`` run (None: not one stagegate reads)."""
    if words[:3] == ["gh", "release", "upload"]:
        files = _positional(words[3:], _GH_VALUED)[1:]
        return Command(
            tool="gh release upload", reads=tuple(norm(f.split("#", 1)[0], base) for f in files)
        )
    if words[:3] == ["gh", "release", "create"]:
        files = _positional(words[3:], _GH_CREATE_VALUED)[1:]
        return Command(
            tool="gh release create", reads=tuple(norm(f.split("#", 1)[0], base) for f in files)
        )
    if words[:2] == ["twine", "upload"] or words[1:4] == ["-m", "twine", "upload"]:
        rest = words[2:] if words[0] == "twine" else words[4:]
        reads = tuple(norm(f, base) for f in _positional(rest, _TWINE_VALUED))
        return Command(tool="twine upload", reads=reads or (norm("dist/*", base),))
    if words[:2] == ["maturin", "upload"]:
        reads = tuple(norm(f, base) for f in _positional(words[2:], _MATURIN_VALUED))
        return Command(tool="maturin upload", reads=reads)
    if words[:2] == ["uv", "publish"]:
        folder = _option(words[2:], frozenset({"--directory", "--project"})) or "."
        files = _positional(words[2:], _UV_VALUED)
        at = norm(folder, base)
        return Command(
            tool="uv publish", reads=tuple(norm(f, at) for f in files) or (norm("dist/*", at),)
        )
    if words[:2] == ["poetry", "publish"]:
        # --build builds into the dist folder without emptying it, then publishes what is
        # there: the files it builds and any it finds
        tool = "poetry publish --build" if "--build" in words else "poetry publish"
        folder = _option(words[2:], frozenset({"-C", "--directory", "-P", "--project"})) or "."
        dist = _option(words[2:], frozenset({"--dist-dir"})) or "dist"
        return Command(tool=tool, reads=(norm(f"{dist}/*", norm(folder, base)),))
    if words[:2] == ["hatch", "publish"]:
        # each argument is a file, or a folder whose entries it publishes (default dist)
        files = _positional(words[2:], _HATCH_VALUED) or ["dist"]
        return Command(
            tool="hatch publish",
            reads=tuple(
                r for f in files for r in (norm(f, base), norm(f"{f.rstrip('/')}/*", base))
            ),
        )
    if words[:2] == ["pdm", "publish"]:
        if "--no-build" not in words:
            return Command(tool="pdm publish", reads=())  # it builds what it publishes
        folder = _option(words[2:], frozenset({"-p", "--project"})) or "."
        dest = _option(words[2:], frozenset({"--dest"})) or "dist"
        return Command(
            tool="pdm publish --no-build", reads=(norm(f"{dest}/*", norm(folder, base)),)
        )
    if words[:2] == ["flit", "publish"]:
        return Command(tool="flit publish", reads=())  # it builds what it publishes
    if words[:2] == ["cargo", "publish"]:
        if "--dry-run" in words or "-n" in words:
            return None  # it packages and verifies the crate, and publishes nothing
        return Command(tool="cargo publish", reads=())  # the crate it packages from source
    return None


def _redirect(words: Sequence[str]) -> str | None:
    """Where a command's standard output goes: the file of its last ``>``/``>>``."""
    found: str | None = None
    for i, word in enumerate(words):
        if word in (">", ">>", ">|") and i + 1 < len(words):
            found = words[i + 1]
        elif word.startswith(">") and word.lstrip(">|"):
            found = word.lstrip(">|")
    return found


def _outside(words: list[str], base: str) -> Outside | None:
    """Commands that fetch files from outside the run into the workspace: ``curl``,
    ``wget``, ``gh release download``, ``pip download``/``pip wheel``, copies from a bucket
    or another host (``aws s3``, ``gsutil``, ``scp``, ``rsync``) and ``git clone``."""
    if words[:1] == ["curl"]:
        out = _option(words[1:], _CURL_OUT)
        folder = _option(words[1:], frozenset({"--output-dir"})) or "."
        remote = any(
            w in ("-O", "--remote-name", "--remote-name-all") or re.fullmatch(r"-[A-Za-z]*O", w)
            for w in words[1:]
        )  # `curl -sSLO URL`: the file named by the URL, in the folder it runs in
        if out in (None, "-") and not remote:
            redirected = _redirect(words)  # `curl URL > dist/x.whl`
            return None if redirected is None else Outside(what="curl", path=norm(redirected, base))
        return Outside(what="curl", path=norm(out or "*", norm(folder, base)))
    if words[:1] == ["wget"]:
        out = _option(words[1:], frozenset({"-O", "--output-document"}))
        folder = _option(words[1:], frozenset({"-P", "--directory-prefix"})) or "."
        if out == "-" or any(re.fullmatch(r"-[A-Za-z]*O-", w) for w in words[1:]):
            redirected = _redirect(words)  # `wget -qO- URL > dist/x.whl`
            return None if redirected is None else Outside(what="wget", path=norm(redirected, base))
        return Outside(what="wget", path=norm(out or "*", norm(folder, base)))
    if words[:3] == ["gh", "release", "download"]:
        folder = _option(words[3:], frozenset({"-D", "--dir"})) or "."
        return Outside(what="gh release download", path=norm("*", norm(folder, base)))
    return _fetched(words, base)


def _written(words: list[str], base: str) -> Outside | None:
    """A file a command writes itself: its output redirected (``> PATH``), ``tee PATH``.
    Not a device (``/dev/null``) nor a file the runner names (``$GITHUB_OUTPUT``)."""
    if words[:1] == ["tee"]:
        target = next((w for w in words[1:] if not w.startswith("-")), None)
    else:
        target = _redirect(words)
    if not target or not words or target.startswith(("/dev/", "$", "&")):
        return None
    return Outside(what=f"{words[0]} >" if words[0] != "tee" else "tee", path=norm(target, base))


_PIP = (["pip"], ["pip3"], ["python", "-m", "pip"], ["python3", "-m", "pip"])
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[A-Za-z0-9_.@-]{2,}:)")
"""A source on another machine: ``s3://...``, ``gs://...``, ``https://...``, ``host:path``."""


def _fetched(words: list[str], base: str) -> Outside | None:
    """``pip download``/``pip wheel``, ``aws s3 cp|sync``, ``gsutil cp|rsync``, ``scp``,
    ``rsync`` and ``git clone`` from another machine into the workspace."""
    for pip in _PIP:
        if words[: len(pip)] == pip and words[len(pip) : len(pip) + 1] in (["download"], ["wheel"]):
            rest = words[len(pip) + 1 :]
            folder = _option(rest, frozenset({"-d", "--dest", "-w", "--wheel-dir"})) or "."
            return Outside(what=f"pip {words[len(pip)]}", path=norm("*", norm(folder, base)))
    bare = [w for w in words if not w.startswith("-")]  # `gsutil -m cp`, `rsync -a`
    if bare[:3] in (["aws", "s3", "cp"], ["aws", "s3", "sync"]):
        what, paths = " ".join(bare[:3]), bare[3:]
    elif bare[:2] in (["gsutil", "cp"], ["gsutil", "rsync"]):
        what, paths = " ".join(bare[:2]), bare[2:]
    elif bare[:1] in (["scp"], ["rsync"]):
        what, paths = bare[0], bare[1:]
    elif bare[:2] == ["git", "clone"]:
        what, paths = "git clone", bare[2:4]
        if len(paths) == 1:  # into a folder named after the repository
            paths.append(paths[0].rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"))
    else:
        return None
    if len(paths) < 2 or not any(_REMOTE.match(p) for p in paths[:-1]) or _REMOTE.match(paths[-1]):
        return None  # an upload, or a copy inside the machine
    return Outside(what=what, path=norm(f"{paths[-1].rstrip('/')}/**", base))


_ASSIGN = re.compile(
    r"""(?m)^\s*(?:local\s+|export\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=(["']?)(.*?)\2\s*(?:;|$)"""
)
_DEFAULT = re.compile(r"^\$\{[A-Za-z0-9_@*#]+:?-([^}$]*)\}$")


def _words_defaults(script: str) -> dict[str, set[str]]:
    """The literal values the script's assignments give each variable: ``V=X``,
    ``V="${1:-X}"`` (its default)."""
    out: dict[str, set[str]] = {}
    for name, _quote, value in _ASSIGN.findall(script):
        found = _DEFAULT.match(value)
        if found:
            out.setdefault(name, set()).add(found.group(1))
        elif value and not any(c in value for c in "$`(){}"):
            out.setdefault(name, set()).add(value)
    return out


_RUN_LIST = re.compile(r"\bgh\s+run\s+list\b(?P<rest>[^\n|;)`]*)")


def lookups(script: str) -> list[Lookup]:
    """Every ``gh run list ... --workflow X`` of a script, wherever it is written (in a
    command substitution, inside quotes): the workflows whose runs it looks up."""
    joined = re.sub(r"\\\n", " ", script)
    out: list[Lookup] = []
    for found in _RUN_LIST.finditer(joined):
        try:
            words = shlex.split(found.group("rest").replace('"', " ").replace("'", " "))
        except ValueError:
            continue
        one = _lookup(["gh", "run", "list", *words], script)
        if one is not None and one not in out:
            out.append(one)
    return out


def _lookup(words: list[str], script: str) -> Lookup | None:
    """``gh run list ... --workflow X`` (``-w X``) and ``gh api .../workflows/X/runs``."""
    at = next(
        (
            i
            for i, w in enumerate(words)
            if (w == "gh" or w.endswith("$(gh")) and words[i + 1 : i + 3] == ["run", "list"]
        ),
        None,
    )  # also inside a command substitution: RUN_ID=$(gh run list ...)
    if at is not None:
        value = _option(words[at + 3 :], frozenset({"-w", "--workflow"}))
    elif words[:2] == ["gh", "api"] and any("/actions/workflows/" in w for w in words):
        path = next(w for w in words if "/actions/workflows/" in w)
        value = path.split("/actions/workflows/", 1)[1].split("/", 1)[0]
    else:
        return None
    if value is None:
        return None
    var = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", value)
    if var:
        values = _words_defaults(script).get(var.group(1), set())
        if len(values) != 1:
            return None
        value = next(iter(values))
    if not value or any(c in value for c in "$`"):
        return None
    return Lookup(workflow=value)


_GH_VALUED = frozenset({"-R", "--repo"})


def _positional(words: Sequence[str], valued: frozenset[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in valued:
            skip = True
            continue
        if word.startswith("-"):
            continue
        out.append(word)
    return out


_HEREDOC = re.compile(r"(?<!<)<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
"""``<<WORD``, ``<<-WORD``, ``<<'WORD'``: the lines up to WORD are the command's input."""


def commands(script: str) -> list[list[str]]:
    """The simple commands of a script, as words (quotes removed; ``&&``, ``;``, ``|``
    and line ends split them; a quoted string that spans lines is one word, as in bash:
    a ``jq '`` program whose next line is ``.releases`` runs no command ``.releases``).
    Unparseable lines, and the text of a here-document (up to its delimiter), are
    skipped. Split once per text (a step is read in every context it runs in)."""
    return [list(words) for words in _commands(script)]


_QUOTED_LINES = 200
"""How many lines a quoted string that spans lines is followed over."""


def _open_quote(text: str) -> bool:
    """Whether ``text`` ends inside a quoted string (as ``shlex`` reads it)."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        for _word in lexer:
            pass
    except ValueError as e:
        return str(e) == "No closing quotation"
    return False


def _lines(script: str) -> Iterator[str]:
    """The lines of a script, the lines a quoted string spans joined into one (where the
    quote never closes, the line alone: it is skipped as unparseable)."""
    lines = script.splitlines()
    i = 0
    while i < len(lines):
        line, end = lines[i], i + 1
        if ("'" in line or '"' in line) and _open_quote(line):
            last = min(len(lines), i + _QUOTED_LINES)
            closed = (j for j in range(i + 2, last + 1) if not _open_quote("\n".join(lines[i:j])))
            j = next(closed, None)
            if j is not None:
                line, end = "\n".join(lines[i:j]), j
        yield line
        i = end


@functools.lru_cache(maxsize=1024)
def _commands(script: str) -> tuple[tuple[str, ...], ...]:
    joined = re.sub(r"\\\n", " ", script)
    out: list[list[str]] = []
    until: tuple[str, bool] | None = None  # the delimiter, and whether tabs may lead it
    for line in _lines(joined):
        if until is not None:
            if (line.lstrip("\t") if until[1] else line) == until[0]:
                until = None
            continue
        heredoc = _HEREDOC.search(line)
        if heredoc is not None:
            until = (heredoc.group(3), heredoc.group(1) == "-")
        words = _line_words(line)
        if words is None:
            continue
        current: list[str] = []
        for word in words:
            if word and set(word) <= set(";&|"):
                if current:
                    out.append(current)
                current = []
            else:
                current.append(word)
        if current:
            out.append(current)
    return tuple(tuple(words) for words in out)


@functools.lru_cache(maxsize=8192)
def _line_words(line: str) -> tuple[str, ...] | None:
    """One line's words as ``shlex`` splits them (None: it cannot), once per line: the
    lines of a script evaluated in each matrix row are mostly the same."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return tuple(lexer)
    except ValueError:
        return None


def read_script(script: str, base: str) -> list[Command | Move | Outside | Lookup]:
    """The publish commands and file moves of a ``run:`` script, in order; paths joined to
    ``base`` (the step's working directory). Read once per script and base: a step is
    read in every context it runs in (matrix rows, callers), mostly with the same text."""
    return list(_read_script(script, base))


_KEYWORDS = frozenset({"if", "then", "elif", "else", "while", "until", "do", "{", "!"})
"""Words before a command on its line that do not change what it runs (``then cd x``)."""
_LOST = "\0"
"""The folder a script is in after a ``cd`` stagegate does not follow."""


def _chdir(words: Sequence[str], base: str) -> str:
    """Where ``cd DIR``/``pushd DIR`` goes from ``base``; ``_LOST`` for a folder not known
    (a variable, ``cd`` alone, ``cd -``)."""
    target = words[1] if len(words) == 2 else ""
    if base == _LOST or not target or target == "-" or any(c in target for c in "$`~*?["):
        return _LOST
    return norm(target, base)


_REDIRECT = re.compile(r"\d*(?:>>?|<|&>>?)(?:&\d+|&-)?(?P<target>.*)")


def _unredirected(words: list[str]) -> list[str]:
    """The words of a command without its redirections (``> /dev/null``, ``2>&1``)."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        match = _REDIRECT.fullmatch(word)
        if match is None:
            out.append(word)
        elif not match.group("target") and not word.endswith(("&1", "&2", "&-")):
            skip = True  # `> FILE`: the next word is its target
    return out


@functools.lru_cache(maxsize=4096)
def _read_script(script: str, base: str) -> tuple[Command | Move | Outside | Lookup, ...]:
    found: list[Command | Move | Outside | Lookup] = []
    found += lookups(script)
    outer: list[tuple[str, tuple[str, ...] | None]] = []  # where each open `( ... )` was entered
    stack: tuple[str, ...] | None = ()  # the folders pushd left, latest last (None: not known)
    for words in commands(script):
        if _lookup(words, script) is not None:
            continue
        while words and ("=" in words[0] and not words[0].startswith("-")):
            words = words[1:]  # VAR=value prefixes
        while words and (words[0] in _KEYWORDS or words[0].startswith("(")):
            if words[0].startswith("("):
                outer.append((base, stack))
                words = [words[0][1:], *words[1:]] if words[0] != "(" else words[1:]
            else:
                words = words[1:]
        closes = sum(w.endswith(")") and "$(" not in w for w in words)
        words = [w[:-1] if w.endswith(")") and "$(" not in w else w for w in words]
        if words[:1] == ["sudo"]:
            words = words[1:]
        if words[:2] in (["uvx", "twine"], ["pipx", "run"]) and len(words) > 2:
            words = words[1:] if words[0] == "uvx" else words[2:]
        if words[:2] == ["uv", "run"] and len(words) > 2 and words[2] in ("twine", "maturin"):
            words = words[2:]
        if words[:1] in (["cd"], ["pushd"], ["popd"]):
            words = _unredirected(words)
        if words[:1] == ["pushd"]:
            stack = (*stack, base) if stack is not None and len(words) == 2 else None
            base = _chdir(words, base)
        elif words[:1] == ["popd"]:
            if words != ["popd"] or stack is None:
                base, stack = _LOST, None
            elif stack:  # bash's popd with nothing pushed fails, staying where it is
                base, stack = stack[-1], stack[:-1]
        elif words[:1] == ["cd"]:
            base = _chdir(words, base)
        else:
            found_one = _found(words, base)
            if found_one is not None:
                found.append(found_one)
        for _ in range(min(closes, len(outer))):
            base, stack = outer.pop()
    return tuple(found)


def _found(words: list[str], base: str) -> Command | Move | Outside | None:
    """What the command ``words`` run in ``base`` does to the files (``_LOST``: after a
    ``cd`` not followed: a publish command reads files not known, a download lands
    anywhere, a move is not known). A word with ``{a,b}`` is the words the shell's brace
    expansion makes of it (one with a space was quoted: the shell expands nothing in it)."""
    words = [w for word in words for w in ([word] if " " in word else expand_braces(word))]
    if base != _LOST:
        move = move_of(words, base)
        if move is not None and any("$" in w or "`" in w for w in words):
            return Move(copy=move.copy, sources=(), dest=".", unknown=True)  # "${x[@]}", $(ls)
        return (
            _publisher(words, base) or move or _outside(words, base) or _written(words, base)
        )  # fmt: skip
    command = _publisher(words, ".")
    if command is not None:
        return Command(tool=command.tool, reads=command.reads, lost=True)
    fetched = _outside(words, ".")
    if fetched is not None:
        return Outside(what=fetched.what, path="**")
    move = move_of(words, ".")
    return Move(copy=move.copy, sources=(), dest=".", unknown=True) if move else None


def move_of(words: Sequence[str], base: str = ".") -> Move | None:
    """``mv``/``cp [-t DEST] SRC... DEST``, ``rm SRC...`` and ``find DIR... [-maxdepth 1]
    [-name G] -exec mv|cp|rm {} DEST \\;`` or ``-delete``: what moves where (None: no
    such command, or no move)."""
    if words[:1] == ["find"] and ("-exec" in words or "-delete" in words):
        at = words.index("-exec") if "-exec" in words else words.index("-delete")
        todo = [w for w in words[at + 1 :] if w not in (";", "+")] if "-exec" in words else []
        dirs = [w for w in words[1:at] if not w.startswith(("-", "(", ")", "!"))]
        opts = words[1:at]
        names = [opts[i + 1] for i, w in enumerate(opts[:-1]) if w in ("-name", "-iname")]
        dirs = [d for d in dirs if d not in names and not d.isdigit() and d not in ("f", "d")]
        remove = "-delete" in words or (todo[:1] == ["rm"] and "{}" in todo)
        if remove and (set(opts) - _FIND_PLAIN - set(names) - set(dirs) or len(names) > 1):
            return Move(copy=False, sources=(), dest=".", unknown=True)  # which files: not known
        if not remove and (todo[:1] not in (["mv"], ["cp"]) or "{}" not in todo):
            return None
        if len(names) > 1 or not dirs:
            return None
        deep = ("-maxdepth", "1") not in set(itertools.pairwise(opts))
        glob = names[0] if names else "*"
        if "-iname" in opts:
            glob = _any_case(glob)
        found = tuple(norm(f"{d}/{'**/' if deep else ''}{glob}", base) for d in dirs)
        if remove:
            return Move(copy=False, sources=found, dest=".", remove=True)
        move = move_of(todo, base)
        if move is None:
            return None
        return Move(copy=move.copy, sources=found, dest=move.dest, flat=True)
    if words[:1] == ["rm"]:
        paths = [w for w in words[1:] if not w.startswith("-")]
        if not paths:
            return None
        return Move(copy=False, sources=tuple(norm(p, base) for p in paths), dest=".", remove=True)
    if words[:1] not in (["mv"], ["cp"]) or len(words) <= 2:
        return None
    given = list(words[1:])
    dest: str | None = None
    for flag in ("-t", "--target-directory"):
        if flag in given[:-1]:
            at = given.index(flag)
            dest = given[at + 1]
            del given[at : at + 2]
    paths = [w for w in given if not w.startswith("-")]
    if dest is None and len(paths) >= 2:
        dest = paths.pop()
    if dest is None or not paths:
        return None
    return Move(
        copy=words[0] == "cp", sources=tuple(norm(p, base) for p in paths), dest=norm(dest, base)
    )


def _any_case(glob: str) -> str:
    """``find -iname``'s pattern as a glob of either case: each letter outside a bracket
    expression as ``[pP]`` (``PyNaCl*`` -> ``[pP][yY][nN][aA][cC][lL]*``)."""
    out: list[str] = []
    depth = 0
    for char in glob:
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
        out.append(f"[{char.lower()}{char.upper()}]" if char.isalpha() and not depth else char)
    return "".join(out)


_FIND_PLAIN = frozenset({"-name", "-iname", "-type", "f", "d", "-maxdepth", "-mindepth", "1"})
"""The words of a ``find`` whose removal stagegate reads: any other test (``!``, ``-not``,
``-newer``, ``-size``, ``-path``) removes some of the files, which are not known."""


def split_files(text: str) -> list[str]:
    """softprops/action-gh-release ``files``: lines, each split on commas outside braces."""
    out: list[str] = []
    for line in text.splitlines():
        depth, start = 0, 0
        for i, c in enumerate(line):
            if c == "{":
                depth += 1
            elif c == "}":
                depth = max(depth - 1, 0)
            elif c == "," and depth == 0:
                out.append(line[start:i])
                start = i + 1
        out.append(line[start:])
    return [p.strip() for p in out if p.strip()]


def expand_braces(glob: str) -> list[str]:
    """minimatch's brace expansion: ``a{b,c}`` -> ``ab``, ``ac``."""
    found = re.search(r"\{([^{}]*,[^{}]*)\}", glob)
    if not found:
        return [glob]
    out: list[str] = []
    for choice in found.group(1).split(","):
        out += expand_braces(glob[: found.start()] + choice + glob[found.end() :])
    return out


def moved(landed: str, move: Move) -> list[str]:
    """Where a landed file glob is after ``move`` (itself, and/or its new place)."""
    parts = segments(landed)
    if move.unknown:
        return [landed]
    for source in move.sources:
        if move.remove:  # a glob that takes only some of the files leaves the others
            src = segments(source)
            if any(
                glob_covers("/".join(src), "/".join(parts[:k])) for k in range(1, len(parts) + 1)
            ):
                return []
            continue
        if move.flat and glob_meets(source, landed):
            last, wanted = parts[-1] if parts else "*", segments(source)[-1]
            whole = wanted in ("*", last)
            target = "/".join([*segments(move.dest), wanted if last == "*" else last])
            return [landed, target] if move.copy or not whole else [target]
        if move.flat:
            continue
        src = segments(source)
        for k in range(1, len(parts) + 1):
            fits = len(src) == k or "**" in src  # ``**``: any number of folders, none too
            if fits and glob_meets("/".join(src), "/".join(parts[:k])):
                target = "/".join([*segments(move.dest), *parts[k - 1 :]])
                return [landed, target] if move.copy else [target]
    return [landed]
