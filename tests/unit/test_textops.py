"""The text tools of ``run:`` scripts (stagegate.ci.shell.textops, and the shell
patterns and arithmetic beside them), table-driven: each row's expected output is what
GNU sed 4.8, coreutils 8.32, mawk/gawk and bash 5 print for it (checked once, by hand,
against the tools themselves). A form the reader does not compute fails with why;
those rows name it, never a guess."""

from __future__ import annotations

import pytest

from stagegate.ci.budget import Budget, OverBudget
from stagegate.ci.shell import arith, patterns, textops


def free(units: int) -> None:
    """No budget to keep to."""


@pytest.mark.parametrize(
    ("tool", "args", "text", "printed"),
    [
        ("sed", ["s/\\.//g"], "3.14t\n", "314t\n"),
        ("sed", ["s/x*/-/g"], "abc\n", "-a-b-c-\n"),
        ("sed", ["s/a*/x/g"], "baaac\n", "xbxcx\n"),
        ("sed", ["s/y*/-/2"], "xyz\n", "x-z\n"),
        ("sed", ["s/a/b/2g"], "aaa\n", "abb\n"),
        ("sed", ["-E", "s/([0-9]+)\\.([0-9]+)/\\2-\\1/"], "v3.12x\n", "v12-3x\n"),
        ("sed", ["s/\\([0-9]*\\)\\.\\([0-9]*\\)/\\1\\2/"], "3.12\n", "312\n"),
        ("sed", ["-e", "s/a/b/", "-e", "s/b/c/"], "ab\n", "cb\n"),
        ("sed", ["s/a/b/;s/c/d/g"], "acac\n", "bdad\n"),
        ("sed", ["s|/|_|g"], "a/b/c\n", "a_b_c\n"),
        ("sed", ["s/[[:upper:]]/&&/g"], "aBcD\n", "aBBcDD\n"),
        ("sed", ["s/^/pre-/"], "x\ny\n", "pre-x\npre-y\n"),
        ("sed", ["s/$/-post/"], "x\n", "x-post\n"),
        ("sed", ["s/b*$//"], "abbb\n", "a\n"),
        ("sed", ["-n", "s/a/x/p"], "ab\ncd\n", "xb\n"),
        ("sed", ["s/\\(a*\\)\\(a\\)/[\\1|\\2]/"], "aaaa\n", "[aaa|a]\n"),
        ("sed", ["s/a\\{2\\}/X/g"], "aaaaa\n", "XXa\n"),
        ("sed", ["-E", "s/a{2,3}/X/g"], "aaaaaaa\n", "XXa\n"),
        ("sed", ["s/.*-//"], "cuda-core-12\n", "12\n"),
        ("sed", ["s/-[^-]*$//"], "cuda-core-12\n", "cuda-core\n"),
        ("sed", ["s/\\//x/g"], "a/b\n", "axb\n"),
        ("sed", ["s/a/\\n/"], "bab\n", "b\nb\n"),
        ("sed", ["s/A/x/Ig"], "aAa\n", "xxx\n"),
        ("sed", ["s/*/x/"], "a*b\n", "axb\n"),
        ("sed", ["s/a\\+/x/"], "baab\n", "bxb\n"),
        ("sed", ["s/.//2"], "abc", "ac"),
        ("sed", ["s/\\(\\)/x/"], "ab\n", "xab\n"),
        # addresses (GNU sed 4.9): the lines a command applies to
        ("sed", ["/x/s|b|B|"], "a\nbx\nc\n", "a\nBx\nc\n"),
        ("sed", ["/x/!s/^/-/"], "a\nbx\nc\n", "-a\nbx\n-c\n"),
        ("sed", ["\\,x,s/b/Y/"], "a\nbx\nc\n", "a\nYx\nc\n"),
        ("sed", ["/a\\|c/d"], "a\nbx\nc\n", "bx\n"),
        ("sed", ["-E", "/a|x/ s/$/!/"], "a\nbx\nc\n", "a!\nbx!\nc\n"),
        ("sed", ["-n", "/x/s/b/B/p"], "a\nbx\nc\n", "Bx\n"),
        ("sed", ["\\|a/b|s|/|_|"], "a/b\nc\n", "a_b\nc\n"),
        ("sed", ["s/b/X/;/X/s/a/Y/"], "ab\nb\n", "YX\nX\n"),  # the line as changed so far
        ("sed", ["/[|]/d"], "a\nb\n", "a\nb\n"),
        (
            "sed",
            ["-e", "/aarch64\\|armv7l/s|ubuntu-latest|ubuntu-24.04-arm|"],
            '{"only":"cp39-manylinux_x86_64","os":"ubuntu-latest"}\n'
            '{"only":"cp39-musllinux_armv7l","os":"ubuntu-latest"}\n',
            '{"only":"cp39-manylinux_x86_64","os":"ubuntu-latest"}\n'
            '{"only":"cp39-musllinux_armv7l","os":"ubuntu-24.04-arm"}\n',
        ),
        # grep (GNU grep 3.8)
        ("grep", ["-v", "musl"], "a\nmusl\nb\n", "a\nb\n"),
        ("grep", ["-i", "arm"], "x86\nARM\narm\n", "ARM\narm\n"),
        ("grep", ["-F", "a.b"], "a.b\naxb\n", "a.b\n"),
        ("grep", ["-e", "ab", "-e", "ef"], "ab\ncd\nef\n", "ab\nef\n"),
        ("grep", ["-E", "a|d"], "ab\ncd\n", "ab\ncd\n"),
        ("grep", ["b$\\|^c"], "ab\ncd\n", "ab\ncd\n"),
        ("grep", ["-v", "-E", "a|c"], "ab\ncd\n", ""),
        ("tr", ["-d", "."], "3.14t\n", "314t\n"),
        ("tr", ["a-z", "A-Z"], "hello.x\n", "HELLO.X\n"),
        ("tr", ["[:lower:]", "[:upper:]"], "hello\n", "HELLO\n"),
        ("tr", ["-s", "."], "a..b...c\n", "a.b.c\n"),
        ("tr", ["-d", "[:punct:]"], "a.b,c!\n", "abc\n"),
        ("tr", ["-cd", "[:alnum:]"], "a.b-c 9\n", "abc9"),
        ("tr", ["abc", "x"], "aabbcc\n", "xxxxxx\n"),
        ("tr", ["-s", "a-c", "x"], "aabbccd\n", "xd\n"),
        ("tr", ["-ds", "a", "b"], "abbbac\n", "bc\n"),
        ("tr", ["\\n", " "], "a\nb\n", "a b "),
        ("tr", ["._", "-"], "a.b_c\n", "a-b-c\n"),
        ("cut", ["-d", ".", "-f", "1"], "a.b.c\n", "a\n"),
        ("cut", ["-c", "1-3"], "abcdef\n", "abc\n"),
        ("cut", ["-c", "2,4-"], "abcdef\n", "bdef\n"),
        ("cut", ["-d.", "-f2-", "--output-delimiter=_"], "a.b.c\n", "b_c\n"),
        ("cut", ["-d", ".", "-f", "2", "-s"], "abc\na.b\n", "b\n"),
        ("cut", ["-d", ".", "--complement", "-f", "2"], "a.b.c\n", "a.c\n"),
        ("awk", ["-F.", "{print $2}"], "a.b.c\n", "b\n"),
        ("awk", ["{print $2, $1}"], " a  b \n", "b a\n"),
        ("awk", ["{print $NF}"], "a b c\n", "c\n"),
        ("awk", ['{ print $1"-"$3 }'], "a b c\n", "a-c\n"),
        ("awk", ["{print $5}"], "a b\n", "\n"),
        ("awk", ["-F", ",", "{print $1}"], "a,b\n\nc\n", "a\n\nc\n"),
        # found by comparing random commands with the tools themselves
        ("awk", ["{print $NF}"], "  \na b\n", "  \nb\n"),  # NF 0: $NF is $0
        ("cut", ["-d", ".", "-f", "1"], "", ""),  # no input, no line
    ],
)
def test_tools_print_what_gnu_prints(tool: str, args: list[str], text: str, printed: str) -> None:
    run = getattr(textops, tool)
    assert (run(args, text, free) if tool in ("sed", "grep") else run(args, text)) == printed


