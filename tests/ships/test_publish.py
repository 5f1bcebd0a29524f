"""What a publish step reads and where files land: the path-glob intersection, the
layout of an artifact, and the commands read from `run:` scripts."""

from __future__ import annotations

import pytest

from stagegate.ci.publish import (
    Command,
    Move,
    artifact_files,
    commands,
    glob_covers,
    glob_meets,
    move_of,
    moved,
    read_script,
    segment_meets,
)


@pytest.mark.parametrize(
    ("a", "b", "meet"),
    [
        ("dist/*", "dist/*.whl", True),
        ("dist/*", "dist/wheels-linux/*.whl", False),  # pypa publish reads the top only
        ("dist/**/*", "dist/wheels-linux/*.whl", True),  # softprops recurses with **
        ("*.whl", "*.tar.gz", False),
        ("wheels-*/*", "wheels-linux-64/*.whl", True),
        ("sdist/*.tar.gz", "wheels/*.tar.gz", False),
        ("out/*.whl", "out/*", True),
        ("a[0-9]/*", "a5/x", True),
        ("a[!0-9]/*", "a5/x", False),
    ],
)
def test_glob_meets(a: str, b: str, meet: bool) -> None:
    assert glob_meets(a, b) is meet
    assert glob_meets(b, a) is meet


GLOBS = ["dist/*", "dist/**/*", "*.whl", "a[0-9]/*", "a[!0-9]/x", "**", "a5/x", "dist/a.whl"]


def test_glob_meets_answers_from_its_cache_what_it_computes() -> None:
    """glob_meets and segment_meets keep their answers per pair of texts: asked again,
    in any order, they answer what the uncached search computes."""
    pairs = [(a, b) for a in GLOBS for b in GLOBS]
    computed = {pair: glob_meets.__wrapped__(*pair) for pair in pairs}
    first = {glob: glob.split("/")[0] for glob in GLOBS}  # one segment each, to meet
    last = {glob: glob.split("/")[-1] for glob in GLOBS}
    words = {(a, b): segment_meets.__wrapped__(first[a], last[b]) for a, b in pairs}
    assert {True, False} == set(computed.values()) == set(words.values())
    for _ in range(2):
        for a, b in pairs:
            assert glob_meets(a, b) is computed[a, b], (a, b)
            assert segment_meets(first[a], last[b]) is words[a, b], (a, b)


@pytest.mark.parametrize(
    ("path", "files"),
    [
        ("wheelhouse/*.whl", ("*.whl",)),
        ("./dist/", ("*",)),
        ("dist/pkg-1.0.tar.gz", ("pkg-1.0.tar.gz",)),
        ("dist/*.tar.gz\ndist/*.zip", ("*.tar.gz", "*.zip")),
        ("a/x/*.whl\na/y/*.whl\n!a/y/skip.whl", ("x/*.whl", "y/*.whl")),
    ],
)
def test_artifact_files_are_relative_to_the_paths_folder(path: str, files: tuple[str, ...]) -> None:
    assert artifact_files(path) == files


def test_scripts() -> None:
    script = (
        'gh release upload "$GITHUB_REF_NAME" sbctl-* --clobber\n'
        "python -m twine upload -r testpypi wheels/*.whl sdist/*.tar.gz\n"
        "mv -v wheelhouse/* dist/ && maturin upload --skip-existing wheels-*/*\n"
        "echo twine upload   # a comment: twine upload fake/*\n"
    )
    assert read_script(script, ".") == [
        Command(tool="gh release upload", reads=("sbctl-*",)),
        Command(tool="twine upload", reads=("wheels/*.whl", "sdist/*.tar.gz")),
        Move(copy=False, sources=("wheelhouse/*",), dest="dist"),
        Command(tool="maturin upload", reads=("wheels-*/*",)),
    ]
    assert read_script("twine upload dist/*", "pkg") == [
        Command(tool="twine upload", reads=("pkg/dist/*",))
    ]


def test_a_quoted_string_that_spans_lines_is_one_word() -> None:
    """jcrist/msgspec's `curl ... | jq -r '` program over several lines: `.releases` on a
    line of it is no command (it was read as one named for releasing); what follows the
    closing quote is read as before."""
    script = (
        "v=$(\n"
        "  curl -fsS https://pypi.org/pypi/x/json \\\n"
        "    | jq -r '\n"
        "      .releases\n"
        "      | to_entries\n"
        "    ' \\\n"
        "    | sort -V\n"
        ")\n"
        'echo "notes\n'
        'span two lines"; twine upload dist/*\n'
        "gh release upload v1 out/*\n"
    )
    heads = [words[0] for words in commands(script)]
    assert ".releases" not in heads and "|" not in heads
    assert ["twine", "upload", "dist/*"] in commands(script)
    assert read_script(script, ".") == [
        Command(tool="twine upload", reads=("dist/*",)),
        Command(tool="gh release upload", reads=("out/*",)),
    ]


