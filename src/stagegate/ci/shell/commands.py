"""What a simple command means, from its expanded words: bash's builtins, the commands
whose effects stagegate follows (``gh run download``, ``rm``, ``mv``/``cp``/``find``,
the repository's scripts), and the text tools. Each handler is told only the command's
words and carries it out through ``Run``, the operations the walker offers; this
module never sees the walker's state.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Protocol

from stagegate.ci.shell import effects, pipes, textops
from stagegate.ci.shell.state import Break, Exit, Return
from stagegate.ci.shell.tests import decide_words
from stagegate.ci.shell.values import Array, Failed, Glob, absolute, in_workspace, known
from stagegate.ci.transfers import shown
from stagegate.model.ghexpr import Unknown, Value, unknowns

Status = bool | None


class Run(Protocol):
    """What a command can do to the reading (``ci.shell.walker.Walker`` does it)."""

    def input(self) -> Value | None:
        """The command's standard input (None: nothing is known to be there)."""

    def print(self, value: Value) -> None:
        """Print ``value`` where the command's standard output goes."""

    def write(self, file: Value, value: Value, *, append: bool) -> None:
        """Write ``value`` to ``file`` (``tee``)."""

    def assign(self, name: str, value: Value) -> None: ...

    def set_whole(self, name: str, value: Value) -> None:
        """Set the whole variable (an array's every element) to ``value``."""

    def unset(self, name: str) -> None: ...

    def export(self, name: str, value: Value | None) -> None: ...

    def arguments(self) -> tuple[Value, ...] | None: ...

    def set_arguments(self, args: tuple[Value, ...]) -> None: ...

    def download(self, spec: effects.Download, offset: int) -> None:
        """A ``gh run download`` whose options start at word ``offset``."""

    def remove(self, indexes: list[int], values: list[Value]) -> None:
        """``rm`` of ``values`` (the command's words at ``indexes``)."""

    def files(self, values: list[Value]) -> None:
        """``mv``/``cp``/``find``: files the step moves (its words)."""

    def report(self, argv: list[Value], env: dict[str, Value]) -> None:
        """A command the reading is told of with its words (``REPORTED``)."""

    def change_dir(self, target: Value | None) -> None:
        """``cd`` to ``target`` (None: a folder not named)."""

    def push_dir(self, target: Value | None) -> None:
        """``pushd`` to ``target``, keeping where the script was (None: a form not read)."""

    def pop_dir(self, known: bool) -> Status:
        """``popd``: back to where the last ``pushd`` was (``known``: a form read)."""

    def here(self) -> Value:
        """The absolute folder the script is in (``values.WORKSPACE`` and below)."""

    def use(self) -> None:
        """The downloaded files are used (an ``rm`` after this is clean-up)."""

    def repo_path(self, written: str) -> str | None:
        """The repository file a script names, None where it is none (``Files.repo_path``)."""

    def repo_script(self, rel: str) -> str | None:
        """The text of the repository's shell script ``rel`` (``Files.script``)."""

    def call(
        self, rel: str, text: str, args: list[Value], env: dict[str, Value], *, source: bool
    ) -> Status:
        """Read the repository script ``rel`` with ``args``; ``source``: in this shell."""

    def function(self, name: str) -> bool:
        """Whether a function of that name is defined."""

    def call_function(self, name: str, args: list[Value]) -> Status: ...

    def evaluate(self, text: str) -> Status:
        """``eval`` of known text: read as script text here."""

    def tool(self, head: str, argv: list[str], stdin: str) -> Value:
        """A text tool's output (``ci.shell.pipes``)."""

    def identifiers(self, argv: list[Value], env: dict[str, Value]) -> Value:
        """What ``cibuildwheel --print-build-identifiers`` prints here (``Host.identifiers``)."""

    def note(self, value: Value) -> None:
        """An unknown value that matters, reported at the command's line."""

    def charge(self, units: int) -> None: ...