@pytest.mark.parametrize(
    ("args", "printed"),
    [
        (["%05d|%-4s|%.2s|%x\\n", "42", "ab", "xyz", "255"], "00042|ab  |xy|ff\n"),
        (["%s.", "a", "b"], "a.b."),  # the format is reused while arguments remain
        (["%s-%s\\n", "x"], "x-\n"),  # a missing argument is empty
        (["%d", "010"], "8"),
        (["%d", "0x1f"], "31"),
        (["a\\tb\\101%%\\n"], "a\tbA%\n"),
        (["%b", "a\\nb"], "a\nb"),
        (["%c%c", "xy", "z"], "xz"),
        (["%5.1s|", "abc"], "    a|"),
        (["%+d %i %u", "5", "-3", "7"], "+5 -3 7"),
        (["%s"], ""),
        (["a\\cb"], "a\\cb"),  # \c ends the output only in %b
        (["%c|"], "\0|"),  # %c of nothing is a NUL byte
    ],
)
def test_printf(args: list[str], printed: str) -> None:
    assert textops.printf(args) == printed


@pytest.mark.parametrize(
    ("args", "printed"),
    [
        (["-n", "a"], "a"),
        (["-e", "a\\tb\\c", "z"], "a\tb"),
        (["-ne", "x\\n"], "x\n"),
        (["-x", "a"], "-x a\n"),
        (["-", "a"], "- a\n"),
        (["a", "-n"], "a -n\n"),
        (["-e", "\\0101\\x41"], "AA\n"),
        (["-E", "a\\n"], "a\\n\n"),
    ],
)
def test_echo(args: list[str], printed: str) -> None:
    assert textops.echo(args) == printed


