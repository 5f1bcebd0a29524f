"""Where a build step writes its wheels, and whether an upload's ``path`` takes them:
cibuildwheel's ``--output-dir`` (``output-dir:``, ``CIBW_OUTPUT_DIR``, else
``wheelhouse``); maturin's ``--out``, else ``wheels`` in cargo's target folder
(``--target-dir``, else ``CARGO_TARGET_DIR``, else ``target``; maturin-action's own
``target/wheels``). Paths are from the repository root, or absolute.
"""

from __future__ import annotations

import posixpath
import shlex

from stagegate.ci.wheels.model import CIBUILDWHEEL, BuildStep, Setting


def output(step: BuildStep) -> str | None:
    """The folder a build step writes its wheels to, from its directory (None: not
    known). maturin's: ``--out``, else ``wheels`` in cargo's target folder (``--target-dir``,
    else ``$CARGO_TARGET_DIR``, else ``target``)."""
    words = [w.text for w in step.args]
    for flag in ("--output-dir", "-o", "--out"):
        if flag in words:
            i = words.index(flag)
            return words[i + 1] if i + 1 < len(words) else None
        joined = next((w for w in words if w is not None and w.startswith(f"{flag}=")), None)
        if joined is not None and flag.startswith("--"):
            return joined.partition("=")[2]
    if step.tool == CIBUILDWHEEL:
        given = step.inputs.get("output-dir") or step.env.get("CIBW_OUTPUT_DIR")
        return (given.value if given else "wheelhouse") or "wheelhouse"
    args = step.inputs.get("args")
    if args is not None and args.value:
        try:
            parts = shlex.split(args.value)
        except ValueError:
            return None
        for flag in ("--out", "-o"):
            if flag in parts and parts.index(flag) + 1 < len(parts):
                return parts[parts.index(flag) + 1]
    if step.action:  # maturin-action: its own folders (and container)
        return "target/wheels"
    target = _target_dir(words, step.env.get("CARGO_TARGET_DIR"))
    return None if target is None else posixpath.join(target, "wheels")


def _target_dir(words: list[str | None], env: Setting | None) -> str | None:
    """cargo's target folder for ``maturin build`` (None: not known)."""
    if "--target-dir" in words:
        i = words.index("--target-dir")
        return words[i + 1] if i + 1 < len(words) else None
    given = next((w for w in words if w is not None and w.startswith("--target-dir=")), None)
    if given is not None:
        return given.partition("=")[2]
    if env is not None:
        return env.value or None
    return "target"


def norm(path: str) -> str:
    path = path.strip().removeprefix("./").rstrip("/")
    return "" if path in (".", "*") else path


def takes(upload_path: str, folders: tuple[str, ...] | None) -> bool:
    """Whether an upload's ``path`` takes wheels that are in ``folders`` (None: not known)."""
    if folders is None or not upload_path.strip():
        return True
    for line in upload_path.splitlines():
        line = norm(line)
        if line.endswith((".tar.gz", ".zip")):
            continue
        for folder in folders:
            if (
                not line
                or not folder
                or line == folder
                or line.startswith(folder + "/")
                or folder.startswith(line + "/")
            ):
                return True
    return False


def folder(directory: str, path: str) -> str:
    """``path`` from ``directory`` (both from the repository root, or absolute; a path
    under ``$GITHUB_WORKSPACE``, as the shell reader spells one, from the root)."""
    if path == "$GITHUB_WORKSPACE" or path.startswith("$GITHUB_WORKSPACE/"):
        directory, path = ".", path[len("$GITHUB_WORKSPACE") :].lstrip("/") or "."
    return norm(posixpath.normpath(posixpath.join(directory or ".", path)))
