"""``${{ }}`` expressions (stagegate.model.ghexpr): parsing, evaluation as GitHub does it,
three-valued logic over what cannot be known, and splitting text into expressions.

Table-driven: each row is an expression and what it is; a context the table does not
give is unknown, as a secret or a step's output is to drift."""

from __future__ import annotations

import math

import pytest

from stagegate.errors import LocatedError
from stagegate.model.ghexpr import (
    MAX_DEPTH,
    MAX_EXPRESSION,
    Bin,
    Call,
    Evaluator,
    Index,
    Lit,
    Not,
    Ph,
    Prop,
    Ref,
    Star,
    Sym,
    Unknown,
    Value,
    concat,
    parse,
    source,
    split_text,
    to_text,
    truth,
)

CONTEXT: dict[str, Value] = {
    "matrix.py": "312",
    "matrix.platform": Sym((Ph("platform"),)),
    "matrix.list": ["a", "b"],
    "env.EMPTY": "",
    "env.ZERO": "0",
    "env.CU": "cu12",
    "inputs.count": 3.0,
    "inputs.flag": True,
}


def lookup(path: str) -> Value:
    """The table's contexts; ``secrets``, ``steps`` and ``vars`` are unknown; anything
    else is left to the evaluator (NotImplemented), as the job scope does."""
    if path in CONTEXT:
        return CONTEXT[path]
    head = path.split(".")[0]
    if head in ("secrets", "steps", "vars"):
        return Unknown(path, f"{path} is not known from the YAML")
    return NotImplemented


def evaluate(text: str) -> Value:
    return Evaluator(lookup)(parse(text))


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("'it''s'", Lit("it's")),
        ("''", Lit("")),
        ("42", Lit(42.0)),
        ("-1.5", Lit(-1.5)),
        ("1e3", Lit(1000.0)),
        (".5", Lit(0.5)),
        ("0x1F", Lit(31.0)),
        ("true", Lit(True)),
        ("false", Lit(False)),
        ("null", Lit(None)),
        ("matrix", Ref("matrix")),
        ("matrix.py", Prop(Ref("matrix"), "py")),
        ("env['A-B']", Index(Ref("env"), Lit("A-B"))),
        ("github.event.*.name", Prop(Star(Prop(Ref("github"), "event")), "name")),
        ("x[*]", Star(Ref("x"))),
        ("x[0][y]", Index(Index(Ref("x"), Lit(0.0)), Ref("y"))),
        ("fromJSON(x)", Call("fromjson", (Ref("x"),))),
        ("success()", Call("success", ())),
        ("format('{0}', a, 'b')", Call("format", (Lit("{0}"), Ref("a"), Lit("b")))),
        ("!a", Not(Ref("a"))),
        ("!!a", Not(Not(Ref("a")))),
        ("a || b && c", Bin("||", Ref("a"), Bin("&&", Ref("b"), Ref("c")))),
        ("(a || b) && c", Bin("&&", Bin("||", Ref("a"), Ref("b")), Ref("c"))),
        (
            "a == b || c != d",
            Bin("||", Bin("==", Ref("a"), Ref("b")), Bin("!=", Ref("c"), Ref("d"))),
        ),
        ("a < b == c >= d", Bin("==", Bin("<", Ref("a"), Ref("b")), Bin(">=", Ref("c"), Ref("d")))),
        ("a && b && c", Bin("&&", Bin("&&", Ref("a"), Ref("b")), Ref("c"))),
        ("!a == b", Bin("==", Not(Ref("a")), Ref("b"))),
        ("  a\n&&\tb  ", Bin("&&", Ref("a"), Ref("b"))),
        ("needs.my-job.outputs.x", Prop(Prop(Prop(Ref("needs"), "my-job"), "outputs"), "x")),
    ],
)
def test_parse(text: str, tree: object) -> None:
    assert parse(text) == tree


@pytest.mark.parametrize(
    "text",
    [
        "'it''s' == matrix.py",
        "!(a || b) && c",
        "(a || b) && c",
        "a && (b || c)",
        "a == (b == c)",
        "(a && b).x[(c || d)]",
        "!(a == b)",
        "(!a).x",
        "format('{0}-{1}', matrix.py, env['X'])",
        "x.*",
        "-1.5 < 2",
        "null",
        "true",
    ],
)
def test_source_writes_the_expression_back(text: str) -> None:
    """What messages quote: parsing the written text gives the same tree."""
    tree = parse(text)
    assert parse(source(tree)) == tree