@pytest.mark.parametrize(
    ("args", "printed"),
    [
        (["//"], "/\n"),
        ([""], "\n"),
        (["/a/b/"], "b\n"),
        (["a.txt", ".txt"], "a\n"),
        ([".txt", ".txt"], ".txt\n"),  # a suffix that is all of it stays
        (["-s", ".whl", "a/x.whl", "b/y.whl"], "x\ny\n"),
        (["-a", "a/b", "c/d/"], "b\nd\n"),
    ],
)
def test_basename(args: list[str], printed: str) -> None:
    assert textops.basename(args) == printed


@pytest.mark.parametrize(
    ("args", "printed"),
    [
        (["//"], "/\n"),
        (["a"], ".\n"),
        (["a/b//"], "a\n"),
        (["/a"], "/\n"),
        ([""], ".\n"),
        (["a/b", "/x/y/z"], "a\n/x/y\n"),
        (["///a"], "/\n"),
        (["a//b"], "a\n"),
    ],
)
def test_dirname(args: list[str], printed: str) -> None:
    assert textops.dirname(args) == printed


@pytest.mark.parametrize(
    ("tool", "args", "text", "why"),
    [
        ("sed", ["s/a\\|b/x/"], "ab\n", "a sed expression with alternation (|)"),
        ("sed", ["-E", "s/(ab)+/x/"], "ab\n", "a sed expression with a repeated group"),
        ("sed", ["s/\\(a\\)\\1/x/"], "aa\n", "the back-reference \\1 in a pattern"),
        ("sed", ["s/\\w/x/"], "a\n", "the escape \\w"),
        ("sed", ["s/[\\n]/x/"], "a\n", "a backslash in a bracket expression"),
        ("sed", ["s/a/\\U&/"], "a\n", "the case conversion \\U"),
        ("sed", ["s/a/\\2/"], "a\n", "\\2 refers to no group (sed fails)"),
        ("sed", ["y/ab/cd/"], "a\n", "the sed command 'y/ab/cd/'"),
        ("sed", ["1d"], "a\n", "a sed line address"),
        ("sed", ["-i", "s/a/b/"], "a\n", "sed -i: an option stagegate does not read"),
        ("sed", ["s/a/b/", "file"], "a\n", "sed reading files"),
        ("sed", ["s/a/b/w out"], "a\n", "the sed flags 'w out'"),
        ("sed", ["/\\(a\\|b\\)/d"], "a\n", "alternation inside a group"),
        ("sed", ["$s/a/b/"], "a\n", "a sed line address"),
        ("sed", ["/a/p"], "a\n", "the sed command '/a/p'"),
        ("sed", ["//d"], "a\n", "an empty sed regex"),
        ("sed", ["/a/d;s/b/c/x"], "a\n", "the sed flags 'x'"),
        ("grep", ["-c", "a"], "a\n", "grep -c: an option stagegate does not read"),
        ("grep", ["a", "file"], "a\n", "grep reading files"),
        ("grep", ["\\(a\\|b\\)"], "a\n", "alternation inside a group"),
        ("grep", ["-w", "a"], "a\n", "grep -w: an option"),
        ("tr", ["-d", "é"], "é\n", "tr reads bytes, and the text is not ASCII"),
        ("tr", ["[=a=]", "b"], "a\n", "[c*n] or [=c=]"),
        ("tr", ["z-a", "x"], "a\n", "a reversed range z-a (tr fails)"),
        ("tr", ["a"], "a\n", "tr with one set and no -d or -s (tr fails)"),
        ("tr", ["-ds", "a"], "a\n", "tr -ds with one set (tr fails)"),
        ("tr", ["ab", "[:digit:]"], "a\n", "a class tr translates to only as upper to lower"),
        ("tr", ["-c", "a", "b"], "a\n", "tr -c translating"),
        ("cut", ["-d", ".", "-f", "0"], "a\n", "cut's list '0' is not one cut reads (cut fails)"),
        ("cut", ["-f", "1", "-c", "1"], "a\n", "cut needs one of -f, -c, -b (cut fails)"),
        ("awk", ["{print $1 + 1}"], "1\n", "the awk program '{print $1 + 1}'"),
        ("awk", ["-F", "[.]", "{print $1}"], "a\n", "awk's field separator '[.]'"),
        ("awk", ["/x/ {print}"], "x\n", "the awk program '/x/ {print}'"),
    ],
)
def test_forms_not_read_say_why(tool: str, args: list[str], text: str, why: str) -> None:
    run = getattr(textops, tool)
    with pytest.raises(textops.Failed) as caught:
        run(args, text, free) if tool in ("sed", "grep") else run(args, text)
    assert why in str(caught.value)


