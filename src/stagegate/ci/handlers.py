"""What an action step does with artifacts and release files: one handler per action
family, in a table keyed by the action's name.

A handler answers two questions about one use of its action (a ``Use``: the step, where
it runs, the scope its ``with:`` values are evaluated in):

- ``transfers``: the artifact names it uploads and the names or globs it downloads, as
  drift compares them with the model;
- ``effects``: what it does to the files a release ships (``Made``, ``Taken``,
  ``Merged``, ``Published``), with the semantics of the action's version
  (``ci.actions`` holds the facts).

Adding an action is adding a handler to ``HANDLERS``. An action no handler knows is
either known to move nothing (``actions.INERT``), declared by the migration
(``workflows.actions``), or unread where artifacts flow.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from stagegate.ci import actions, publish
from stagegate.ci.model import ActionRef, Step
from stagegate.ci.scopes import Scope
from stagegate.ci.transfers import PAGES, THIS_RUN, Site, Transfer, shown
from stagegate.errors import Loc
from stagegate.model import ghexpr
from stagegate.model.ghexpr import Ph, Sym, Unknown, Value, to_text, truth, unknowns
from stagegate.records import record

# --------------------------------------------------------------------------- effects


@record(kw_only=True)
class Made:
    """An upload: the artifact a step makes, from the files ``path`` takes."""

    name: str
    path: str
    loc: Loc
    version: int | None
    overwrite: bool = False
    maybe: Loc | None = None
    """The step's ``if:``, where it cannot be evaluated."""
    per_row: bool = False
    """The name may differ from row to row (a finite placeholder, an unknown value)."""
    path_loc: Loc | None = None
    """Where ``path:`` is written, where it decides only which files the artifact holds
    (not its name: ``archive: false`` names it after its file)."""
    path_unknown: bool = False
    """``path:`` holds a value that cannot be evaluated: which files it takes is not known."""


@record(kw_only=True)
class Taken:
    """A download: what it selects (``kind``: "name" or "pattern"), where its files land."""

    select: str
    kind: str
    path: str
    merge: bool
    version: int | None
    loc: Loc
    run: str = "this"
    """"this", or the expression of the other run whose artifacts it reads."""
    workflow: str | None = None
    """The workflow file whose run it reads, where the step says (``workflow:``)."""
    lands: bool = True
    """Whether where its files land is known (not for a declared remote action)."""


@record(kw_only=True)
class Merged:
    """``actions/upload-artifact/merge``: one artifact from those ``pattern`` matches."""

    name: str
    pattern: str
    separate: bool
    loc: Loc


@record(kw_only=True)
class Published:
    """A publish step: the tool and the path globs (from the workspace) it reads."""

    tool: str
    reads: tuple[str, ...]
    loc: Loc


Effect = Made | Taken | Merged | Published


class Host(Protocol):
    """What a use asks of the reader it is read by."""

    def note_value(self, loc: Loc, value: Unknown) -> None:
        """An input of an artifact step that cannot be evaluated."""

    def unread(self, site: Site, loc: Loc, what: str, reason: str) -> None:
        """A step whose effect on the artifacts is not read, where it runs."""

    def note_unresolved(self, loc: Loc, value: Value) -> None: ...

    def note_run(self, loc: Loc, value: Value) -> None:
        """The unknown id of the other run a download reads."""