def test_source_spelling() -> None:
    assert source(parse("fromJSON( x )[ 'k' ]")) == "fromjson(x)['k']"
    assert source(parse("(a||b)")) == "a || b"
    assert source(parse("((a||b))&&(c)")) == "(a || b) && c"
    assert source(parse("(a == b) == c")) == "a == b == c"
    assert source(parse("!(a)")) == "!a"
    assert source(parse("x[*]")) == "x.*"


def test_a_call_remembers_its_column() -> None:
    tree = parse("a && hashFiles('x')")
    assert isinstance(tree, Bin) and isinstance(tree.right, Call)
    assert tree.right.column == 5


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("a +", "unexpected '+' in an expression; fix the expression's syntax.", 2),
        ("a b", "unexpected 'b' after a complete expression; fix the expression's syntax.", 2),
        ("a.", "expected a property name after '.'; fix the expression.", 2),
        ("a.1", "unexpected '.1' after a complete expression; fix the expression's syntax.", 1),
        ("(a", "expected ')' here; fix the expression.", 2),
        ("f(a,", "the expression ends too early; complete it.", 4),
        ("a[0", "expected ']' here; fix the expression.", 3),
        ("", "the expression ends too early; complete it.", 0),
        ("a ==", "the expression ends too early; complete it.", 4),
        ("'open", "unexpected \"'\" in an expression; fix the expression's syntax.", 0),
        (")", "unexpected ')'; fix the expression.", 0),
        ("a = b", "unexpected '=' in an expression; fix the expression's syntax.", 2),
    ],
)
def test_syntax_errors_name_the_column(text: str, message: str, column: int) -> None:
    with pytest.raises(LocatedError) as caught:
        parse(text)
    assert (caught.value.message, caught.value.column) == (message, column)


