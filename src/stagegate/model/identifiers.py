"""Build identifiers: the names cibuildwheel gives its builds (``cp312-manylinux_x86_64``,
``cp313t-macosx_arm64``), and the same shape for maturin's (``cp38-abi3-win_amd64`` for an
abi3 wheel). Written with shell-like braces, as cibuildwheel's selectors are:
``cp3{9..13}-manylinux_{x86_64,aarch64}``.
"""

from __future__ import annotations

import re

from stagegate.errors import LocatedError

MAX_EXPANSION = 4_096
"""Most identifiers one pattern may expand to."""

SHAPE = re.compile(
    r"(?:cp|pp|gp)\d{2,3}t?(?:_\d+)?(?:-abi3)?-"
    r"(?:(?:many|musl)?linux_[a-z0-9_]+|macosx_[a-z0-9_]+|win32|win_amd64|win_arm64"
    r"|pyodide_wasm32|android_[a-z0-9_]+|ios_[a-z0-9_]+)"
)
_RANGE = re.compile(r"(-?\d+)\.\.(-?\d+)")


class TooLong(ValueError):
    """A word whose braces expand to more than ``MAX_EXPANSION`` words."""


def _close(text: str, start: int) -> tuple[int, list[str]] | None:
    """The ``}`` matching the ``{`` at ``start`` and the top-level pieces between them."""
    depth, pieces, piece_start = 0, [], start + 1
    i = start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                pieces.append(text[piece_start:i])
                return i, pieces
        elif char == "," and depth == 1:
            pieces.append(text[piece_start:i])
            piece_start = i + 1
        i += 1
    return None


def _options(pieces: list[str]) -> list[str] | None:
    if len(pieces) > 1:
        return pieces
    matched = _RANGE.fullmatch(pieces[0])
    if matched is None:
        return None  # `{x}` is literal text, as in the shell
    first, last = int(matched[1]), int(matched[2])
    if abs(last - first) >= MAX_EXPANSION:
        raise TooLong(pieces[0])
    step = 1 if last >= first else -1
    return [str(n) for n in range(first, last + step, step)]


def expand(word: str) -> list[str]:
    """The words a brace word stands for, in order (``TooLong`` past the limit)."""
    i = 0
    while i < len(word):
        if word[i] == "\\":
            i += 2
            continue
        if word[i] == "{":
            found = _close(word, i)
            if found is not None:
                end, pieces = found
                options = _options(pieces)
                if options is not None:
                    head, tail = word[:i], expand(word[end + 1 :])
                    out = [head + o + t for option in options for o in expand(option) for t in tail]
                    if len(out) > MAX_EXPANSION:
                        raise TooLong(word)
                    return out
        i += 1
    return [word]


def identifiers(pattern: str) -> list[str]:
    """The exact identifiers a declared pattern stands for; ``LocatedError`` for a pattern
    that is not a set of identifiers (a glob, a bad shape, too many)."""
    for i, char in enumerate(pattern):
        if char in "*?[]":
            raise LocatedError(
                f"{char!r}: a declared wheel is an exact identifier; braces ({{a,b}}, {{1..3}}) "
                "may list several, a glob may not", i
            )
    try:
        out = expand(pattern)
    except TooLong:
        raise LocatedError(f"expands to more than {MAX_EXPANSION} identifiers", 0) from None
    for identifier in out:
        if not SHAPE.fullmatch(identifier):
            raise LocatedError(
                f"{identifier!r} is not a build identifier (PYTHON-PLATFORM, e.g. "
                "cp312-manylinux_x86_64, or PYTHON-abi3-PLATFORM)", 0
            )
    return out
