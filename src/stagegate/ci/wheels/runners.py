"""The platform and architecture a GitHub-hosted runner label stands for.

Labels are GitHub's (docs "GitHub-hosted runners", larger runners included); a label not
listed here (a self-hosted runner, a custom larger-runner name) is not guessed.
"""

from __future__ import annotations

import re

_LABELS: tuple[tuple[str, str, str], ...] = (
    # regex over the label, platform, the architecture as cibuildwheel names it there
    (r"ubuntu-(?:latest|\d\d\.\d\d)-arm", "linux", "aarch64"),
    (r"ubuntu-(?:latest|slim|\d\d\.\d\d)", "linux", "x86_64"),
    (r"macos-1[0-3]|macos-10\.\d+", "macos", "x86_64"),
    (r"macos-1[3-9]-xlarge|macos-latest-xlarge", "macos", "arm64"),
    (r"macos-1[3-9]-large|macos-latest-large|macos-1[5-9]-intel", "macos", "x86_64"),
    (r"macos-(?:1[4-9]|2\d|latest)", "macos", "arm64"),
    (r"windows-(?:latest|20\d\d|11)-arm", "windows", "ARM64"),
    (r"windows-(?:latest|20\d\d)", "windows", "AMD64"),
)
_COMPILED = tuple((re.compile(pattern, re.IGNORECASE), p, a) for pattern, p, a in _LABELS)


def platform_of(label: str) -> tuple[str, str] | str:
    """``(platform, arch)`` of a runner label, or why it is not known."""
    name = label.strip()
    for pattern, platform, arch in _COMPILED:
        if pattern.fullmatch(name):
            return platform, arch
    return (
        f"runs-on {name!r} is not a GitHub-hosted runner label stagegate knows; "
        "its platform and architecture decide the wheels"
    )