class Use:
    """One use of an action: its step, where it runs and what its values see."""

    __slots__ = ("host", "memo", "ref", "scope", "site", "step")

    def __init__(self, host: Host, site: Site, step: Step, scope: Scope) -> None:
        assert step.uses is not None
        self.host = host
        self.site = site
        self.step = step
        self.ref: ActionRef = step.uses
        self.scope = scope
        self.memo: dict[str, Value] = {}

    @property
    def given(self) -> Mapping[str, Any]:
        return self.step.given

    def has(self, key: str) -> bool:
        return key in self.step.given

    def value(self, key: str) -> Value:
        """``with.<key>`` evaluated (once per use)."""
        if key not in self.memo:
            self.memo[key] = self.scope.evaluate(self.step.given[key], self.step.at("with", key))
        return self.memo[key]

    def loc(self, key: str | None = None) -> Loc:
        """Where ``with.<key>`` is written (the ``uses:`` line without a key)."""
        if key is None or key not in self.step.given:
            return self.ref.loc
        return self.site.doc.loc(self.step.at("with", key))

    def text(self, key: str) -> str:
        """``with.<key>`` as text ("" where not given); what cannot be evaluated is noted
        with its place and shown as its expression."""
        if key not in self.step.given:
            return ""
        value = self.value(key)
        for part in unknowns(value):
            self.host.note_value(self.loc(key), part)
        return shown(value) if not isinstance(value, bool | int | float) else to_text(value)

    def flag(self, key: str) -> bool:
        return self.text(key).lower() == "true"

    def version(self) -> int | None:
        """The action's major version; where its ref says none, the step is unread."""
        found = self.ref.major
        if found is None:
            self.host.unread(
                self.site,
                self.ref.loc,
                self.ref.uses,
                "the major version of this action is not in its ref (pin a tag, or keep "
                "the tag in a `# vN` comment after a commit pin)",
            )
        return found

    def maybe(self) -> Loc | None:
        """The step's ``if:`` where it cannot be evaluated (None: none, or decided)."""
        raw = self.step.condition
        if raw is None or isinstance(raw, bool):
            return None
        value = self.scope.evaluate(str(raw), self.step.at("if"), condition=True)
        return self.site.doc.loc(self.step.at("if")) if truth(value) is None else None

    def per_row(self, axes: Mapping[str, Any]) -> bool:
        """Whether the name holds a finite axis's placeholder or an unknown value."""
        if "name" not in self.step.given:
            return False
        value = self.value("name")
        parts = value.parts if isinstance(value, Sym) else (value,)
        return any(
            isinstance(p, Unknown)
            or (isinstance(p, Ph) and p.axis in axes and not axes[p.axis].is_open)
            for p in parts
        )

    def transfer(
        self, direction: str, key: str, default: str, kind: str = "name", run: str = "this"
    ) -> Transfer:
        """The artifact step's ``with.<key>`` (or ``default``) as drift sees it."""
        if key in self.step.given:
            return self.site.transfer(direction, self.loc(key), self.value(key), kind, run)
        return self.site.transfer(direction, self.ref.loc, default, kind, run)


class Handler(Protocol):
    names: tuple[str, ...]

    def transfers(self, use: Use) -> Iterator[Transfer]: ...

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]: ...


# --------------------------------------------------------------------------- artifacts


class Upload:
    """``actions/upload-artifact``: ``name`` (default ``artifact``) from ``path``; v7 with
    ``archive: false`` names the artifact after its one file."""

    names: tuple[str, ...] = (actions.UPLOAD,)
    default = "artifact"

    def transfers(self, use: Use) -> Iterator[Transfer]:
        yield use.transfer("upload", "name", self.default)

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        version = use.version()
        path = use.text("path")
        name = use.text("name") or self.default
        if (
            version is not None
            and version >= actions.ARCHIVE_OPTION_SINCE
            and use.text("archive").lower() == "false"
        ):
            files = publish.artifact_files(path)
            name = files[0].rsplit("/", 1)[-1] if len(files) == 1 else name
            named_by_path = True
        else:
            named_by_path = False
        yield Made(
            name=name,
            path=path,
            loc=use.loc("name"),
            version=version,
            overwrite=use.flag("overwrite"),
            maybe=use.maybe(),
            per_row=use.per_row(axes),
            path_loc=use.loc("path") if use.has("path") and not named_by_path else None,
            path_unknown=use.has("path") and bool(unknowns(use.value("path"))),
        )


class Pages(Upload):
    """``actions/upload-pages-artifact``: ``name`` (default ``github-pages``) from ``path``
    (default ``_site/``); v3 uploads with upload-artifact v4, v1-v2 with v3."""

    names: tuple[str, ...] = (PAGES,)
    default = "github-pages"

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        pages = use.version()
        yield Made(
            name=use.text("name") or self.default,
            path=use.text("path") or "_site/",
            loc=use.loc("name"),
            version=None if pages is None else actions.NEW_BACKEND if pages >= 3 else 3,
            maybe=use.maybe(),
            per_row=use.per_row(axes),
        )


class Merge:
    """``actions/upload-artifact/merge``: reads the run's artifacts ``pattern`` matches
    (every one without it) and uploads them as one, ``name`` (default merged-artifacts)."""

    names: tuple[str, ...] = (actions.MERGE,)

    def transfers(self, use: Use) -> Iterator[Transfer]:
        yield use.transfer("download", "pattern", "*", kind="pattern")
        yield use.transfer("upload", "name", "merged-artifacts")

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        yield Merged(
            name=use.text("name") or "merged-artifacts",
            pattern=use.text("pattern") or "*",
            separate=use.flag("separate-directories"),
            loc=use.ref.loc,
        )