Handler = Callable[[Run, list[Value]], Status]
SILENT = frozenset({"mkdir", "touch", "chmod", "ln", "wait", "sleep", "hash", "trap", "shopt"})
"""Commands that print nothing stagegate could read (their exit status is not known)."""
EFFECTS = frozenset({"cd", "pushd", "mkdir", "cp", "mv", "touch", "chmod", "ln", "rm", "true", ":"})
"""Commands run for what they do, not as a test: the list after ``mkdir -p d &&`` runs in
every run that gets there (a run where they fail is not one that ships)."""
PREFIXES = frozenset({"command", "builtin", "exec", "nohup", "time", "sudo"})
"""Commands that run the command after them."""
REPORTED_TOOLS = ("cibuildwheel", "maturin")
_REPORTED_TOOL = re.compile("|".join(map(re.escape, REPORTED_TOOLS)))
"""A word that names one of ``REPORTED_TOOLS`` anywhere in it (one search a word)."""
REPORTED_HEADS = frozenset({"cp", "mv"})
"""The commands ``Host.on_command`` is told of with their expanded words: those naming a
wheel build tool (``ci.builds``: the build, the tool's install), and copies and moves
(where the built wheels go)."""


def installs_requirements(texts: list[str]) -> bool:
    """Whether a command installs from a requirements file (``pip install -r FILE``):
    the file may pin the build tool."""
    return "install" in texts and any(
        t in ("-r", "--requirement")
        or t.startswith("--requirement=")
        or (t.startswith("-r") and len(t) > 2)
        for t in texts
    )


def reported(argv: list[Value]) -> bool:
    """Whether ``Host.on_command`` is told of the command ``argv``."""
    if argv[0] in REPORTED_HEADS:
        return True
    if installs_requirements([w for w in argv if isinstance(w, str)]):
        return True
    search = _REPORTED_TOOL.search
    return any(search(word if isinstance(word, str) else shown(word)) for word in argv)


def run(shell: Run, argv: list[Value], env: dict[str, Value]) -> Status:
    """Carry out the command ``argv`` (expanded), with the prefix assignments ``env``."""
    while argv and argv[0] in PREFIXES and len(argv) > 1 and not str(argv[1]).startswith("-"):
        argv = argv[1:]
    if reported(argv):
        shell.report(argv, env)
    head = argv[0]
    if not isinstance(head, str):
        shell.print(Unknown("command", "the output of a command stagegate cannot name"))
        return None
    if shell.function(head):
        return shell.call_function(head, argv[1:])
    handler = HANDLERS.get(str(head))
    if handler is not None:
        return handler(shell, argv)
    if head in effects.USES:
        shell.use()
    if head in ("mv", "cp", "find"):
        shell.files(argv)
        return None
    if head in pipes.TOOLS or head in ("jq", "yq"):
        return _tool(shell, str(head), argv)
    if head == "cibuildwheel" and "--print-build-identifiers" in argv:
        printed = shell.identifiers(argv, env)
        shell.print(printed)
        return None if unknowns(printed) else True
    called = _script(shell, argv, env)
    if called is not False:
        return called
    for i in range(1, len(argv) - 2):  # `timeout 60 gh run download ...`
        if argv[i : i + 3] == ["gh", "run", "download"]:
            shell.download(effects.download(argv[i + 3 :]), i + 3)
            return None
    if head not in SILENT:
        shell.print(Unknown(str(head), f"the output of {head}, which stagegate does not run"))
    return None


def _tool(shell: Run, head: str, argv: list[Value]) -> Status:
    stdin = shell.input()
    try:
        args = [known(a).text for a in argv[1:]]
        text = known(stdin).text if stdin is not None else None
    except Failed as exc:
        shell.print(Unknown(head, f"{head} reads a value stagegate does not know ({exc})"))
        return None
    if text is None and head in pipes.INPUT:
        shell.print(
            Unknown(head, f"{head} reads its standard input, which stagegate does not know")
        )
        return None
    printed = shell.tool(head, args, text or "")
    shell.print(printed)
    if head == "grep":  # its status says whether a line was selected
        return textops.grep_status(printed) if isinstance(printed, str) else None
    return True


