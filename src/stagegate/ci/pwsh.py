"""A ``run:`` that runs in PowerShell: simple assignments and ``$GITHUB_ENV`` writes read,
the rest unknown (``ci.shell.Shell`` does the POSIX shell). Its work is charged to the
reading's budget (``ci.budget``): no value grows past MAX_VALUE characters."""

from __future__ import annotations

import re

from stagegate.ci.budget import MAX_VALUE, MAX_WORK, Budget, OverBudget
from stagegate.ci.files import invalid
from stagegate.ci.scopes import Host, Scope
from stagegate.ci.shell import interpolated
from stagegate.ci.shell.effects import NAME_RE
from stagegate.ci.shell.values import size
from stagegate.ci.transfers import MAX_SCRIPT, Site
from stagegate.errors import Loc, LocatedError
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.model.ghexpr import Sym, Unknown, Value, concat

_PS_ASSIGN = re.compile(r"\$(env:)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)", re.I)
_PS_ENV_WRITE = re.compile(
    r"(?:(?:echo|Write-Output)\s+)?(.+?)\s*>>\s*\$env:GITHUB_ENV\s*$"
    r"|Add-Content\s+(?:-Path\s+)?\$env:GITHUB_ENV\s+(?:-Value\s+)?(.+)$",
    re.I,
)
_PS_VAR = re.compile(r"\$(?:\{)?(env:)?([A-Za-z_][A-Za-z0-9_]*)(?:\})?", re.I)


