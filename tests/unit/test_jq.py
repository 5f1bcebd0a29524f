"""The jq subset (ci.jq) that generated matrices are computed with: each form against
what jq 1.7 prints, the errors jq stops with, and the forms it does not evaluate
(unsupported, never guessed)."""

from __future__ import annotations

from typing import Any

import pytest

from stagegate.ci import jq

ROWS = [
    {"ARCH": "amd64", "PY_VER": "3.12", "DRIVER": "latest", "ENV": {"MODE": "nightly-pytorch"}},
    {"ARCH": "arm64", "PY_VER": "3.15", "DRIVER": "580.65.06"},
]

# The expression compute-matrix hands jq in cuda-python's test-wheel-linux.yml (shape).
CUDA_PYTHON = (
    '. | if any(.[]; .DRIVER != "latest" and .DRIVER != "earliest" and .FLAVOR == "wsl") '
    'then "Error: custom DRIVER is not supported with FLAVOR=wsl\\n" | halt_error(1) else . end'
    ' | map(. + {RUNNER_DRIVER: (if .DRIVER == "latest" or .DRIVER == "earliest" then .DRIVER'
    ' else "latest" end)}) | if (. | length) > 0 then {include: .} else "Error: Empty matrix\\n"'
    " | halt_error(1) end"
)


def run(expr: str, value: Any) -> list[str]:
    """The outputs as ``jq -c`` prints them."""
    return [jq.write(out, compact=True) for out in jq.evaluate(jq.parse(expr), value)]


@pytest.mark.parametrize(
    ("expr", "value", "printed"),
    [
        (".", {"a": 1}, ['{"a":1}']),
        (".a.b", {"a": {"b": "x"}}, ['"x"']),
        ('.a["b-c"]', {"a": {"b-c": 2}}, ["2"]),
        ('.["a"].b', {"a": {"b": 3}}, ["3"]),
        (".missing.deeper", {}, ["null"]),
        (".[1]", [10, 20], ["20"]),
        (".[-1]", [10, 20], ["20"]),
        (".[5]", [10, 20], ["null"]),
        (".[]", [1, "a"], ["1", '"a"']),
        (".[]", {"x": 1, "y": 2}, ["1", "2"]),
        (".[] | .PY_VER", ROWS, ['"3.12"', '"3.15"']),
        ("map(.ARCH)", ROWS, ['["amd64","arm64"]']),
        ('map(select(.ENV.MODE == "nightly-pytorch")) | length', ROWS, ["1"]),
        ('.[] | select(.ARCH != "amd64") | .PY_VER', ROWS, ['"3.15"']),
        ('"text"', None, ['"text"']),
        ('"a\\"b\\n"', None, ['"a\\"b\\n"']),
        ("12", None, ["12"]),
        ("true", None, ["true"]),
        ("null", None, ["null"]),
        ("1 == 1.0", None, ["true"]),
        ("true == 1", None, ["false"]),
        ('{"a": 1} == {"a": 1}', None, ["true"]),
        ("null != false", None, ["true"]),
        ("1 < 2", None, ["true"]),
        ('"b" > "a"', None, ["true"]),
        ("null < false", None, ["true"]),
        ("[1] >= [1]", None, ["true"]),
        ('{"a": 2} > {"a": 1}', None, ["true"]),
        ('{"b": 0} > {"a": 9}', None, ["true"]),
        ("true and null", None, ["false"]),
        ("false or 0", None, ["true"]),
        (". | not", None, ["true"]),
        ("[.[] | .ARCH]", ROWS, ['["amd64","arm64"]']),
        ("[]", None, ["[]"]),
        ("{include: .}", [1], ['{"include":[1]}']),
        ('{"k-v": .a, b: (.a | length)}', {"a": "xyz"}, ['{"k-v":"xyz","b":3}']),
        (". + {R: .A}", {"A": 1}, ['{"A":1,"R":1}']),
        ('{"a": 1} + {"a": 2}', None, ['{"a":2}']),
        ("null + 1", None, ["1"]),
        ('"ab" + "c"', None, ['"abc"']),
        ("[1] + [2]", None, ["[1,2]"]),
        ("if . then 1 else 2 end", False, ["2"]),
        ("if . == 1 then 10 elif . == 2 then 20 else 30 end", 2, ["20"]),
        ("if false then 1 end", 7, ["7"]),
        ("length", "héllo", ["5"]),
        ("length", None, ["0"]),
        ("length", -3, ["3"]),
        ("any(.[]; . == 2)", [1, 2], ["true"]),
        ("any(.[]; . == 3)", [1, 2], ["false"]),
        ("any", [False, None, 1], ["true"]),
        ("[.[] | select(. == 1) | empty]", [1], ["[]"]),
        (
            "map(. + {RUNNER_DRIVER: .DRIVER})",
            [{"DRIVER": "latest"}],
            ['[{"DRIVER":"latest","RUNNER_DRIVER":"latest"}]'],
        ),
        (
            CUDA_PYTHON,
            ROWS,
            [
                '{"include":[{"ARCH":"amd64","PY_VER":"3.12","DRIVER":"latest","ENV":'
                '{"MODE":"nightly-pytorch"},"RUNNER_DRIVER":"latest"},{"ARCH":"arm64",'
                '"PY_VER":"3.15","DRIVER":"580.65.06","RUNNER_DRIVER":"latest"}]}'
            ],
        ),
    ],
)
def test_each_form_prints_what_jq_prints(expr: str, value: Any, printed: list[str]) -> None:
    assert run(expr, value) == printed


