"""Exact language decisions, checked against the SPEC, `re` and `fnmatch` themselves."""

from __future__ import annotations

import fnmatch
import itertools
import random
import re
import warnings
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from stagegate.engine.globs import (
    Glob,
    Language,
    Lit,
    PatternError,
    Piece,
    Rx,
    budget,
    check_glob,
    check_regex,
    intersects,
    language,
    literal_prefix,
    matches,
    witness,
)

SHA = Rx("[0-9a-f]{40}")


def lang(*pieces: Piece) -> Language:
    return language(pieces)


def reference(pieces: Sequence[Piece]) -> re.Pattern[str]:
    """The pieces as one Python regex, built from `re.escape` and `fnmatch.translate`."""
    parts = []
    for piece in pieces:
        if isinstance(piece, Lit):
            parts.append(re.escape(piece.text))
        elif isinstance(piece, Glob):
            translated = fnmatch.translate(piece.text)
            assert translated.endswith(r"\Z")
            parts.append(translated[:-2])
        else:
            parts.append(f"(?:{piece.pattern})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile("".join(parts), re.ASCII)


def strings(alphabet: str, max_len: int) -> list[str]:
    return [
        "".join(chars)
        for n in range(max_len + 1)
        for chars in itertools.product(alphabet, repeat=n)
    ]


# ------------------------------------------------------------------ the SPEC's examples


def test_trailing_class_selects_sha_row_but_not_tests_row() -> None:
    glob = lang(Glob("*[0-9a-f]"))
    assert intersects(glob, lang(Lit("x-"), SHA))
    assert not intersects(glob, lang(Lit("x-"), SHA, Lit("-tests")))


def test_prefix_glob_selects_cuda12_row() -> None:
    row = lang(Lit("cuda-bindings-python312-cuda12.9.1-linux-64-"), SHA)
    found = witness(lang(Glob("cuda-bindings*")), row)
    assert found == "cuda-bindings-python312-cuda12.9.1-linux-64-" + "0" * 40


def test_cuda13_glob_does_not_select_cuda12_row() -> None:
    row = lang(Lit("cuda-bindings-python312-cuda12.9.1-linux-64-"), SHA)
    assert not intersects(lang(Glob("cuda-bindings-python*-cuda13.4.1-*")), row)
    row13 = lang(Lit("cuda-bindings-python312-cuda13.4.1-linux-64-"), SHA)
    assert intersects(lang(Glob("cuda-bindings-python*-cuda13.4.1-*")), row13)


def test_sha_and_tests_templates_never_collide() -> None:
    assert witness(lang(Lit("a-"), SHA), lang(Lit("a-"), SHA, Lit("-tests"))) is None


def test_open_template_collides_with_literal_and_says_how() -> None:
    assert witness(lang(Lit("a-"), Rx(".*")), lang(Lit("a-b"))) == "a-b"


def test_consumer_select_with_open_axis_placeholder() -> None:
    select = lang(Glob("cuda-bindings-python312-cuda12*-linux-64*"), Rx("[0-9a-f]"))
    produced = lang(Lit("cuda-bindings-python312-cuda12.9.1-linux-64-"), SHA)
    tests = lang(Lit("cuda-bindings-python312-cuda12.9.1-linux-64-"), SHA, Lit("-tests"))
    assert intersects(select, produced)
    assert not intersects(select, tests)


def test_exclude_globs_remove_what_they_match() -> None:
    everything = lang(Glob("cuda-bindings*"))
    tests = lang(Lit("cuda-bindings-python312-cuda13.4.1-linux-64-"), SHA, Lit("-tests"))
    wheel = lang(Lit("cuda-bindings-python312-cuda13.4.1-linux-64-"), SHA)
    excluded = [lang(Glob("*-tests")), lang(Glob("*-docs"))]
    assert not intersects(everything, tests, excluding=excluded)
    assert intersects(everything, wheel, excluding=excluded)


def test_exclusion_leaves_only_part_of_an_open_axis() -> None:
    row = lang(Lit("x-"), SHA)
    found = witness(row, excluding=[lang(Glob("x-0*")), lang(Glob("x-a*"))])
    assert found is not None
    assert found.startswith("x-") and found[2] not in "0a" and len(found) == 42
    assert matches(row, found)


# ------------------------------------------------------------------ witnesses


def test_witness_is_shortest_and_readable() -> None:
    assert witness(lang(Rx("[0-9a-f]{3}"))) == "000"
    assert witness(lang(Rx("[b-z]+"))) == "b"
    assert witness(lang(Rx("x*"))) == ""
    assert witness(lang(Rx("[^\x00-\x7f]"))) == "\x80"
    assert witness(lang(Rx("é|aaaa"))) == "é"
    assert witness(lang(Glob("*x")), lang(Glob("x*"))) == "x"


def test_witness_of_nothing_and_of_everything() -> None:
    assert witness(lang(Glob("[z-a]"))) is None
    assert witness(lang(Rx("[^\\x00-\\U0010ffff]"))) is None
    assert witness() == ""
    assert witness(excluding=[lang(Glob("?*"))]) == ""
    assert witness(excluding=[lang(Glob(""))]) == "0"
    assert witness(lang(Glob("*")), excluding=[lang(Glob("*"))]) is None


def test_a_language_excluding_itself_is_empty() -> None:
    row = lang(Lit("a-"), SHA)
    assert witness(row, excluding=[row]) is None


def test_whole_unicode_alphabet() -> None:
    top = lang(Rx("[\\U0010ffff]"))
    assert matches(top, "\U0010ffff")
    assert witness(top) == "\U0010ffff"
    assert witness(lang(Glob("?")), excluding=[lang(Rx("[^\\U0010ffff]"))]) == "\U0010ffff"


# ------------------------------------------------------------------ fnmatch semantics

GLOB_EDGE_CASES = [
    "[",
    "[a",
    "[!",
    "[]",
    "[!]",
    "[]]",
    "[!]]",
    "[]a]",
    "[]-a]",
    "[z-a]",
    "[!z-a]",
    "[b-az-a]",
    "[a-]",
    "[!a-]",
    "[-a]",
    "[!-a]",
    "[--0]",
    "[!--0]",
    "[a-c-e]",
    "[^a]",
    "[[a]",
    "[a&&b]",
    "[a||b]",
    "[a~~b]",
    "[a--b]",
    "[\\]",
    "[\\-a]",
    "[a\\-z]",
    "a\\b",
    "\\*",
    "\\?",
    "*",
    "?",
    "*a*b",
    "a*b*c",
    "[!a-c]",
    "a/b*",
    "*/*",
    "**",
    "*?*",
]
GLOB_PROBES = [
    *strings("ab-", 2),
    *"[]!^&|~\\/.0zA\n\x00\x7f",
    "a\\b",
    "\\*",
    "\\x",
    "[]",
    "[!]",
    "[]]",
    "[!]]",
    "a/b/c",
    "a\nb",
    "abc",
    "axbxc",
    "A",
    "é",
]


@pytest.mark.parametrize("pattern", GLOB_EDGE_CASES)
def test_glob_matches_like_fnmatchcase(pattern: str) -> None:
    compiled = lang(Glob(pattern))
    for probe in GLOB_PROBES:
        assert matches(compiled, probe) == fnmatch.fnmatchcase(probe, pattern), probe


def test_globs_are_case_sensitive_and_star_crosses_slashes() -> None:
    assert not matches(lang(Glob("Cuda*")), "cuda-x")
    assert matches(lang(Glob("a*z")), "a/b/z")
    assert matches(lang(Glob("a?z")), "a\nz")


# ------------------------------------------------------------------ regex semantics

REGEX_CASES = [
    "^abc$",
    "\\Aabc\\Z",
    "a|b$",
    "^|a",
    ".",
    "\\d+",
    "\\D",
    "\\w+",
    "\\W",
    "\\s",
    "\\S",
    "[\\w-]+",
    "[^\\d]",
    "[\\b]",
    "\\t\\n\\r\\f\\v\\a",
    "\\x41\\u00e9\\U0001F600",
    "\\.\\*\\-\\/\\ ",
    "a{",
    "a{x}",
    "a{}",
    "a{,}",
    "a{,2}",
    "a{2,}",
    "a{1 }",
    "a{1,2",
    "{a",
    "}",
    "]",
    "[]a]",
    "[^]a]",
    "[a-]",
    "[-a]",
    "[a\\-z]",
    "[\\]]",
    "[[]",
    "()",
    "(|)",
    "a||b",
    "(?:)*",
    "()*",
    "(a*)*",
    "(?:a|b)*c",
    "(?P<name>a|b)+",
    "a*?b+?c??d{1,2}?",
    "(?:ab){2,3}",
    "a{0}b{0,0}",
    "é+",
]
REGEX_PROBES = [
    *strings("ab", 3),
    "",
    "abc",
    "abcd",
    "0",
    "01",
    "٣",
    "_",
    "é",
    "éé",
    " ",
    "\x1c",
    "\n",
    "\x08",
    "\t\n\r\f\v\x07",
    "Aé\U0001f600",
    ".*-/ ",
    "a{",
    "a{x}",
    "a{}",
    "a{1 }",
    "a{1,2",
    "{a",
    "}",
    "]",
    "-",
    "[",
    "c",
    "bc",
    "ababc",
    "abab",
    "ababab",
    "abcdd",
    "aabbd",
]


@pytest.mark.parametrize("pattern", REGEX_CASES)
def test_regex_matches_like_re_fullmatch_ascii(pattern: str) -> None:
    check_regex(pattern)
    compiled = lang(Rx(pattern))
    expected = reference([Rx(pattern)])
    for probe in REGEX_PROBES:
        assert matches(compiled, probe) == bool(expected.fullmatch(probe)), probe


def test_dot_excludes_newline_but_glob_question_mark_does_not() -> None:
    assert not matches(lang(Rx(".")), "\n")
    assert matches(lang(Glob("?")), "\n")


# ------------------------------------------------------------------ errors

UNSUPPORTED = [
    ("(a)\\1", 3, "backreferences"),
    ("(?P<x>a)(?P=x)", 8, "backreferences"),
    ("a(?=b)", 1, "lookaround"),
    ("a(?!b)", 1, "lookaround"),
    ("(?<=a)b", 0, "lookaround"),
    ("(?<!a)b", 0, "lookaround"),
    ("(?i)abc", 0, "inline flags"),
    ("a(?i:b)", 1, "inline flags"),
    ("a\\bc", 1, "word boundaries"),
    ("a\\B", 1, "word boundaries"),
    ("(a)?(?(1)b|c)", 4, "conditional"),
    ("a*+", 2, "possessive"),
    ("a{2}+", 4, "possessive"),
    ("(?>a)", 0, "atomic"),
    ("a(?#note)", 1, "comments"),
    ("a^b", 1, "anchors"),
    ("a$b", 1, "anchors"),
    ("(^a)", 1, "anchors"),
    ("(a$)", 2, "anchors"),
    ("a\\Zb", 1, "anchors"),
    ("a\\A", 1, "anchors"),
    ("\\0", 0, "octal"),
    ("[\\1]", 1, "octal"),
    ("\\N{EM DASH}", 0, "named escapes"),
]

INVALID = [
    ("*a", 0, "nothing to repeat"),
    ("a|+", 2, "nothing to repeat"),
    ("^*", 1, "nothing to repeat"),
    ("a**", 2, "multiple repeat"),
    ("a{2}*", 4, "multiple repeat"),
    ("a???", 3, "multiple repeat"),
    ("[abc", 0, "unterminated character set"),
    ("x[]", 1, "unterminated character set"),
    ("ab(c", 2, "missing ')'"),
    ("ab)c", 2, "unbalanced parenthesis"),
    ("a\\", 1, "bad escape"),
    ("\\q", 0, "bad escape"),
    ("[\\A]", 1, "bad escape"),
    ("\\x4", 0, "incomplete escape"),
    ("\\u12", 0, "incomplete escape"),
    ("\\U00110000", 0, "no such code point"),
    ("[z-a]", 1, "bad character range"),
    ("[\\d-z]", 1, "bad character range"),
    ("a{3,2}", 1, "min repeat greater than max repeat"),
    ("(?P<1a>x)", 4, "bad character in group name"),
    ("(?P<>x)", 4, "missing group name"),
    ("(?P<a", 4, "unterminated group name"),
    ("(?P<a>x)(?P<a>y)", 12, "redefinition"),
    ("(?", 0, "unexpected end"),
    ("(?Px)", 0, "unknown extension"),
    ("(?<x>a)", 0, "unknown extension"),
]


@pytest.mark.parametrize(("pattern", "column", "words"), UNSUPPORTED + INVALID)
def test_rejected_regex_points_at_the_problem(pattern: str, column: int, words: str) -> None:
    with pytest.raises(PatternError) as caught:
        check_regex(pattern)
    assert words in caught.value.message
    assert caught.value.column == column
    assert str(caught.value) == caught.value.message


@pytest.mark.parametrize(("pattern", "_column", "_words"), INVALID)
def test_what_we_call_invalid_re_calls_invalid(pattern: str, _column: int, _words: str) -> None:
    with pytest.raises(re.error):
        re.compile(pattern)


def test_language_reports_bad_regex_piece() -> None:
    with pytest.raises(PatternError) as caught:
        lang(Lit("x-"), Rx("[0-9a-f]{40}(?=x)"))
    assert caught.value.column == 12


def test_limits() -> None:
    with pytest.raises(PatternError, match="over the limit of 1000") as caught:
        check_regex("a" * 1001)
    assert caught.value.column == 1000
    check_regex("a" * 1000)
    with pytest.raises(PatternError, match="over the limit of 1000") as caught:
        check_glob("*" * 1001)
    assert caught.value.column == 1000
    with pytest.raises(PatternError, match="repetition count 1001") as caught:
        check_regex("xa{1001}")
    assert caught.value.column == 2
    with pytest.raises(PatternError, match="too complex") as caught:
        check_regex("(a{100}){100}")
    assert caught.value.column == 8
    with pytest.raises(PatternError, match="too complex") as caught:
        check_regex("b" + "a{1000}" * 5)  # the fifth `{1000}` tips it over
    assert caught.value.column == 30
    with pytest.raises(PatternError, match="nested") as caught:
        check_regex("(" * 101 + ")" * 101)
    assert caught.value.column == 100
    check_regex("(" * 100 + ")" * 100)
    check_regex("[0-9a-f]{1000}(?:ab){1000}")


def test_undecidably_large_question_is_refused_not_hung() -> None:
    hard = lang(Glob("*a" + "?" * 24))
    with pytest.raises(PatternError, match="too complex to decide"):
        intersects(hard, lang(Glob("*b")))
    with pytest.raises(PatternError, match="too complex to decide"):
        intersects(hard, lang(Glob("*b")))  # a cached refusal is still a refusal
    assert matches(hard, "a" * 25)  # membership still works without the full automaton


def test_membership_survives_an_automaton_too_large_to_build() -> None:
    pattern = "*c" + "?" * 24
    rng = random.Random(0)
    name = "".join(rng.choice("cd") for _ in range(25_000))
    hard = lang(Glob(pattern))
    assert matches(hard, name) == fnmatch.fnmatchcase(name, pattern)
    assert matches(hard, name + "c" + "d" * 24)
    assert not matches(hard, name + "c" + "d" * 25)


def test_accepted_globs() -> None:
    for text in GLOB_EDGE_CASES:
        check_glob(text)


# ------------------------------------------------------------------ API shape


def test_language_is_cached_and_hashed_by_pieces() -> None:
    first = language([Lit("a-"), SHA])
    assert language((Lit("a-"), SHA)) is first
    again = Language((Lit("a-"), SHA))
    assert again == first and hash(again) == hash(first)
    assert again != language([Lit("a-"), SHA, Lit("-tests")])
    assert len({first, again}) == 1


def test_literal_prefix() -> None:
    assert literal_prefix([Lit("cuda-bindings-python"), Rx("31[0-4]t?"), Lit("-")]) == (
        "cuda-bindings-python31"
    )
    assert literal_prefix([Glob("cuda-bindings*")]) == "cuda-bindings"
    assert literal_prefix([Glob("[c]u[!x]")]) == "cu"
    assert literal_prefix([Glob("[ab")]) == "[ab"
    assert literal_prefix([Rx("^(ab|ac)d$")]) == "a"
    assert literal_prefix([Rx("a{3}b*")]) == "aaa"
    assert literal_prefix([Rx("a|ab")]) == "a"
    assert literal_prefix([Glob("*a")]) == ""
    assert literal_prefix([Glob("[z-a]")]) == ""


def test_many_rows_pairwise() -> None:
    """The `unique-artifacts` shape: every pair of rows of two templates."""
    rows = [
        lang(Lit(f"cuda-bindings-python{py}-cuda13.4.1-{platform}-"), SHA, Lit(suffix))
        for py in ("310", "311", "312", "313", "314", "314t")
        for platform in ("linux-64", "linux-aarch64", "win-64")
        for suffix in ("", "-tests")
    ]
    clashes = [(a, b) for a, b in itertools.combinations(rows, 2) if intersects(a, b)]
    assert clashes == []
    assert intersects(rows[0], lang(Glob("*python310*linux-64-*[0-9a-f]")))


# ------------------------------------------------------------------ literal text first

ROW = Lit("pkg-python310-linux-64-")


@pytest.mark.parametrize(
    ("glob", "wheel", "tests"),
    [
        ("pkg-python3[0-9][!a-z]-*", True, True),
        ("pkg-python3[!1]*", False, False),
        ("pkg-python?1?-linux-64-[0-9a-f]*", True, True),
        ("pkg-*-linux-64-*[!0-9a-f]", False, True),
        ("pkg-python310-linux-64", False, False),
        ("pkg-python310-linux-64-[", False, False),
        ("*-64-*", True, True),
        ("pkg-*-*-*[0-9]", True, False),
        ("pkg-python310-linux-64-*-tests", False, True),
        ("pkg-python310-linux-64-????????????????????????????????????????", True, False),
        ("pkg-python310-linux-64-???????????????????????????????????????", False, False),
    ],
)
def test_derivative_through_globs(glob: str, wheel: bool, tests: bool) -> None:
    """The glob reads the row's literal text first (classes, negations, `*`), then the
    rest is searched; a witness is the row's text followed by what the search found."""
    for suffix, expected in (((), wheel), ((Lit("-tests"),), tests)):
        row = (ROW, SHA, *suffix)
        found = witness(lang(Glob(glob)), lang(*row))
        assert (found is not None) == expected, suffix
        if found is not None:
            assert found.startswith(ROW.text)
            assert fnmatch.fnmatchcase(found, glob)
            assert reference(row).fullmatch(found)


def test_rows_of_one_template_get_their_own_answers() -> None:
    """Rows whose derivatives meet share one search, yet each row is answered for itself."""
    glob = lang(Glob("pkg-python31[0-2]*-linux-*[0-9a-f]"))
    excluded = [lang(Glob("*-tests"))]
    picked = set()
    for py in ("314t", "310", "311", "312", "313", "314"):
        for platform in ("win-64", "linux-64", "linux-aarch64"):
            for suffix in ("", "-tests", "-docs"):
                row = lang(Lit(f"pkg-python{py}-{platform}-"), SHA, Lit(suffix))
                if intersects(glob, row, excluding=excluded):
                    picked.add((py, platform, suffix))
    assert picked == {
        (py, platform, "")
        for py in ("310", "311", "312")
        for platform in ("linux-64", "linux-aarch64")
    }


def test_rows_of_one_template_share_the_work() -> None:
    """600 rows of one shape asked against their globs fit a budget that one automaton
    and one search per row would exceed many times over."""
    excluded = [lang(Glob("*-tests"))]
    with budget(30_000):
        for i in range(100):
            glob = lang(Glob(f"share{i}-python*"))
            for py in ("310", "311", "312", "313", "314", "314t"):
                row = lang(Lit(f"share{i}-python{py}-linux-64-"), SHA, Lit("-tests"))
                assert not intersects(glob, row, excluding=excluded)
                assert intersects(glob, row)


def test_excluded_languages_read_the_common_text_too() -> None:
    row = lang(Lit("pkg1-"), SHA)
    assert witness(row, excluding=[lang(Glob("pkg*"))]) is None  # `*` swallows the rest
    assert witness(row, excluding=[lang(Glob("b*"))]) == "pkg1-" + "0" * 40  # disagrees
    assert witness(row, excluding=[lang(Glob("pkg1-*0"))]) == "pkg1-" + "0" * 39 + "a"
    assert witness(row, excluding=[lang(Glob("pkg1-0*")), lang(Glob("pkg1-?0*"))]) == (
        "pkg1-aa" + "0" * 38
    )
    # an excluded text longer than every positive's goes on past the common text
    assert witness(lang(Glob("a*")), excluding=[lang(Lit("a"))]) == "a0"
    assert witness(lang(Glob("ab?")), excluding=[lang(Lit("abc")), lang(Lit("ab0"))]) == "aba"
    assert witness(lang(Glob("ab?")), excluding=[lang(Lit("ab"), Glob("[!z]"))]) == "abz"
    # the same language spelled two ways excludes itself
    assert not intersects(lang(Lit("a-b"), Glob("*")), excluding=[lang(Lit("a-"), Glob("b*"))])


def test_languages_with_no_literal_text_in_front() -> None:
    assert witness(lang(SHA, Lit("-x")), lang(Glob("*[!0-9]-x"))) == "0" * 39 + "a-x"
    assert not intersects(lang(SHA, Lit("-x")), lang(Glob("*[!0-9a-f]-x")))
    assert literal_prefix([Rx("ab(c|d)"), Lit("-")]) == "ab"
    assert witness(lang(Rx("ab(c|d)"), Lit("-")), lang(Glob("abd*"))) == "abd-"
    assert witness(lang(Rx("ab(c|d)"), Lit("-")), lang(Glob("ab?"))) is None
    assert witness(lang(Glob("*b")), lang(Rx("a+b?"))) == "ab"


def test_literal_only_languages() -> None:
    text = lang(Lit("a-"), Lit("b"))
    assert literal_prefix(text.pieces) == "a-b"
    assert matches(text, "a-b") and not matches(text, "a-") and not matches(text, "a-bb")
    assert witness(text) == "a-b"
    assert witness(text, lang(Glob("a-?"))) == "a-b"
    assert witness(text, lang(Lit("a-b"))) == "a-b"
    assert witness(text, lang(Lit("a-"), Glob("b"))) == "a-b"
    assert witness(text, lang(Glob("a-[!b]"))) is None
    assert witness(text, lang(Lit("a-bc"))) is None
    assert witness(text, lang(Glob("a-b?*"))) is None
    assert witness(text, excluding=[lang(Glob("*b"))]) is None
    assert witness(lang(Lit("")), lang(Glob("*"))) == ""


def test_witness_starts_with_the_longest_literal_text() -> None:
    row = lang(Lit("cuda-bindings-python312-"), SHA, Lit("-tests"))
    assert witness(lang(Glob("cuda-*")), row) == "cuda-bindings-python312-" + "0" * 40 + "-tests"
    assert witness(row, lang(Glob("cuda-*"))) == witness(lang(Glob("cuda-*")), row)
    assert witness(lang(Glob("cuda-*-tests")), row, lang(Glob("*-python3*"))) == (
        "cuda-bindings-python312-" + "0" * 40 + "-tests"
    )


# ------------------------------------------------------------------ brute force

SMALL = "ab-"
PROBE_STRINGS = strings(SMALL, 5) + strings("ab-0\n_ [", 3)

regex_leaves = st.sampled_from(
    [
        "a",
        "b",
        "-",
        ".",
        "\\d",
        "\\w",
        "\\s",
        "\\W",
        "\\D",
        "\\S",
        "[ab]",
        "[^a]",
        "[a-b]",
        "[-a]",
        "[a-]",
        "[^-]",
        "[\\w-]",
        "[]a]",
        "[^]a]",
        "[\\n-]",
        "\\x61",
        "\\-",
        "\\n",
        "",
        "()",
        "a{",
        "}",
        "]",
        "{a}",
    ]
)
quantifiers = st.sampled_from(
    ["*", "+", "?", "{2}", "{0,2}", "{1,}", "{,2}", "{,}", "{0}", "*?", "+?", "??", "{1,2}?"]
)


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, children).map("".join),
        st.tuples(children, children).map("|".join),
        st.tuples(children, quantifiers).map(lambda t: f"(?:{t[0]}){t[1]}"),
        st.tuples(children, quantifiers).map(lambda t: f"({t[0]}){t[1]}"),
        children.map(lambda c: f"({c})"),
    )


