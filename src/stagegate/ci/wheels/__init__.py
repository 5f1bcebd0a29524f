"""What ships, down to the wheels: the build identifiers (``cp312-manylinux_x86_64``,
``cp313t-macosx_arm64``) each build step makes, from the build tool's own settings.

- ``model``: the records (``Setting``, ``Word``, ``BuildStep``, ``Files``, ``Wheels``);
- ``steps``: which steps build wheels, and the tool's pinned version;
- ``cibw`` (with ``table``, ``patterns``, ``project``, ``runners``, ``tool``): cibuildwheel;
- ``maturin``: maturin;
- ``compare``: two commits' wheels for one upload context, and the settings responsible.

``shipped`` is the one entry point for a step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stagegate.ci.wheels.model import BuildStep, Files, Wheels


def shipped(step: BuildStep, files: Files, *, tool: bool = True) -> Wheels:
    """The identifiers ``step`` builds (or why they cannot be known). ``files``: the
    repository at the commit read; ``tool``: ask the installed cibuildwheel where it is
    the pinned release (``stagegate-ci[wheels]``)."""
    from stagegate.ci.wheels import cibw, maturin
    from stagegate.ci.wheels import tool as installed
    from stagegate.ci.wheels.model import CIBUILDWHEEL

    if step.tool == CIBUILDWHEEL:
        return cibw.shipped(step, files, ask=installed.select if tool else None)
    return maturin.shipped(step, files)


def file_names(step: BuildStep, files: Files) -> frozenset[str] | None:
    """How the names of the wheel files ``step`` builds begin: the project's name as a
    wheel's file name writes it, then ``-`` (``orjson-``, ``pydantic_core-``), in each
    form a release of the tool writes it (case kept or lowered); None: not known."""
    import re

    from stagegate.ci.wheels import cibw, maturin, project
    from stagegate.ci.wheels.model import CIBUILDWHEEL

    if step.tool == CIBUILDWHEEL:
        directory = cibw.package_dir(step, cibw.deciders(step, files))
        manifest = None
    else:  # where maturin looks for pyproject.toml with --manifest-path: not followed
        found = maturin.deciders(step, files)
        directory = None if "cli.manifest-path" in found else maturin.crate_dir(step, found)
        manifest = project.join(directory or "", "Cargo.toml")
    if directory is None:
        return None
    name = project.dist_name(files, directory, manifest)
    if name is None:
        return None
    forms = {name.replace("-", "_"), re.sub(r"[-_.]+", "_", name)}
    return frozenset(f"{form}-" for found in forms for form in (found, found.lower()))


def forget() -> None:
    """Empty the caches of parsed texts and compiled selectors (a benchmark's cold run)."""
    from stagegate.ci.wheels import cibw, maturin, patterns, project, table

    for cached in (table.identifiers, table.gated, patterns._compiled, cibw._specifier,
                   cibw._admits, project._parsed, maturin._split):
        cached.cache_clear()