def _script(shell: Run, argv: list[Value], env: dict[str, Value]) -> Status | bool:
    """``./ci/tools/X A B``, ``ci/tools/X``, ``bash ci/tools/X``, ``source ci/x``: a
    shell script of the repository, read with ``$1``... bound from the call (its
    downloads and ``$GITHUB_ENV`` writes are the calling step's). False: not one."""
    source = argv[0] in ("source", ".")
    words = argv[1:] if source or (argv[0] in ("bash", "sh") and len(argv) > 1) else argv
    if not source and argv[0] in ("bash", "sh") and str(words[0]).startswith("-"):
        return False
    if not words or not isinstance(words[0], str):
        return False
    where = str(words[0])
    if ("/" not in where and not source) or where.startswith("/"):
        return False
    rel = shell.repo_path(where)
    if rel is None:
        return False
    text = shell.repo_script(rel)
    if text is None:
        return False
    return shell.call(rel, text, list(words[1:]), env, source=source)


# --------------------------------------------------------------------------- builtins


def _cd(shell: Run, argv: list[Value]) -> Status:
    """``cd DIR``, ``pushd DIR``: where later commands run; ``cd -``, ``cd`` alone, a
    stack rotation (``pushd +1``, ``pushd`` alone) and a folder given another way go where
    stagegate does not follow (None)."""
    given = [a for a in argv[1:] if a not in ("-L", "-P", "-e", "--")]
    target = given[0] if len(given) == 1 else None
    if isinstance(target, str) and (target in ("-", "") or target.startswith(("~", "+", "-"))):
        target = None
    if argv[0] == "pushd":
        shell.push_dir(target)
    else:
        shell.change_dir(target)
    return None


def _popd(shell: Run, argv: list[Value]) -> Status:
    """``popd``: back to the folder the last ``pushd`` left; with options or arguments
    (``-n``, ``+N``) where stagegate does not follow. Fails where no ``pushd`` is left."""
    return shell.pop_dir(all(a == "--" for a in argv[1:]))


def _pwd(shell: Run, argv: list[Value]) -> Status:
    """``pwd``: where the script is, from the workspace (``values.WORKSPACE``)."""
    shell.print(shell.here())
    return True


_REALPATH_OPTIONS = frozenset(
    {
        "-s",
        "--strip",
        "--no-symlinks",
        "-m",
        "--canonicalize-missing",
        "-q",
        "--quiet",
        "-L",
        "-P",
        "--",
    }
)
"""The ``realpath`` options that leave its output a folder's path, one a line."""
_CYGPATH_OPTIONS = frozenset(
    {"-w", "--windows", "-u", "--unix", "-m", "--mixed", "-a", "--absolute"}
)
"""The ``cygpath`` options that spell a path another way (the folder stays the one meant)."""


def _realpath(shell: Run, argv: list[Value]) -> Status:
    """``realpath PATH...``, ``readlink -f PATH``, ``cygpath -w PATH``: the absolute path
    of a folder in the workspace, normalised (``..`` and ``.`` gone). The workspace's
    folders are taken for what they are in the repository, as ``cd`` takes them: real
    folders, not links elsewhere. A path outside the workspace (``/usr/local/cuda``,
    often a link), a glob, or an option that changes what is printed is unknown."""
    head = str(argv[0])
    allowed = {"realpath": _REALPATH_OPTIONS, "cygpath": _CYGPATH_OPTIONS}.get(
        head, frozenset({"-f", "-m", "-n"})
    )
    words = argv[1:]
    options = [w for w in words if isinstance(w, str) and w.startswith("-") and w != "-"]
    paths = [w for w in words if w not in options]
    if head == "readlink" and not {"-f", "-m"} & set(options):
        options.append("(-f or -m missing)")
    why = ""
    if any(o not in allowed for o in options):
        why = f"{head} with options stagegate does not read ({' '.join(map(str, options))})"
    elif not paths:
        why = f"{head} without a path"
    printed: list[str] = []
    for path in paths if not why else ():
        found = _absolute(shell, path, cygpath=head == "cygpath" and "-a" not in options)
        if isinstance(found, Unknown):
            why = found.reason
            break
        printed.append(found)
    if why:
        shell.print(Unknown(head, why))
        return None
    shell.print("\n".join(printed) + "\n")
    return True


