"""The version of an artifact action pinned to a bare commit (jawah/charset_normalizer pins
every action so, dependabot bumping the commit): a release commit of the action names its
version (`ci/pins.py`); any other commit, only a pin comment does."""

from __future__ import annotations

import re

from stagegate.ci.model import action_ref
from stagegate.ci.pins import RELEASES, pin_version
from stagegate.errors import Loc

AT = Loc("x.yml", 1, 1)
V3_1_2 = "0b7f8abb1508181956e8e162db84b466c27e18ce"  # actions/upload-artifact v3.1.2
V4_1_7 = "65a9edc5881444af0b9093a5e628f2fe47ea3b2e"  # actions/download-artifact v4.1.7


def test_a_release_commit_names_its_version() -> None:
    uses = f"actions/upload-artifact@{V3_1_2}"
    ref = action_ref(uses, f"      - uses: {uses}", AT)
    assert (ref.pinned, ref.version, ref.major) == (True, (3, 1, 2), 3)
    down = f"actions/download-artifact@{V4_1_7}"
    assert action_ref(down, down, AT).version == (4, 1, 7)


def test_the_commit_is_what_runs_not_a_stale_comment() -> None:
    uses = f"actions/upload-artifact@{V3_1_2}"
    assert action_ref(uses, f"uses: {uses} # v4", AT).version == (3, 1, 2)


def test_another_commit_is_read_from_its_comment_or_not_at_all() -> None:
    """The control: a commit that is no release (or of another action) keeps the old
    reading: its comment, else unknown (reported where it matters)."""
    other = "043fb46d1a93c77aae656e7c1c64a875d1fc6a0a"  # v7.0.1: newer than the table
    uses = f"actions/upload-artifact@{other}"
    assert action_ref(uses, uses, AT).version is None
    assert action_ref(uses, f"uses: {uses} # v7.0.1", AT).version == (7, 0, 1)
    fork = f"someone/upload-artifact@{V3_1_2}"
    assert action_ref(fork, fork, AT).version is None
    assert pin_version("actions/download-artifact", V3_1_2) is None


def test_the_table_holds_full_commit_ids_and_versions() -> None:
    for family, commits in RELEASES.items():
        assert family in ("actions/upload-artifact", "actions/download-artifact")
        for commit, version in commits.items():
            assert re.fullmatch("[0-9a-f]{40}", commit), commit
            assert version and all(isinstance(p, int) for p in version)