@pytest.mark.parametrize(
    ("expr", "value", "message"),
    [
        (CUDA_PYTHON, [], "Error: Empty matrix"),
        (
            CUDA_PYTHON,
            [{"DRIVER": "1.2", "FLAVOR": "wsl"}],
            "Error: custom DRIVER is not supported with FLAVOR=wsl",
        ),
        ('"stop" | error', None, "stop"),
        ('error("why")', None, "why"),
        ("{} | error", None, "{} (not a string)"),
        (".a", [1], 'Cannot index array with "a"'),
        (".[0]", {"a": 1}, "Cannot index object with number"),
        (".[]", 3, "Cannot iterate over number"),
        ("map(.)", "s", "Cannot iterate over string"),
        ('1 + "a"', None, "number and string cannot be added"),
        ("true | length", None, "boolean has no length"),
    ],
)
def test_what_jq_stops_on_fails_with_its_message(expr: str, value: Any, message: str) -> None:
    with pytest.raises(jq.Failed) as caught:
        jq.evaluate(jq.parse(expr), value)
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("expr", "piece", "column"),
    [
        (".a, .b", ",", 2),
        (".a // 1", "/", 3),
        (".a?", "?", 2),
        ("..", ".", 1),
        (".[1:2]", "[", 1),
        (".[.k]", "[", 1),
        ("$ENV.X", "$ENV", 0),
        ('"\\(.a)"', '"\\(.a)"', 0),
        ("keys", "keys", 0),
        ("to_entries | map(.key)", "to_entries", 0),
        ("reduce .[] as $x (0; . + $x)", "reduce", 0),
        ("def f: .; f", "def", 0),
        (". - 1", "-", 2),
        ("map(.) | select(1; 2)", "select/2", 9),
        ("{(.k): 1}", "(", 1),
        ("{$x}", "$x", 1),
        ("1 == 1 == 1", "==", 7),
        ("if . then 1", "the end", 11),
        ("", "", 0),
    ],
)
def test_other_forms_are_unsupported_not_guessed(expr: str, piece: str, column: int) -> None:
    with pytest.raises(jq.Unsupported) as caught:
        jq.evaluate(jq.parse(expr), {"k": "a"})
    assert (caught.value.piece, caught.value.column) == (piece, column)


def test_a_long_or_deep_expression_is_unsupported_and_a_huge_result_stops() -> None:
    with pytest.raises(jq.Unsupported, match="nested deeper than 50"):
        jq.parse("(" * 60 + "." + ")" * 60)
    with pytest.raises(jq.Unsupported, match="longer than 10,000"):
        jq.parse("." + " " * 10_000)
    with pytest.raises(jq.Unsupported, match="more than 200,000 values"):
        jq.evaluate(jq.parse("[.[] | [.[] | [.[] | .]]]"), [[list(range(60))] * 60] * 60)
    # the control: the same form on a small input
    assert run("[.[] | [.[] | [.[] | .]]]", [[[1]]]) == ["[[[1]]]"]


def test_outputs_are_written_as_jq_writes_them() -> None:
    assert jq.write({"a": [1, "é"]}, compact=True) == '{"a":[1,"é"]}'
    assert jq.write({"a": [1]}, compact=False) == '{\n  "a": [\n    1\n  ]\n}'
    assert jq.write("x", compact=True, raw=True) == "x"
    assert jq.write(3.0, compact=True) == "3"
    with pytest.raises(jq.Inexact):
        jq.write({"v": 3.1}, compact=True)  # jq 1.6 and 1.7 print fractions apart
    assert jq.read_json('{"a":1}\n[2] 3') == [{"a": 1}, [2], 3]
    with pytest.raises(ValueError):
        jq.read_json("not json")


