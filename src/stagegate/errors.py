"""Every error a user can cause, each owning its exit code.

Messages name the place (``FILE:LINE:COL``), say what is wrong and what to do.
The CLI prints ``str(error)`` and exits with ``error.exit_code``; nothing below
the CLI prints or exits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from stagegate.records import record

EXIT_FAILED = 1
EXIT_INVALID = 2
EXIT_GIT = 3
EXIT_INTERNAL = 70


@record(order=True)
class Loc:
    """A place in a file: 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def shifted(self, columns: int) -> Loc:
        return Loc(self.file, self.line, self.col + columns)

    @property
    def at(self) -> str:
        """``file:line``: where a finding points a reader (the column left out)."""
        return f"{self.file}:{self.line}"


@record
class Problem:
    """One thing wrong with an input file."""

    loc: Loc
    message: str
    path: str = ""  # JSON path such as $.producers.x.when; empty when not applicable

    def __str__(self) -> str:
        where = f"{self.loc}: "
        return f"{where}{self.path}: {self.message}" if self.path else f"{where}{self.message}"


class LocatedError(ValueError):
    """Text that cannot be used (a flag expression, template, glob, regex or ``${{ }}``
    expression), located by the 0-based ``column`` where it goes wrong.

    The parsers raise it knowing only the text; the caller, which knows where the text
    stands in its file, turns it into a ``Problem`` at that column."""

    def __init__(self, message: str, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.column = column

    def __str__(self) -> str:
        return self.message


class StagegateError(Exception):
    """Base of every error a user can cause."""

    exit_code = EXIT_INVALID

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(StagegateError):
    """Bad command-line use or a file that cannot be read."""

    exit_code = EXIT_INVALID


class InvalidInput(StagegateError):
    """One or more problems in the migration's files, all reported at once."""

    exit_code = EXIT_INVALID

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(sorted(problems, key=lambda p: p.loc))
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        body = "\n".join(str(p) for p in self.problems)
        them = "it" if count == 1 else "them"
        super().__init__(f"{body}\n{count} {noun} found; fix {them} and run `stagegate validate`.")


class GitError(StagegateError):
    """Git trouble: not a repository, unknown ref, shallow history."""

    exit_code = EXIT_GIT


class Refused(StagegateError):
    """A gate refused (advance, rollback, verify-pr): exit 1 with the reasons."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str, reasons: Sequence[str] = ()) -> None:
        self.reasons = tuple(reasons)
        text = message if not reasons else message + "\n" + "\n".join(f"  - {r}" for r in reasons)
        super().__init__(text)


class TooComplex(StagegateError):
    """A glob, regex or whole migration too large to decide exactly in bounded time.

    Found while checks run, not by ``validate``: exit 2 with the declaring place, as
    for any other invalid input."""

    exit_code = EXIT_INVALID

    def __init__(self, loc: Loc, message: str) -> None:
        self.loc = loc
        super().__init__(f"{loc}: {message}")