def _run_of(use: Use, key: str) -> str:
    """ "this", or the text of the other run a download reads (``with.<key>``)."""
    if not use.has(key):
        return "this"
    value = use.value(key)
    if value == THIS_RUN:
        return "this"
    if use.site.runs:  # the run it reads is never guessed
        use.host.note_run(use.loc(key), value)
    return ghexpr.to_text(use.given[key]).strip() or "?"


class Download:
    """``actions/download-artifact``: ``name`` exact, ``pattern`` a glob, neither every
    artifact; ``run-id`` another run's; one folder per artifact unless
    ``merge-multiple: true`` (from v5, a download of exactly one artifact lands flat)."""

    names: tuple[str, ...] = (actions.DOWNLOAD,)

    def transfers(self, use: Use) -> Iterator[Transfer]:
        run = _run_of(use, "run-id")
        if use.has("name"):
            yield use.transfer("download", "name", "", run=run)
        else:
            yield use.transfer("download", "pattern", "*", kind="pattern", run=run)

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        version = use.version()
        if use.has("artifact-ids"):
            return  # by id: not by name
        kind = "name" if use.has("name") else "pattern"
        selected = use.text("name") if kind == "name" else (use.text("pattern") or "*")
        yield Taken(
            select=selected,
            kind=kind,
            path=publish.norm(use.text("path") or "."),
            merge=use.flag("merge-multiple"),
            version=version,
            loc=use.loc(kind) if use.has(kind) or kind == "name" else use.ref.loc,
            run=_run_of(use, "run-id") if use.has("run-id") else "this",
        )


class OtherRunDownload:
    """``dawidd6/action-download-artifact``: another run's artifacts, of the workflow its
    ``workflow:`` input names (``name`` exact, or a regular expression with
    ``name_is_regexp``); files land in ``path``, one folder per artifact unless
    ``skip_unpack``/a single name."""

    names: tuple[str, ...] = ("dawidd6/action-download-artifact",)

    @staticmethod
    def run(use: Use) -> str:
        """The run it reads: ``run_id`` as written, else the newest of ``workflow``."""
        if use.has("run_id"):
            return ghexpr.to_text(use.given["run_id"]).strip() or "?"
        return "workflow " + (use.text("workflow") or "?")

    def transfers(self, use: Use) -> Iterator[Transfer]:
        run = self.run(use)
        if use.has("name") and not use.flag("name_is_regexp"):
            yield use.transfer("download", "name", "", run=run)
        else:
            yield use.transfer("download", "pattern", "*", kind="pattern", run=run)

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        exact = use.has("name") and not use.flag("name_is_regexp")
        yield Taken(
            select=use.text("name") if exact else "*",
            kind="name" if exact else "pattern",
            path=publish.norm(use.text("path") or "."),
            merge=False,
            version=actions.NEW_BACKEND,
            loc=use.loc("name"),
            run=self.run(use),
            workflow=use.text("workflow") or None,
        )


# --------------------------------------------------------------------------- publishers


class PypiPublish:
    """``pypa/gh-action-pypi-publish``: every file in ``packages-dir`` (default ``dist/``)."""

    names: tuple[str, ...] = (actions.PYPI,)

    def transfers(self, use: Use) -> Iterator[Transfer]:
        return iter(())

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        folder = use.text("packages-dir") or use.text("packages_dir") or "dist"
        yield Published(tool=actions.PYPI, reads=(publish.norm(f"{folder}/*"),), loc=use.ref.loc)


class GhRelease:
    """``softprops/action-gh-release``: the globs of ``files`` (one per line or comma),
    from ``working_directory``."""

    names: tuple[str, ...] = (actions.GH_RELEASE,)

    def transfers(self, use: Use) -> Iterator[Transfer]:
        return iter(())

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        base = use.text("working_directory") or "."
        globs = publish.split_files(use.text("files"))
        yield Published(
            tool=actions.GH_RELEASE,
            reads=tuple(publish.norm(f, base) for f in globs),
            loc=use.ref.loc,
        )


class NcipolloRelease:
    """``ncipollo/release-action``: the globs of ``artifacts`` (comma separated)."""

    names: tuple[str, ...] = ("ncipollo/release-action",)

    def transfers(self, use: Use) -> Iterator[Transfer]:
        return iter(())

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        globs = publish.split_files(use.text("artifacts"))
        yield Published(
            tool="ncipollo/release-action",
            reads=tuple(publish.norm(f) for f in globs),
            loc=use.ref.loc,
        )