def test_a_quote_that_never_closes_leaves_the_other_lines_read() -> None:
    """The control: an unclosed quote (bash would refuse the script) skips its own line
    only, as an unparseable line always was."""
    script = "echo 'no end\ntwine upload dist/*\n"
    assert read_script(script, ".") == [Command(tool="twine upload", reads=("dist/*",))]


def test_find_iname_matches_either_case() -> None:
    """pyca/pynacl's `find tmpdist/ -type f -iname 'PyNaCl*' -exec mv {} dist/ \\;`: the
    lower-case files the build writes are moved too; `-name` keeps the case."""
    words = ["find", "tmpdist/", "-type", "f", "-iname", "PyNaCl*"]
    words += ["-exec", "mv", "{}", "dist/", ";"]
    move = move_of(words)
    assert move is not None
    assert move.sources == ("tmpdist/**/[pP][yY][nN][aA][cC][lL]*",)
    # the files reach dist/ (whether every one does is not worked out: a glob's subset)
    assert "dist/pynacl*" in moved("tmpdist/pynacl-sdist/pynacl*", move)
    named = move_of([("-name" if w == "-iname" else w) for w in words])
    assert named is not None and named.sources == ("tmpdist/**/PyNaCl*",)
    assert moved("tmpdist/pynacl-sdist/pynacl*", named) == ["tmpdist/pynacl-sdist/pynacl*"]
    classes = move_of(["find", ".", "-iname", "[a-c]x*.whl", "-exec", "cp", "{}", "up/", ";"])
    assert classes is not None and classes.sources == ("**/[a-c][xX]*.[wW][hH][lL]",)


def test_cargo_publish_packages_the_crate_and_its_dry_run_publishes_nothing() -> None:
    script = "cargo publish --dry-run\ncargo publish -n\ncargo login $TOKEN\ncargo publish\n"
    assert read_script(script, ".") == [Command(tool="cargo publish", reads=())]


def test_a_script_read_again_reads_alike_whatever_the_caller_did_with_the_first_answer() -> None:
    # read once per (script, base) for speed: the answer is a new list each time, and
    # the base is part of what is remembered (control: another base, other paths)
    script = "twine upload dist/*\nmv out/* dist/"
    first = read_script(script, "pkg")
    first.clear()
    assert read_script(script, "pkg") == [
        Command(tool="twine upload", reads=("pkg/dist/*",)),
        Move(copy=False, sources=("pkg/out/*",), dest="pkg/dist"),
    ]
    assert read_script(script, ".") == [
        Command(tool="twine upload", reads=("dist/*",)),
        Move(copy=False, sources=("out/*",), dest="dist"),
    ]


def test_moved() -> None:
    move = Move(copy=False, sources=("wheelhouse/*",), dest="dist")
    assert moved("wheelhouse/*.whl", move) == ["dist/*.whl"]
    assert moved("wheelhouse/wheels-linux/*.whl", move) == ["dist/wheels-linux/*.whl"]
    assert moved("other/*.whl", move) == ["other/*.whl"]
    copy = Move(copy=True, sources=("wheelhouse/*",), dest="dist")
    assert moved("wheelhouse/*.whl", copy) == ["wheelhouse/*.whl", "dist/*.whl"]


@pytest.mark.parametrize(
    ("a", "b", "covers"),
    [
        ("dist/*", "dist/*.whl", True),
        ("dist/*.whl", "dist/*", False),  # other files may be there
        ("*wasm32.whl", "*", False),
        ("*.whl", "*wasm32.whl", True),
        ("dist/**", "dist/wheels-linux/*.whl", True),
        ("dist/*", "dist/**/*.whl", False),
        ("a[0-9]/*", "a5/x", True),
        ("a[0-9]/*", "a[3-5]/x", True),
        ("a[3-5]/*", "a[0-9]/x", False),
        ("a?", "a[0-9]", True),
        ("dist/a.whl", "dist/a.whl", True),
        ("dist/a.whl", "dist/*.whl", False),
    ],
)
def test_glob_covers(a: str, b: str, covers: bool) -> None:
    assert glob_covers(a, b) is covers


def test_a_removal_takes_only_the_files_it_covers() -> None:
    """``rm`` takes a landed glob where it matches every file of it; one that takes some
    of them (``./*wasm32.whl`` of a download's ``./*``) leaves the others where they are."""
    assert (
        moved("dist/*.whl", Move(copy=False, sources=("dist/*.whl",), dest=".", remove=True)) == []
    )
    assert moved("dist/*", Move(copy=False, sources=("dist",), dest=".", remove=True)) == []
    some = Move(copy=False, sources=("dist/*wasm32.whl",), dest=".", remove=True)
    assert moved("dist/*", some) == ["dist/*"]
    assert moved("dist/*.whl", some) == ["dist/*.whl"]
