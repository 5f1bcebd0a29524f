"""The parse of ``run:`` scripts (stagegate.ci.shell.syntax): tree-sitter-bash's tree
turned into the records the walker reads, depth-limited and without recursion where the
input decides the depth."""

from __future__ import annotations

import inspect
import sys

import pytest

from stagegate.ci.shell import syntax
from stagegate.ci.shell.nodes import Command, Expand, Lit, Param, Script, Subst, Unread, Word


def shallow(text: str) -> Script:
    """``text`` parsed with only 250 Python frames to spare (none of them reused)."""
    syntax.parse.cache_clear()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 250)
    try:
        return syntax.parse(text)
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize(
    "text",
    [
        "X=" + "$(echo " * 10_000 + "a" + ")" * 10_000,
        "if true; then\n" * 5_000 + "X=1\n" + "fi\n" * 5_000,
        "( " * 10_000 + "X=1" + " )" * 10_000,
        "{ " * 10_000 + "X=1; " + "}; " * 10_000,
    ],
    ids=["substitutions", "ifs", "subshells", "groups"],
)
def test_tree_sitter_and_the_conversion_cope_with_deep_nesting(text: str) -> None:
    """tree-sitter parses 10,000 levels without recursing in Python; the conversion stops
    at MAX_DEPTH and says so, naming what the statement may set."""
    [statement] = shallow(text).body.items
    assert isinstance(statement, Unread)
    assert statement.reason == "shell constructs nested more than 40 deep"
    assert statement.assigned == ("X",)


def test_a_syntax_error_stops_the_script_where_bash_would() -> None:
    """bash runs the complete commands before the line it cannot parse, then stops."""
    items = shallow('A=1\necho "X=$(( A + ))"\nB=2\n').body.items
    assert isinstance(items[0], Command) and items[0].assigns[0].name == "A"
    assert isinstance(items[1], Unread) and items[1].fatal
    assert items[1].source.startswith('echo "X=$(( A + ))"')
    assert len(items) == 2


def test_words_keep_their_quoting_and_the_blanks_the_grammar_puts_in_tokens() -> None:
    [command] = shallow('echo "a ${B}-$C $(d)" e\\ f').body.items
    assert isinstance(command, Command)
    first, second = command.words[1:]
    assert first.parts[:5] == (
        Lit("a ", True),
        Param("B", True),
        Lit("-", True),
        Param("C", True),
        Lit(" ", True),  # inside the grammar's `$(` token
    )
    assert isinstance(first.parts[-1], Subst)
    assert second == Word((Lit("e", False), Lit(" ", True), Lit("f", False)), "e\\ f")


def test_parameter_expansions_are_read_from_their_parts() -> None:
    [command] = shallow('echo ${V%"."*} ${#V} ${V:1:-1} ${V//./-}').body.items
    assert isinstance(command, Command)
    trim, length, slice_, replace = (w.parts[0] for w in command.words[1:])
    assert isinstance(trim, Expand) and trim.op == "%"
    assert trim.args[0].parts == (Lit(".", True), Lit("*", False))
    assert isinstance(length, Expand) and length.op == "length"
    assert isinstance(slice_, Expand) and [a.parts for a in slice_.args] == [
        (Lit("1", True),),
        (Lit("-1", True),),
    ]
    assert isinstance(replace, Expand) and replace.op == "//"
    assert [a.parts for a in replace.args] == [(Lit(".", False),), (Lit("-", True),)]