class NightlyUpload:
    """``scientific-python/upload-nightly-action``: ``anaconda upload`` of the wheels in
    ``artifacts_path`` (its script: ``"${INPUT_ARTIFACTS_PATH%/}"/*.whl``)."""

    names: tuple[str, ...] = ("scientific-python/upload-nightly-action",)

    def transfers(self, use: Use) -> Iterator[Transfer]:
        return iter(())

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        folder = use.text("artifacts_path") or "."
        yield Published(
            tool=use.ref.name, reads=(publish.norm(f"{folder}/*.whl"),), loc=use.ref.loc
        )


class ReleaseAsset:
    """``actions/upload-release-asset`` (archived): the one file ``asset_path`` names."""

    names: tuple[str, ...] = ("actions/upload-release-asset",)

    def transfers(self, use: Use) -> Iterator[Transfer]:
        return iter(())

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        path = use.text("asset_path")
        if path:
            yield Published(tool=use.ref.name, reads=(publish.norm(path),), loc=use.ref.loc)


class DockerBuild:
    """``docker/build-push-action``: an image built (pushed to a registry, loaded into the
    runner's docker); workspace files only where ``outputs:`` exports them, not read."""

    names: tuple[str, ...] = ("docker/build-push-action",)

    def transfers(self, use: Use) -> Iterator[Transfer]:
        return iter(())

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        if use.has("outputs"):
            use.host.unread(
                use.site,
                use.loc("outputs"),
                use.ref.uses,
                "its outputs: may write files into the workspace; which is not read",
            )
        return iter(())


class MaturinAction:
    """``PyO3/maturin-action`` with ``command: upload``: ``maturin upload`` of its args."""

    names: tuple[str, ...] = (actions.MATURIN, "messense/maturin-action")

    def transfers(self, use: Use) -> Iterator[Transfer]:
        return iter(())

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        if use.text("command") != "upload":
            return
        for command in publish.read_script("maturin upload " + use.text("args"), "."):
            if isinstance(command, publish.Command):
                yield Published(tool="maturin upload", reads=command.reads, loc=use.ref.loc)


class PagesDeploy:
    """A deploy of a folder to a branch (GitHub Pages): ``JamesIves/github-pages-deploy-action``
    (``folder``), ``peaceiris/actions-gh-pages`` (``publish_dir``, default ``public``)."""

    names: tuple[str, ...] = ("jamesives/github-pages-deploy-action", "peaceiris/actions-gh-pages")

    def transfers(self, use: Use) -> Iterator[Transfer]:
        return iter(())

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        if use.ref.name == "peaceiris/actions-gh-pages":
            folder = use.text("publish_dir") or "public"
        else:
            folder = use.text("folder") or "."
        yield Published(tool=use.ref.name, reads=(publish.norm(f"{folder}/**"),), loc=use.ref.loc)


class DeployPages:
    """``actions/deploy-pages``: deploys the run's artifact ``artifact_name`` (default
    ``github-pages``), as a download of that name published whole."""

    names: tuple[str, ...] = ("actions/deploy-pages",)

    def transfers(self, use: Use) -> Iterator[Transfer]:
        yield use.transfer("download", "artifact_name", "github-pages")

    def effects(self, use: Use, axes: Mapping[str, Any]) -> Iterator[Effect]:
        name = use.text("artifact_name") or "github-pages"
        yield Taken(
            select=name, kind="name", path=".deploy-pages", merge=False,
            version=actions.NEW_BACKEND, loc=use.loc("artifact_name"),
        )  # fmt: skip
        yield Published(tool="actions/deploy-pages", reads=(".deploy-pages/**",), loc=use.ref.loc)


HANDLERS: dict[str, Handler] = {
    name: handler
    for handler in (
        Upload(),
        Pages(),
        Merge(),
        Download(),
        OtherRunDownload(),
        PypiPublish(),
        GhRelease(),
        NcipolloRelease(),
        MaturinAction(),
        NightlyUpload(),
        ReleaseAsset(),
        DockerBuild(),
        PagesDeploy(),
        DeployPages(),
    )
    for name in handler.names
}
"""Action name (``owner/name[/path]``, lower case) -> its handler."""


def handler(ref: ActionRef) -> Handler | None:
    """The handler of a remote action (None: no handler knows it)."""
    return HANDLERS.get(ref.name) if ref.name else None
