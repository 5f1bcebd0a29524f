"""Bash indexed arrays, as the shell reader computes them (each expected value is what
bash prints for the same script)."""

from __future__ import annotations

import pytest
from tests.unit.test_shell import Read, downloads, migration, name_of, read

__all__ = ["migration", "read"]

LOOP = 'for n in {words}; do gh run download -n "$n"; done'


@pytest.mark.parametrize(
    ("script", "words", "names"),
    [
        # one word per element, quoted; the words are expanded as a command's
        ('a=(x "y z" $V)', '"${a[@]}"', ["x", "y z", "p", "q"]),
        ('a=("y z" x)', "${a[@]}", ["y", "z", "x"]),  # unquoted: split again
        ('a=("y z" x)', '"${a[*]}"', ["y z x"]),
        ('a=("y z" x)', "${a[*]}", ["y", "z", "x"]),
        ('a=(x "")', '"${a[@]}"', ["x", ""]),
        ('a=(x "")', "${a[@]}", ["x"]),  # an empty element makes no unquoted word
        ("a=()", '"${a[@]}" z', ["z"]),  # no element, no word
        ("a=(x y)", '"p${a[@]}q"', ["px", "yq"]),  # prefix and suffix on the ends
        ("a=(x)\na+=(y z)", '"${a[@]}"', ["x", "y", "z"]),
        ("a=(x y)\na[1]=w\na[3]=v", '"${a[@]}"', ["x", "w", "v"]),
        ("a=(x y)\na[0]+=w", '"${a[@]}"', ["xw", "y"]),
        ("a=(x y)\na=w", '"${a[@]}"', ["w", "y"]),  # a scalar assignment is element 0
        ("a=(x y)\na[-1]=w", '"${a[@]}"', ["x", "w"]),
        ("i=1\na=(x y z)\na[i+1]=w", '"${a[@]}"', ["x", "y", "w"]),
        ("a=x", '"${a[@]}"', ["x"]),  # a scalar is an array of one
        ("declare -a a\na+=(x)", '"${a[@]}"', ["x"]),
        ("declare -a a=(x y)", '"${a[@]}"', ["x", "y"]),
        ("a=(x {1..2})", '"${a[@]}"', ["x", "1", "2"]),
        ("a=(x dist/*.whl)", '"${a[0]}"', ["x"]),  # before the pattern, known
        ("f() {\n  local -a a=(x y)\n  b=${#a[@]}\n}\nf\na=z", '"$b" "$a"', ["2", "z"]),
        # one value
        ("a=(x y z)", '"${a[1]}" "${a[-1]}" "${a}" "${a[7]}"', ["y", "z", "x", ""]),
        ("a=(x y z)", '"$a"', ["x"]),
        ("a=(x y z)", '"${#a[@]}" "${#a[2]}"', ["3", "1"]),
        ("a=(x y z)", '"${#a[*]}"', ["3"]),
        ('mapfile -t a <<< "$V"', '"${a[@]}"', ["p q"]),
        ("readarray a <<< x", '"${a[@]}"', ["x\n"]),
        ("a=(abc)\nn=${#a}", '"$n"', ["3"]),
        ('a=(x y)\nb="${a[@]}"', '"$b"', ["x y"]),
        ("a[2]=x", '"${#a[@]}" "${a[@]}"', ["1", "x"]),
        ("a=(x)\nunset a", '"${#a[@]}"', ["0"]),
    ],
)
def test_arrays(read: Read, script: str, words: str, names: list[str]) -> None:
    lines = read(f"V='p q'\n{script}\n{LOOP.format(words=words)}")
    assert sorted(name_of(line) for line in downloads(lines)) == sorted(names)
    assert not [line for line in lines if line.startswith("unresolved") and "env.X" not in line]


@pytest.mark.parametrize(
    ("script", "expression", "reason"),
    [
        (
            "a=($(date))",
            "${a[@]}",
            "${a[@]}: how many elements a has is not known: $(date) at "
            ".github/workflows/ci.yml:10 may split into several words ($(date): $(date) runs "
            "a command)",
        ),
        (
            "mapfile -t a < list.txt",
            "${a[@]}",
            "${a[@]}: mapfile reads an input stagegate does not know",
        ),
        (
            "declare -A a\na[k]=x",
            "${a[@]}",
            "${a[@]}: a is an associative array, which stagegate does not compute",
        ),
        ("a=([1]=x)", "${a[@]}", "${a[@]}: an array, which stagegate does not compute"),
        (
            "a=(x y)\nunset 'a[0]'",
            "${a[@]}",
            "${a[@]}: an element of a is unset at .github/workflows/ci.yml:11",
        ),
        (
            "a=(x dist/*.whl)",
            "${#a[@]}",
            "${#a[@]}: a holds dist/*.whl, a pattern whose files stagegate does not know (how "
            "many there are)",
        ),
        (
            "a=(x dist/*.whl y)",
            "${a[2]}",
            "${a[2]}: a holds dist/*.whl, a pattern whose files stagegate does not know (which "
            "element is which)",
        ),
        (
            "a=(dist/*.whl)\na[1]=x",
            "${a[@]}",
            "${a[@]}: a[1] is assigned at .github/workflows/ci.yml:11, where a holds dist/*.whl, "
            "a pattern whose files stagegate does not know (which element is which)",
        ),
        (
            "a=(x)\nfor i in {1..300}; do a+=(abcd); done",  # its elements bounded together
            "${a[@]}",
            "${a[@]}: a value longer than 1,000 characters (no artifact name or glob is that "
            "long); stagegate does not compute it",
        ),
        ("a=(x y)", "${a[@]%y}", "${a[@]%y}: an operator on an array stagegate does not compute"),
        (
            "a=(x y)",
            "${a[$N]}",
            "${a[$N]}: its index $N: it reads $N, which stagegate does not know: $N is set in "
            "no env: of the step, job or workflow, nor earlier in the script; bind env.N",
        ),
    ],
)
def test_arrays_not_computed(read: Read, script: str, expression: str, reason: str) -> None:
    """What is not computed stays unknown at the line that reads it, saying why."""
    lines = read(f'{script}\ngh run download -n "{expression}"')
    last = len(script.split("\n")) + 1
    assert downloads(lines) == [f"{last}: download name <{expression}>"]
    assert f"unresolved {last}: {expression}: {reason}" in lines