regexes = st.recursive(regex_leaves, _extend, max_leaves=6)
globs = st.text(alphabet="ab-[]!*?\\^", max_size=8)
pieces = st.one_of(
    st.text(alphabet=SMALL, max_size=3).map(Lit),
    globs.map(Glob),
    regexes.map(Rx),
)
piece_lists = st.lists(pieces, min_size=1, max_size=3)
FAST = settings(
    max_examples=examples(50, long=1000),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@FAST
@given(regexes)
def test_regex_membership_agrees_with_re(pattern: str) -> None:
    compiled = lang(Rx(pattern))
    expected = reference([Rx(pattern)])
    for probe in PROBE_STRINGS:
        assert matches(compiled, probe) == bool(expected.fullmatch(probe)), probe


@FAST
@given(globs)
def test_glob_membership_agrees_with_fnmatch(pattern: str) -> None:
    compiled = lang(Glob(pattern))
    for probe in strings("ab-[]!\\^", 3) + strings("ab", 5):
        assert matches(compiled, probe) == fnmatch.fnmatchcase(probe, pattern), probe


@settings(max_examples=examples(100, long=2000), deadline=None)
@given(st.text(alphabet="ab-()[]{}|*+?^$\\.,0123:P<>=!dwsxZAb#", max_size=12))
def test_arbitrary_regex_text_is_rejected_or_agrees_with_re(pattern: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            expected = re.compile(pattern, re.ASCII)
        except (re.error, OverflowError):
            with pytest.raises(PatternError):
                check_regex(pattern)
            return
    try:
        compiled = lang(Rx(pattern))
    except PatternError as err:
        assert any(w in err.message for w in ("not supported", "anchors", "limit")), err
        return
    for probe in [*strings("ab-", 4), "0", "_", "\n", "{", "}", "]", "[", "a{0}"]:
        assert matches(compiled, probe) == bool(expected.fullmatch(probe)), probe


@FAST
@given(piece_lists)
def test_concatenation_membership_agrees_with_reference(parts: list[Piece]) -> None:
    compiled = language(parts)
    expected = reference(parts)
    for probe in strings(SMALL, 4):
        assert matches(compiled, probe) == bool(expected.fullmatch(probe)), probe


@settings(
    max_examples=examples(75, long=1500),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.lists(piece_lists, min_size=1, max_size=3),
    st.lists(piece_lists, max_size=2),
)
def test_witness_agrees_with_brute_force(
    positive: list[list[Piece]], excluded: list[list[Piece]]
) -> None:
    langs = [language(p) for p in positive]
    exclusions = [language(p) for p in excluded]
    pos_ref = [reference(p) for p in positive]
    neg_ref = [reference(p) for p in excluded]

    def selected(s: str) -> bool:
        return all(r.fullmatch(s) for r in pos_ref) and not any(r.fullmatch(s) for r in neg_ref)

    found = witness(*langs, excluding=exclusions)
    assert intersects(*langs, excluding=exclusions) == (found is not None)
    brute = [s for s in strings(SMALL, 4) if selected(s)]
    if found is None:
        assert brute == []
    else:
        assert selected(found), found
        assert all(len(s) >= len(found) for s in brute), (found, brute[:3])
        assert literal_prefix(positive[0]) == "" or found.startswith(literal_prefix(positive[0]))


fronts = st.lists(st.tuples(st.text(alphabet=SMALL, max_size=6), piece_lists), max_size=3)


@settings(
    max_examples=examples(50, long=1000),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(fronts.filter(bool), fronts)
def test_witness_after_literal_text_agrees_with_brute_force(
    positive: list[tuple[str, list[Piece]]], excluded: list[tuple[str, list[Piece]]]
) -> None:
    """Languages with literal text in front, as rows are: probes start with that text."""
    pos = [[Lit(text), *rest] for text, rest in positive]
    neg = [[Lit(text), *rest] for text, rest in excluded]
    pos_ref = [reference(p) for p in pos]
    neg_ref = [reference(p) for p in neg]

    def selected(s: str) -> bool:
        return all(r.fullmatch(s) for r in pos_ref) and not any(r.fullmatch(s) for r in neg_ref)

    found = witness(*(language(p) for p in pos), excluding=[language(p) for p in neg])
    head = max((text for text, _ in positive), key=len)
    brute = [head + s for s in strings(SMALL, 4) if selected(head + s)]
    if found is None:
        assert brute == []
    else:
        assert selected(found), found
        assert found.startswith(head)
        assert all(len(s) >= len(found) for s in brute), (found, brute[:3])