def _absolute(shell: Run, path: Value, *, cygpath: bool = False) -> str | Unknown:
    """The absolute path ``path`` names from where the script is, where it is in the
    workspace (an Unknown saying why not); ``cygpath``: an absolute path only (cygpath
    spells a relative one relative)."""
    if not isinstance(path, str) or isinstance(path, Glob):
        return Unknown("path", "a path stagegate cannot compute")
    here = shell.here()
    rel = in_workspace(path)
    if rel is None and not path.startswith("/") and isinstance(here, str) and not cygpath:
        base = in_workspace(here)
        rel = None if base is None else posixpath.join(base, path)
    if rel is None:
        return Unknown(path, f"{path} is not in the workspace: whether it is a link is not known")
    rel = posixpath.normpath(rel or ".")
    if rel == ".." or rel.startswith("../"):
        return Unknown(path, f"{path} is outside the workspace")
    return absolute(rel)


def _true(shell: Run, argv: list[Value]) -> Status:
    return True


def _false(shell: Run, argv: list[Value]) -> Status:
    return False


def _echo(shell: Run, argv: list[Value]) -> Status:
    shell.print(effects.echo(argv[1:]))
    return True


def _printf(shell: Run, argv: list[Value]) -> Status:
    args = argv[1:]
    if args[:1] == ["-v"] and len(args) > 2 and isinstance(args[1], str):
        shell.assign(str(args[1]), effects.printf(args[2:]))
        return True
    shell.print(effects.printf(args))
    return True


def _cat(shell: Run, argv: list[Value]) -> Status:
    if any(a != "-" for a in argv[1:]):
        shell.print(Unknown("cat", "cat of a file stagegate does not read"))
        return None
    stdin = shell.input()
    shell.print(
        stdin if stdin is not None else Unknown("cat", "cat of an input stagegate does not know")
    )
    return True


def _tee(shell: Run, argv: list[Value]) -> Status:
    append = any(a in ("-a", "--append") for a in argv[1:])
    stdin = shell.input()
    text = stdin if stdin is not None else Unknown("tee", "what tee reads is not known")
    for target in argv[1:]:
        if isinstance(target, str) and target.startswith("-"):
            continue
        shell.write(target, text, append=append)
    shell.print(text)
    return True


def _download(shell: Run, argv: list[Value]) -> Status:
    if argv[1:3] != ["run", "download"]:
        shell.print(Unknown("gh", "the output of gh, which stagegate does not run"))
        return None
    shell.download(effects.download(argv[3:]), 3)
    return None


def _rm(shell: Run, argv: list[Value]) -> Status:
    indexes = [
        i for i, a in enumerate(argv) if i and not (isinstance(a, str) and a.startswith("-"))
    ]
    shell.remove(indexes, [argv[i] for i in indexes])
    return None


def _exit(shell: Run, argv: list[Value]) -> Status:
    raise Exit(_code(argv))


def _return(shell: Run, argv: list[Value]) -> Status:
    raise Return(_code(argv))


def _code(argv: list[Value]) -> int | None:
    if len(argv) < 2:
        return 0 if argv[0] != "exit" else None
    given = argv[1]
    return int(given) & 255 if isinstance(given, str) and given.isdigit() else None


def _break(shell: Run, argv: list[Value]) -> Status:
    levels = argv[1] if len(argv) > 1 else "1"
    count = int(levels) if isinstance(levels, str) and levels.isdigit() and int(levels) > 0 else 1
    raise Break(count, again=argv[0] == "continue")


def _export(shell: Run, argv: list[Value]) -> Status:
    for word in argv[1:]:
        if not isinstance(word, str) or word.startswith("-"):
            continue
        name, sep, value = word.partition("=")
        shell.export(name, value if sep else None)
    return True


def _unset(shell: Run, argv: list[Value]) -> Status:
    for word in argv[1:]:
        if isinstance(word, str) and not word.startswith("-"):
            shell.unset(word)
    return True


def _set(shell: Run, argv: list[Value]) -> Status:
    if "--" in argv:
        shell.set_arguments(tuple(argv[argv.index("--") + 1 :]))
    return True