def test_sed_matching_is_charged_to_the_budget() -> None:
    """A pattern backtracking engines take polynomial time of a high degree on: here,
    where a match can start is found in one pass from the line's end (the line's length
    times the pattern's), and only such a start is tried; each step charged (a budget
    smaller than that pass stops it, as the reading's stops a hostile one)."""
    text = "a" * 300 + "\n"
    assert textops.sed(["s/a*a*a*a*a*a*[bc]/x/"], text, free) == text
    assert textops.sed(["s/a*a*a*a*a*a*[bc]/x/"], text, Budget(10_000).charge) == text
    with pytest.raises(OverBudget):
        textops.sed(["s/a*a*a*a*a*a*[bc]/x/"], text, Budget(1_000).charge)
    # a character every match needs, which the line has not: no search at all
    assert textops.sed(["s/a*a*a*a*a*a*b/x/"], text, Budget(100).charge) == text
    # plain text is found as text (the match is the only one there is)
    assert textops.sed(["s/aab/x/"], "a" * 300 + "b\n", Budget(100).charge) == "a" * 298 + "x\n"


def chars(pattern: str) -> list[tuple[str, bool]]:
    return [(c, False) for c in pattern]


@pytest.mark.parametrize(
    ("value", "op", "pattern", "out"),
    [
        ("a.b.c", "%%", ".*", "a"),
        ("a.b.c", "%", ".*", "a.b"),
        ("a.b.c", "#", "*.", "b.c"),
        ("a.b.c", "##", "*.", "c"),
        ("a.b.c", "#", "?", ".b.c"),
        ("a.b.c", "%", "[bc]", "a.b."),
        ("a.b.c", "%%", "[!a]*", "a"),
        ("a.b.c", "%", "[[:alpha:]]", "a.b."),
        ("cuda-13.2.0", "##", "*-", "13.2.0"),
        ("", "#", "*", ""),
    ],
)
def test_pattern_trims(value: str, op: str, pattern: str, out: str) -> None:
    matcher = patterns.Matcher(patterns.compile_pattern(chars(pattern)), free)
    assert patterns.trim(value, op, matcher) == out