def test_limits() -> None:
    parse("a" * MAX_EXPRESSION)
    with pytest.raises(LocatedError, match=r"expression of 10,001 characters; the limit is 10,000"):
        parse("a" * (MAX_EXPRESSION + 1))
    parse("(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH)
    with pytest.raises(LocatedError, match="nests more than 50 levels; simplify it"):
        parse("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1))
    parse("!" * MAX_DEPTH + "a")
    with pytest.raises(LocatedError, match="nests more than 50 levels; simplify it"):
        parse("!" * (MAX_DEPTH + 2) + "a")


# --------------------------------------------------------------------------- evaluation


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # contexts: looked up by their dotted path, however it is written
        ("matrix.py", "312"),
        ("matrix['py']", "312"),
        ("env.CU", "cu12"),
        ("inputs.count", 3.0),
        ("matrix.list[1]", "b"),
        ("matrix.list[2]", None),
        ("matrix.list[0.5]", None),
        ("matrix.list[-1]", None),
        ("matrix.list.*", ["a", "b"]),
        # comparison: strings ignore case, other kinds compare as numbers
        ("'CU12' == env.CU", True),
        ("env.CU != 'cu13'", True),
        ("'1' == 1", True),
        ("'0x10' == 16", True),
        ("'' == 0", True),
        ("null == 0", True),
        ("null == null", True),
        ("true == 1", True),
        ("'abc' == 1", False),
        ("'b' > 'A'", True),
        ("'10' < '9'", True),
        ("10 < 9", False),
        ("'a' < 1", False),
        ("'a' >= 1", False),
        ("inputs.count >= 3", True),
        ("fromJSON('[]') == fromJSON('[]')", False),
        ("fromJSON('{}') == 0", False),
        # logic returns an operand, as GitHub does
        ("'' || 'b'", "b"),
        ("'a' || 'b'", "a"),
        ("'a' && 'b'", "b"),
        ("0 && 'x'", 0.0),
        ("env.EMPTY && 'x'", ""),
        ("!env.EMPTY", True),
        ("!env.ZERO", False),
        ("!0", True),
        ("!fromJSON('[]')", False),
        ("!null", True),
        ("!inputs.flag", False),
        # functions
        ("contains('Hello', 'ELL')", True),
        ("contains(matrix.list, 'B')", True),
        ("contains(matrix.list, 'c')", False),
        ("contains(1234, 23)", True),
        ("startsWith(env.CU, 'CU')", True),
        ("endsWith(env.CU, '13')", False),
        ("format('{0}-{1}', matrix.py, 'x')", "312-x"),
        ("format('{{0}} {0}', 'a')", "{0} a"),
        ("format('{0}', true)", "true"),
        ("join(matrix.list, '+')", "a+b"),
        ("join(matrix.list)", "a,b"),
        ("join('one')", "one"),
        ("toJSON(matrix.list)", '[\n  "a",\n  "b"\n]'),
        ("toJSON('a')", '"a"'),
        ('fromJSON(\'{"A": {"b": [1, 2]}}\').a.B[1]', 2.0),
        ('fromJSON(\'[{"n": 1}, {"n": 2}, 3]\').*.n', [1.0, 2.0]),
        ('fromJSON(\'{"x": 1, "y": 2}\').*', [1.0, 2.0]),
        ("fromJSON('true')", True),
        ("fromJSON(' 7 ')", 7.0),
        ("success()", True),
        ("always()", True),
        ("failure()", False),
        ("cancelled()", False),
        # text of known values
        ("format('{0}{1}{2}', null, 1.50, 0x10)", "1.516"),
        ("format('{0}', fromJSON('{}'))", "Object"),
        ("format('{0}', matrix.list)", "Array"),
        # a property of what is not an object
        ("env.CU.length", None),
        ("fromJSON('{}').x", None),
    ],
)
def test_evaluate(text: str, value: Value) -> None:
    got = evaluate(text)
    assert got == value and type(got) is type(value), (text, got)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("format('py{0}-{1}', matrix.py, matrix.platform)", Sym(("py312-", Ph("platform")))),
        ("matrix.platform", Sym((Ph("platform"),))),
    ],
)
def test_placeholders_stay_symbolic(text: str, value: Value) -> None:
    assert evaluate(text) == value


@pytest.mark.parametrize(
    ("text", "expression", "reason"),
    [
        ("secrets.TOKEN", "secrets.TOKEN", "secrets.TOKEN is not known from the YAML"),
        ("github", "github", "github is not a context stagegate reads"),
        ("github.sha", "github.sha", "github is not a context stagegate reads"),
        ("github['sha'].x", "github['sha'].x", "github is not a context stagegate reads"),
        ("secrets.A == 'x'", "secrets.A == 'x'", "secrets.A is not known from the YAML"),
        (
            "!steps.s.outputs.o",
            "!steps.s.outputs.o",
            "steps.s.outputs.o is not known from the YAML",
        ),
        (
            "contains(secrets.A, 'x')",
            "contains(secrets.A, 'x')",
            "secrets.A is not known from the YAML",
        ),
        (
            "matrix.list[secrets.I]",
            "matrix.list[secrets.I]",
            "secrets.I is not known from the YAML",
        ),
        ("secrets.A.*", "secrets.A.*", "secrets.A is not known from the YAML"),
        ("hashFiles('**/x')", "hashfiles('**/x')", "hashfiles() is not computed by stagegate"),
        ("fromJSON('{')", "fromjson('{')", "fromJSON of text that is not JSON"),
        (
            "fromJSON(matrix.platform)",
            "fromjson(matrix.platform)",
            "a value stagegate cannot compute",
        ),
        ("format('{1}', 'a')", "format('{1}', 'a')", "format() with an invalid placeholder"),
        ("format('{x}', 'a')", "format('{x}', 'a')", "format() with an invalid placeholder"),
        ("format(vars.T, 'a')", "format(vars.T, 'a')", "vars.T is not known from the YAML"),
        ("'a' < matrix.platform", "'a' < matrix.platform", "a value stagegate cannot compute"),
        (
            "join(matrix.list, matrix.platform)",
            "join(matrix.list, matrix.platform)",
            "a value stagegate cannot compute",
        ),
        ("vars.A && 'x'", "vars.A && 'x'", "vars.A is not known from the YAML"),
    ],
)
def test_what_cannot_be_known_is_unknown(text: str, expression: str, reason: str) -> None:
    """Never a guess: the expression it comes from and why, for the unresolved report."""
    assert evaluate(text) == Unknown(expression, reason)


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        # an unknown side decides nothing unless the other side decides it
        ("secrets.A || true", True),
        ("secrets.A || false", None),
        ("secrets.A && true", None),
        ("secrets.A && false", False),
        ("true || secrets.A", True),
        ("false && secrets.A", False),
        ("false || secrets.A", None),
        ("!secrets.A", None),
        ("secrets.A == 'x'", None),
        # text with a placeholder is never empty; an unknown piece alone may be
        ("format('py{0}', matrix.platform)", True),
        ("format('{0}', secrets.A)", None),
        ("matrix.platform", True),
    ],
)
def test_three_valued_truth(text: str, answer: bool | None) -> None:
    assert truth(evaluate(text)) is answer


