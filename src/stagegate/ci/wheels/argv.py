"""A build tool's command line as options: one walker for cibuildwheel's and maturin's."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from stagegate.ci.wheels.model import Word
from stagegate.errors import Loc
from stagegate.records import record


@record(kw_only=True)
class Option:
    """One option (``--archs x86_64``, ``--archs=x86_64``), flag or positional word
    (``name`` empty); ``why`` where a word it needs is not known (then no values)."""

    name: str
    values: tuple[str, ...]
    loc: Loc
    why: str = ""


def options(words: Sequence[Word], valued: Collection[str], many: Collection[str] = ()) -> list[Option]:
    """The options of ``words``: those in ``valued`` take the next word (or ``=value``),
    those in ``many`` every word up to the next option. An option whose value is not known
    (``--name=`` and a value not known: ``Word.option``) has ``why``; the walk stops at a word not known where an option could stand (it comes
    last, nameless, with ``why``)."""
    out: list[Option] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.text is None and word.option and (word.option in valued or word.option in many):
            out.append(Option(name=word.option, values=(), loc=word.loc, why=word.why or "its value is not known"))
            i += 1
            continue
        if word.text is None:
            out.append(Option(name="", values=(), loc=word.loc, why=word.why or "a word is not known"))
            return out
        name, eq, value = word.text.partition("=")
        if name in many:
            values = [value] if eq else []
            while i + 1 < len(words) and not (words[i + 1].text or "-").startswith("-"):
                i += 1
                values.append(words[i].text or "")
            out.append(Option(name=name, values=tuple(values), loc=word.loc))
        elif name in valued and not eq:
            nxt = words[i + 1] if i + 1 < len(words) else None
            if nxt is None or nxt.text is None:
                why = nxt.why if nxt is not None else f"{name} without a value"
                out.append(Option(name=name, values=(), loc=word.loc, why=why or f"{name}'s value is not known"))
            else:
                out.append(Option(name=name, values=(nxt.text,), loc=word.loc))
            i += 1
        elif name in valued:
            out.append(Option(name=name, values=(value,), loc=word.loc))
        elif word.text.startswith("-"):
            out.append(Option(name=word.text, values=(), loc=word.loc))
        else:
            out.append(Option(name="", values=(word.text,), loc=word.loc))
        i += 1
    return out
