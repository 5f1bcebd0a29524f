"""What the artifact and publish actions do, by the major version a workflow's ``uses:`` names.

The facts (read from the actions' own sources; the corpus of issue 22 keeps the notes):
upload-artifact v1-v3 merge same-name uploads of one run into one artifact, v4 and later
refuse the second (409) unless ``overwrite: true`` (v4.2), which deletes the first; the two
backends (v1-v3, v4+) cannot see each other's artifacts; download-artifact's ``name:`` is
exact (artifact names cannot hold ``*`` or ``?``), ``pattern:`` a minimatch glob (v4.1);
several artifacts land one folder each unless ``merge-multiple: true``, and from v5 a
download that matches exactly one artifact lands flat too; upload-artifact v7 with
``archive: false`` names the artifact after its one file, ignoring ``name:``.
"""

from __future__ import annotations

import re

UPLOAD = "actions/upload-artifact"
DOWNLOAD = "actions/download-artifact"
MERGE = "actions/upload-artifact/merge"
PYPI = "pypa/gh-action-pypi-publish"
GH_RELEASE = "softprops/action-gh-release"
MATURIN = "pyo3/maturin-action"

NEW_BACKEND = 4
"""The first major version of upload/download-artifact on the new (immutable) backend."""
OVERWRITE_SINCE = 4
SINGLE_FLAT_SINCE = 5
"""download-artifact: from v5 a download matching one artifact extracts it flat."""
ARCHIVE_OPTION_SINCE = 7

INERT = frozenset(
    {
        "actions/checkout",
        "actions/setup-python",
        "actions/setup-node",
        "actions/setup-go",
        "actions/setup-java",
        "actions/cache",
        "actions/github-script",
        "actions/create-release",  # a release from tag_name, release_name, body: no files
        "astral-sh/setup-uv",
        "pypa/cibuildwheel",
        "docker/setup-qemu-action",
        "docker/setup-buildx-action",
        "dtolnay/rust-toolchain",
        "actions-rs/toolchain",
        "conda-incubator/setup-miniconda",
        "mamba-org/setup-micromamba",
        "ilammy/msvc-dev-cmd",
        "edgedb/action-release",  # validate-pr, merge: a release pull request checked, merged, tagged
        "elprans/gh-action-create-release",  # actions/create-release's fork: no files
    }
)
"""Remote actions that neither move artifacts nor publish files: nothing to read."""


def inert(name: str) -> bool:
    """Whether the action ``name`` (``action_of``) is known to move no artifact and publish
    nothing: ``actions/cache/restore`` as ``actions/cache``."""
    return "/".join(name.split("/")[:2]) in INERT


_PIN = re.compile(r"^[0-9a-f]{40}$")
_MAJOR = re.compile(r"^v?(\d+)(?:\.\d+)*$")
_COMMENT = re.compile(r"#\s*v?(\d+)(?:\.\d+)*\b")


def action_of(uses: str) -> str:
    """``owner/name[/sub]`` of a ``uses:`` value, lower case."""
    return uses.split("@", 1)[0].strip().lower()


def major(uses: str, line: str) -> int | None:
    """The major version ``uses:`` names: ``@v4``, ``@v4.1.7``, or a commit pin with its
    version in a comment on the line (``@<sha> # v5.0.0``); None where it says none."""
    ref = uses.partition("@")[2].strip()
    if _PIN.match(ref):
        comment = _COMMENT.search("#" + line.partition("#")[2])
        return int(comment.group(1)) if comment else None
    found = _MAJOR.match(ref)
    return int(found.group(1)) if found else None


def backend(version: int | None) -> str | None:
    """``v3`` (the old artifact backend, v1-v3) or ``v4`` (v4 and later); None: unknown."""
    if version is None:
        return None
    return "v4" if version >= NEW_BACKEND else "v3"