def test_a_decided_side_is_the_value() -> None:
    """`secrets.A && false` is false itself; `true || secrets.A` never reads secrets."""
    assert evaluate("secrets.A && false") is False
    assert evaluate("true || secrets.A") is True


# --------------------------------------------------------------------------- text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        (True, "true"),
        (False, "false"),
        (3.0, "3"),
        (-0.5, "-0.5"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (math.nan, "NaN"),
        ([], "Array"),
        ({}, "Object"),
        ("x", "x"),
    ],
)
def test_to_text(value: Value, text: str) -> None:
    assert to_text(value) == text


@pytest.mark.parametrize(
    ("parts", "value"),
    [
        (["a", 1.0, True, None], "a1true"),
        (["a", Ph("py"), "b", "c"], Sym(("a", Ph("py"), "bc"))),
        ([Sym(("x", Ph("py"))), "", Ph("p")], Sym(("x", Ph("py"), Ph("p")))),
        ([Unknown("u", "why")], Sym((Unknown("u", "why"),))),
        ([], ""),
    ],
)
def test_concat(parts: list[Value], value: Value) -> None:
    assert concat(parts) == value


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("plain", [("plain", 0)]),
        ("", []),
        ("${{ a }}", [("${{ a }}", 0)]),
        ("py${{ matrix.py }}-x", [("py", 0), ("${{ matrix.py }}", 2), ("-x", 18)]),
        ("${{a}}${{b}}", [("${{a}}", 0), ("${{b}}", 6)]),
        ("${{ '}}' }}!", [("${{ '}}' }}", 0), ("!", 11)]),
        ("${{ 'it''s}}' }}", [("${{ 'it''s}}' }}", 0)]),
        ("$ {{ no }}", [("$ {{ no }}", 0)]),
    ],
)
def test_split_text(text: str, pieces: list[tuple[str, int]]) -> None:
    assert split_text(text) == pieces


def test_an_unclosed_expression_is_located_at_its_start() -> None:
    with pytest.raises(LocatedError) as caught:
        split_text("name-${{ matrix.py }}-${{ matrix.os")
    assert caught.value.column == 22
    assert caught.value.message == (
        "'${{' is not closed by '}}'; close the expression (or write the text without ${{)."
    )


@pytest.mark.parametrize(
    ("kind", "text", "answer"),
    [
        # the tag run: refs/tags/ + a name holds refs/tags/, whatever the name
        ("push-tag", "github.event_name == 'push' && contains(github.ref, 'refs/tags/')", True),
        ("push-tag", "!contains(github.ref, 'refs/tags/')", False),
        ("push-tag", "contains(github.ref, 'v1')", None),  # the tag's name is not known
        ("pull_request", "github.event_name == 'push' && contains(github.ref, 'refs/tags/')", False),
        # a branch's name may hold anything: not decided
        ("push-branch", "contains(github.ref, 'refs/tags/')", None),
    ],
)
def test_contains_of_a_partly_known_ref(kind: str, text: str, answer: bool | None) -> None:
    from stagegate.ci.runkinds import github_value
    from stagegate.model.ghexpr import Evaluator, parse, truth

    value = Evaluator(lambda path: github_value(kind, path))(parse(text))
    assert truth(value) is answer