def test_json_nested_deeper_than_the_limit_is_unsupported_not_a_recursion() -> None:
    """Decoding, comparing and writing JSON recurse: input nested past MAX_JSON_DEPTH is
    refused before any of them (a string's brackets are not nesting)."""
    deep = "[" * (jq.MAX_JSON_DEPTH + 1) + "]" * (jq.MAX_JSON_DEPTH + 1)
    with pytest.raises(jq.Unsupported, match="JSON nested deeper than 100"):
        jq.read_json(deep)
    edge = "[" * jq.MAX_JSON_DEPTH + '"[[["' + "]" * jq.MAX_JSON_DEPTH
    assert run(". == .", jq.read_json(edge)[0]) == ["true"]


IDS = ["cp39-manylinux_x86_64", "cp39-manylinux_aarch64", "cp39-musllinux_armv7l"]


@pytest.mark.parametrize(
    ("expr", "inputs", "null_input", "printed"),
    [
        # the cibuildwheel 2.10 "only" recipe (lxml's wheel matrix): `jq -nRc`, then `jq -sc`
        (
            '{"only": inputs, "os": "u"}',
            IDS[:2],
            True,
            [
                '{"only":"cp39-manylinux_x86_64","os":"u"}',
                '{"only":"cp39-manylinux_aarch64","os":"u"}',
            ],
        ),
        (
            'map(. + {"platform": (.only | sub("^[^-]+-";"")), "python_version": (.only | sub("-.+";""))})',
            [[{"only": IDS[2]}]],
            False,
            [
                '[{"only":"cp39-musllinux_armv7l","platform":"musllinux_armv7l","python_version":"cp39"}]'
            ],
        ),
        ("inputs", [1, 2, 3], False, ["2", "3"]),  # the first input is `.`
        ("[inputs]", [], True, ["[]"]),
        ('split("-")', ["a-b-c"], False, ['["a","b","c"]']),
        ('split("-")', [""], False, ["[]"]),
        ('test("^cp3[0-9]+-")', ["cp39-x"], False, ["true"]),
        ('test("x*")', ["abc"], False, ["true"]),
        ('test("a|c")', ["b"], False, ["false"]),
        ('sub("x";"y")', ["abc"], False, ['"abc"']),
        ('sub("a";"b")', ["aaa"], False, ['"baa"']),  # the first match only
        ('sub("(?:ma|mu)[a-z]+_";"")', ["cp39-manylinux_x86_64"], False, ['"cp39-x86_64"']),
        ('sub("_[a-z0-9]+$";"")', ["cp39-win_amd64"], False, ['"cp39-win"']),
        (
            'map(select(.only | test("aarch64") | not))',
            [[{"only": IDS[0]}, {"only": IDS[1]}]],
            False,
            ['[{"only":"cp39-manylinux_x86_64"}]'],
        ),
    ],
)
def test_programs_over_inputs_print_what_jq_prints(
    expr: str, inputs: list[Any], null_input: bool, printed: list[str]
) -> None:
    """Checked against jq 1.6 (``-n``: ``null_input``; ``-R`` lines made the strings)."""
    outs = jq.program(jq.parse(expr), inputs, null_input=null_input)
    assert [jq.write(out, compact=True) for out in outs] == printed


@pytest.mark.parametrize(
    ("expr", "value", "message"),
    [
        ('sub("a";"b")', 1, "number (1) cannot be matched, as it is not a string"),
        ("test(1)", "a", "number not a string or array"),
        ('split("a")', 1, "split input and separator must be strings"),
        ('test("(")', "a", "( is not a valid regex: missing ), unterminated subpattern (jq stops)"),
    ],
)
def test_text_functions_stop_as_jq_does(expr: str, value: Any, message: str) -> None:
    with pytest.raises(jq.Failed) as caught:
        jq.evaluate(jq.parse(expr), value)
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("expr", "value", "why"),
    [
        ('test("\\\\d")', "1", "does not match"),  # Oniguruma's \d is not re's
        ('test("(?<n>a)")', "a", "does not match"),  # named groups
        ('test("[[:alpha:]]")', "a", "does not match"),
        ('test("[a&&b]")', "a", "does not match"),
        ('test("a$")', "a\nb", "line breaks"),
        ('sub("x*";"y")', "abc", "matching the empty string"),
        ('split("")', "abc", "split on an empty string"),
        ('sub("a"; empty)', "a", "makes 0 values"),
    ],
)
def test_text_functions_outside_the_subset_are_unsupported(expr: str, value: Any, why: str) -> None:
    with pytest.raises(jq.Unsupported) as caught:
        jq.evaluate(jq.parse(expr), value)
    assert why in caught.value.why