@pytest.mark.parametrize(
    ("value", "op", "pattern", "new", "out"),
    [
        ("abc", "//", "*", "y", "y"),
        ("", "//", "*", "y", "y"),
        ("abc", "//", "b*", "y", "ay"),
        ("abc", "/%", "c", "y", "aby"),
        ("abc", "/%", "", "y", "abcy"),
        ("abc", "/#", "", "y", "yabc"),
        ("abc", "//", "x*", "y", "abc"),
        ("aXbXc", "//", "X", " ", "a b c"),
        ("a.b.c", "/", ".", "-", "a-b.c"),
        ("3.12", "//", "[.]", "", "312"),
        ("", "//", "", "y", ""),  # an empty pattern replaces nothing, even in nothing
    ],
)
def test_pattern_replacements(value: str, op: str, pattern: str, new: str, out: str) -> None:
    matcher = patterns.Matcher(patterns.compile_pattern(chars(pattern)), free)
    assert patterns.replace(value, op, matcher, new) == out


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("N - 1", 12),
        ("N ** 2", 169),
        ("N--", 13),
        ("N << 2", 52),
        ("010", 8),
        ("0x1f", 31),
        ("2#101", 5),
        ("1 ? 2 : 3", 2),
        ("0 && x++", 0),  # the right side of && is not evaluated: x stays unset
        ("i=0, i<3", 1),
        ("1+2*3-4/2", 5),
        ("~0", -1),
        ("-7 % 3", -1),
        ("2**63", -(2**63)),  # 64 bits, wrapped
        ("E+1", 1),  # an empty variable is 0
    ],
)
def test_arithmetic(expression: str, value: int) -> None:
    names = {"N": "13", "E": ""}
    assert arith.evaluate(expression, lambda n: names.get(n, ""), lambda n, v: None) == value


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ("O + 1", "08 is not a number bash reads (octal digits are 0 to 7)"),
        ("V + 1", "V is 'a.b', not a decimal integer"),
        ("N / 0", "a division by zero"),
        ("(1", "expected ')'"),
        ("(" * 50 + "1" + ")" * 50, "arithmetic nested more than 40 deep"),
        ("1" + "+1" * 600, "an expression longer than 1,000 characters"),
    ],
)
def test_arithmetic_not_computed(expression: str, why: str) -> None:
    names = {"O": "08", "V": "a.b", "N": "13"}
    with pytest.raises(arith.Failed, match=why.replace("(", r"\(").replace(")", r"\)")):
        arith.evaluate(expression, lambda n: names.get(n, ""), lambda n, v: None)


@pytest.mark.parametrize("pattern", ["u.c", "^u.c", "u.c$", "^u.c$", "..", "22.04", "-.-", "^.$"])
def test_a_pattern_of_characters_and_dots_matches_where_the_general_engine_does(
    pattern: str,
) -> None:
    """Plain characters and ``.`` are searched the quick way (every match has one length,
    charged as a literal is): each line's first match, and its slot ends, are the general
    engine's, from every position."""
    from stagegate.ci.shell import regex

    lines = ["", "u", "uxc", "auxc", "uxcuyc", "ubuntu-22.04", "a-b-c", "x", "u\\c", "uc"]
    quick = regex.Matcher(regex.parse(pattern, False), False, Budget(10**6).charge)
    general = regex.Matcher(regex.parse(pattern, False), False, Budget(10**6).charge)
    assert quick.dotted is not None
    general.dotted = None
    for line in lines:
        assert quick.exists(line) == general.exists(line), (pattern, line)
        for pos in range(len(line) + 1):
            assert quick.search(line, pos) == general.search(line, pos), (pattern, line, pos)


def test_a_sed_address_of_alternatives_on_a_generated_matrix_stays_within_the_budget() -> None:
    """lxml's matrix generator (148248c): `sed -e '/aarch64\\|armv7l/s|ubuntu-22.04|...|'`
    over a hundred lines of JSON rows; `s` of a dotted pattern cost a dozen passes over
    each line it changed, and the script passed its work budget."""
    rows = [
        f'{{"only": "cp3{v}-{k}_{a}", "os": "ubuntu-22.04"}}'
        for v in range(8, 15)
        for k in ("manylinux", "musllinux")
        for a in ("x86_64", "i686", "aarch64", "ppc64le", "s390x", "armv7l", "riscv64")
    ]
    budget = Budget(50_000)
    out = textops.sed(
        ["-e", "/aarch64\\|armv7l/s|ubuntu-22.04|ubuntu-22.04-arm|"],
        "\n".join(rows) + "\n",
        budget.charge,
    )
    assert out.count("ubuntu-22.04-arm") == 28