def _shift(shell: Run, argv: list[Value]) -> Status:
    given = shell.arguments()
    count = argv[1] if len(argv) > 1 else "1"
    if given is None or not isinstance(count, str) or not count.isdigit():
        return None
    if int(count) > len(given):
        return False
    shell.set_arguments(given[int(count) :])
    return True


def _read(shell: Run, argv: list[Value]) -> Status:
    """``read [-r] NAME...``: the first line of the input, split at blanks."""
    names = [str(a) for a in argv[1:] if isinstance(a, str) and not a.startswith("-")]
    if any(isinstance(a, str) and a.startswith("-") and a != "-r" for a in argv[1:]):
        for name in names:  # ``read -a NAME`` sets an array
            shell.set_whole(name, Unknown(f"${name}", "read with options stagegate does not read"))
        return None
    stdin = shell.input()
    if not isinstance(stdin, str):
        for name in names:
            shell.assign(
                name, Unknown(f"${name}", f"${name} is read from an input stagegate does not know")
            )
        return None
    if not stdin:
        return False
    line = stdin.split("\n", 1)[0]
    pieces = line.split(None, max(len(names) - 1, 0)) if names else []
    for i, name in enumerate(names or ["REPLY"]):
        shell.assign(name, pieces[i] if i < len(pieces) else line if not names else "")
    return True


def _mapfile(shell: Run, argv: list[Value]) -> Status:
    """``mapfile [-t] [NAME]`` (``readarray``): the lines of a known input as the
    elements of an array (MAPFILE by default); other options are not read."""
    given = [a for a in argv[1:] if isinstance(a, str)]
    names = [a for a in given if not a.startswith("-")]
    name = names[-1] if names else "MAPFILE"
    stdin = shell.input()
    why = ""
    if len(given) != len(argv) - 1 or any(a.startswith("-") and a != "-t" for a in given):
        why = f"{argv[0]} with options stagegate does not read"
    elif len(names) > 1:
        why = f"{argv[0]} with more than one name"
    elif not isinstance(stdin, str):
        why = f"{argv[0]} reads an input stagegate does not know"
    if why:
        shell.set_whole(name, Unknown(f"${{{name}[@]}}", why))
        return None
    assert isinstance(stdin, str)
    lines = stdin.split("\n")
    kept = [line if "-t" in given else line + "\n" for line in lines[:-1]]
    if lines[-1]:
        kept.append(lines[-1])
    shell.charge(len(kept))
    shell.set_whole(name, Array(tuple(enumerate(kept))))
    return True


def _eval(shell: Run, argv: list[Value]) -> Status:
    try:
        text = " ".join(known(a).text for a in argv[1:])
    except Failed as exc:
        shell.note(
            Unknown(
                "eval", f"eval of text stagegate does not know ({exc}): what it runs is not known"
            )
        )
        return None
    return shell.evaluate(text)


def _test(shell: Run, argv: list[Value]) -> Status:
    return decide_words(argv[1:])


HANDLERS: dict[str, Handler] = {
    "cd": _cd,
    "pushd": _cd,
    "popd": _popd,
    ":": _true,
    "true": _true,
    "false": _false,
    "echo": _echo,
    "printf": _printf,
    "cat": _cat,
    "tee": _tee,
    "gh": _download,
    "rm": _rm,
    "exit": _exit,
    "return": _return,
    "break": _break,
    "continue": _break,
    "export": _export,
    "unset": _unset,
    "set": _set,
    "shift": _shift,
    "read": _read,
    "mapfile": _mapfile,
    "readarray": _mapfile,
    "eval": _eval,
    "test": _test,
    "pwd": _pwd,
    "realpath": _realpath,
    "readlink": _realpath,
    "cygpath": _realpath,
    "[": _test,
}


KNOWN = (
    frozenset(HANDLERS)
    | PREFIXES
    | pipes.TOOLS
    | {"jq", "yq", "bash", "sh", "source", ".", "cibuildwheel"}
)
"""Commands whose output or effects stagegate reads (the others print what it does not know)."""