class PowerShell:
    """A ``run:`` that runs in PowerShell (``shell: pwsh``, or a Windows runner's
    default): simple assignments (``$x = "..."``, ``$env:X = '...'``) and writes of
    ``"K=V"`` to ``$env:GITHUB_ENV`` are read; any other write of ``$GITHUB_ENV`` and
    any ``gh run download`` are unresolved. Never read as bash."""

    def __init__(self, reader: Host, site: Site, path: DocPath, text: str, scope: Scope) -> None:
        self.reader = reader
        self.site = site
        self.path = path
        self.text = text
        self.scope = scope
        self.vars: dict[str, Value] = {}
        self.writes: dict[str, Value] = {}
        self.at = 0
        self.budget: Budget | None = None
        self.long = False

    def loc(self, line: int) -> Loc:
        base = self.site.doc.loc(self.path)
        block = self.reader.files.block_offset(self.site.doc, self.path)
        return Loc(self.site.doc.file, base.line + block + line, 1 if block or line else base.col)

    def run(self) -> None:
        if "GITHUB_ENV" not in self.text and "gh run download" not in self.text:
            return
        if len(self.text) > MAX_SCRIPT:
            self.reader.note_unresolved(
                self.loc(0),
                Unknown(
                    "run:",
                    f"a script of {len(self.text):,} characters; stagegate reads "
                    f"at most {MAX_SCRIPT:,}: move it to a file and bind what it computes",
                ),
            )
            return
        self.budget = self.reader.work.child(MAX_WORK)
        try:
            for number, line in enumerate(self.text.split("\n")):
                self.at = number
                self.budget.charge(1 + len(line) // 64)
                self.statement(number, line.strip())
        except OverBudget as exc:
            self.reader.note_unresolved(
                self.loc(self.at),
                Unknown(
                    self.text.split("\n")[self.at].strip()[:200] or "run:",
                    f"reading this script takes {exc.why}; stagegate stops reading it here",
                ),
            )
            self.writes = {
                n: Unknown(f"env.{n}", "a PowerShell script stagegate stopped reading")
                for n in self.writes
            }
        finally:
            self.budget.settle()
        self.site.written.update(self.writes)

    def statement(self, number: int, line: str) -> None:
        if not line or line.startswith("#"):
            return
        if "gh run download" in line:
            self.reader.note_unresolved(
                self.loc(number),
                Unknown(
                    line[:200], "a gh run download in a PowerShell script stagegate does not read"
                ),
            )
            return
        write = _PS_ENV_WRITE.fullmatch(line)
        if write:
            value = self.ps_value(write.group(1) or write.group(2) or "")
            text = value if isinstance(value, str) else None
            name, sep, rest = (text or "").partition("=")
            if text is not None and sep and NAME_RE.fullmatch(name):
                if self.site.runs:
                    self.writes[name] = rest
                return
            if isinstance(value, Sym) and isinstance(value.parts[0], str) and "=" in value.parts[0]:
                name = value.parts[0].partition("=")[0]
                if NAME_RE.fullmatch(name):
                    loc = self.loc(number)
                    self.reader.env_writers[name] = (
                        f"{name} is written to $GITHUB_ENV by the PowerShell script at "
                        f"{loc.file}:{loc.line} from a value stagegate cannot compute; bind env.{name}"
                    )
                    if self.site.runs:
                        self.writes[name] = Unknown(f"env.{name}", self.reader.env_writers[name])
                    return
            self._unread_write(number, line)
            return
        if "GITHUB_ENV" in line:
            self._unread_write(number, line)
            return
        assign = _PS_ASSIGN.fullmatch(line)
        if assign:
            self.vars[assign.group(2)] = self.ps_value(assign.group(3))

    def _unread_write(self, number: int, line: str) -> None:
        """A write of $GITHUB_ENV not read: unresolved where the step runs (a step whose
        ``if:`` rules it out here writes nothing)."""
        if self.site.runs:
            self.reader.note_unresolved(
                self.loc(number),
                Unknown(line[:200], "a write of $GITHUB_ENV in PowerShell stagegate cannot read"),
            )

    def too_long(self, line: str) -> Unknown:
        """A value over MAX_VALUE characters (doubling assignments) is not built: it is
        unknown, and reported at its line."""
        unknown = Unknown(
            line[:100],
            f"a value longer than {MAX_VALUE:,} characters (no artifact name or glob is that "
            "long); stagegate does not compute it",
        )
        if not self.long:  # the first: those built from it are unknown for its reason
            self.reader.note_unresolved(self.loc(self.at), unknown)
            self.long = True
        return unknown

    def ps_value(self, text: str) -> Value:
        """A PowerShell string: '...' literal; "..." with $x and $env:X expanded; a bare
        word; anything else (a command, an expression) unknown."""
        text = text.strip()
        if len(text) >= 2 and text[0] == text[-1] == "'" and "'" not in text[1:-1]:
            return self.gh(text[1:-1])
        if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
            inner = text[1:-1]
            if "$(" in inner or "`" in inner:
                return Unknown(text, f"{text} runs a PowerShell expression")
            pieces: list[Value] = []
            pos = 0
            for match in _PS_VAR.finditer(inner):
                pieces.append(self.gh(inner[pos : match.start()]))
                name = match.group(2)
                if match.group(1):
                    found = self.scope.env_value(name)
                    pieces.append(
                        found
                        if found is not NotImplemented
                        else Unknown(
                            match.group(), f"{match.group()} is set in no env: stagegate reads"
                        )
                    )
                else:
                    pieces.append(
                        self.vars.get(
                            name,
                            Unknown(
                                match.group(), f"{match.group()} is not set earlier in the script"
                            ),
                        )
                    )
                pos = match.end()
            pieces.append(self.gh(inner[pos:]))
            if sum(size(p) for p in pieces) > MAX_VALUE:
                return self.too_long(text)
            return concat(pieces)
        if re.fullmatch(r"[A-Za-z0-9_.=-]+", text):
            return text
        return Unknown(
            text[:200], f"{text[:200]} is a PowerShell expression stagegate does not compute"
        )

    def gh(self, text: str) -> Value:
        """Text with GitHub's ``${{ }}`` evaluated (GitHub substitutes it first)."""
        if "${{" not in text:
            return text
        try:
            return interpolated(text, self.scope)
        except LocatedError as exc:
            raise invalid(self.loc(self.at), f"invalid expression: {exc.message}") from None
