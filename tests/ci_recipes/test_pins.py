"""Every pinned stagegate in the docs, the examples and the hooks file names the release
tag of this version (`v` + pyproject.toml's version), so a copied recipe installs the
stagegate its page describes."""

from __future__ import annotations

import re
import tomllib

from conftest import REPO

PINS = re.compile(r"(?:stagegate@|^\s*#?\s*rev:\s*)(\S+)", re.MULTILINE)
FILES = [
    "README.md",
    ".pre-commit-hooks.yaml",
    *(p.relative_to(REPO).as_posix() for p in sorted((REPO / "docs").rglob("*.md"))),
    *(p.relative_to(REPO).as_posix() for p in sorted((REPO / "docs" / "examples").glob("*.yml"))),
]


def version() -> str:
    with open(REPO / "pyproject.toml", "rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


def pins() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name in FILES:
        text = (REPO / name).read_text(encoding="utf-8")
        found[name] = [m[1].rstrip("`.,)") for m in PINS.finditer(text)]
    return found


def test_every_pin_is_this_versions_tag() -> None:
    tag = f"v{version()}"
    found = pins()
    wrong = {name: [p for p in got if p != tag] for name, got in found.items()}
    assert {name: got for name, got in wrong.items() if got} == {}
    # the recipes that install stagegate are all there
    assert len(found["docs/ci.md"]) >= 9
    assert found["docs/examples/stagegate.yml"] == [tag] * 5  # 4 steps and the comment
    assert found[".pre-commit-hooks.yaml"] == [tag]


def test_the_pattern_finds_a_stale_pin() -> None:
    text = "    rev: v0.0.9\n      - uses: your-org/stagegate@main\n"
    assert [m[1] for m in PINS.finditer(text)] == ["v0.0.9", "main"]
