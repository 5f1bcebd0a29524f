"""producers -> artifacts -> consumers and releases, as Mermaid or Graphviz source.

Artifacts are shown per template and run (its rows folded into one node; a node of
another run than the one being built says which); an edge to a consumer or release
means its glob selects at least one row in the runs it downloads from, decided exactly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stagegate.engine.globs import TooMuchWork, budget
from stagegate.engine.match import index, release_selection
from stagegate.engine.resolve import Plan, Row
from stagegate.errors import TooComplex, UsageError
from stagegate.records import field, record, replace
from stagegate.report import Renderers, echo_text
from stagegate.words import one_line, suggest


@record(kw_only=True)
class Graph:
    producers: list[str]
    artifacts: list[str]  # template texts
    consumers: list[str]
    releases: list[str]
    made: list[tuple[str, str]]  # producer -> artifact
    taken: list[tuple[str, str, bool]]  # artifact -> consumer (required?)
    released: list[tuple[str, str]]  # artifact -> release
    runs: dict[str, str] = field(default_factory=dict)  # producer -> its run ("this": built here)
    texts: dict[str, str] = field(default_factory=dict)  # artifact -> its template's text
    rows: dict[str, int] = field(default_factory=dict)  # artifact -> how many rows it has


def build(plan: Plan) -> Graph:
    """The graph of ``plan``, its matching bounded like a check's."""
    try:
        with budget():
            return _build(plan)
    except TooMuchWork as exc:
        raise TooComplex(
            plan.migration.stage_loc, f"graph at stage {plan.stage}: {exc.message}"
        ) from None


def artifact_key(run: str, template: str) -> str:
    """A node per template and run: the same names in another run are other artifacts."""
    return template if run == "this" else f"{template}  [run {run}]"


def _build(plan: Plan) -> Graph:
    from stagegate.engine.match import selections

    m = plan.migration

    def key(row: Row) -> str:
        return artifact_key(m.producers[row.producer].run, row.template.text)

    artifacts: list[str] = []
    made: list[tuple[str, str]] = []
    for producer in plan.producers:
        for template in producer.artifacts:
            node = artifact_key(producer.run, template.text)
            if node not in artifacts:
                artifacts.append(node)
            made.append((producer.id, node))
    taken: list[tuple[str, str, bool]] = []
    for consumer in plan.consumers:
        for item in consumer.inputs:
            hit = {key(row) for _selector, rows in selections(plan, item) for row in rows}
            taken += [(node, consumer.id, item.required) for node in artifacts if node in hit]
    released: list[tuple[str, str]] = []
    for release in plan.releases:
        pool = index(plan, frozenset({release.run}))
        hit = {key(row) for row in release_selection(release, pool)}
        released += [(node, release.id) for node in artifacts if node in hit]
    texts: dict[str, str] = {}
    counts: dict[str, int] = {}
    for producer in plan.producers:
        for row in plan.rows(producer):
            node = key(row)
            texts[node] = row.template.text
            counts[node] = counts.get(node, 0) + 1
    return Graph(
        producers=[p.id for p in plan.producers],
        artifacts=artifacts,
        consumers=[c.id for c in plan.consumers],
        releases=[r.id for r in plan.releases],
        made=made,
        taken=taken,
        released=released,
        runs={p.id: p.run for p in plan.producers},
        texts=texts,
        rows=counts,
    )


def neighbourhood(
    graph: Graph,
    *,
    producers: Sequence[str] = (),
    consumers: Sequence[str] = (),
    releases: Sequence[str] = (),
) -> Graph:
    """The part of ``graph`` around the items named: a producer with its artifacts and
    what takes them; a consumer or release with what it takes and who makes that."""
    keep_p, keep_a = set(producers), set()
    keep_c, keep_r = set(consumers), set(releases)
    keep_a |= {a for p, a in graph.made if p in keep_p}
    from_p = set(keep_a)
    keep_c |= {c for a, c, _ in graph.taken if a in from_p}
    keep_r |= {r for a, r in graph.released if a in from_p}
    into = {a for a, c, _ in graph.taken if c in consumers}
    into |= {a for a, r in graph.released if r in releases}
    keep_a |= into
    keep_p |= {p for p, a in graph.made if a in into}

    def edge(a: str, target: str, named: Sequence[str]) -> bool:
        return a in from_p or (target in named and a in into)

    return replace(
        graph,
        producers=[p for p in graph.producers if p in keep_p],
        artifacts=[a for a in graph.artifacts if a in keep_a],
        consumers=[c for c in graph.consumers if c in keep_c],
        releases=[r for r in graph.releases if r in keep_r],
        made=[(p, a) for p, a in graph.made if p in keep_p and a in keep_a],
        taken=[(a, c, req) for a, c, req in graph.taken if edge(a, c, consumers)],
        released=[(a, r) for a, r in graph.released if edge(a, r, releases)],
    )


def _node_id(prefix: str, name: str) -> str:
    return prefix + "_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


def _mermaid_label(text: str) -> str:
    return one_line(text).replace('"', "#quot;")


def _rows_label(g: Graph, artifact: str) -> str:
    count = g.rows.get(artifact, 1)
    return g.texts.get(artifact, artifact) + (f" · {count} rows" if count != 1 else "")


def _boxes(g: Graph) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """What both pictures nest: each producer's artifacts, and the producers of each run."""
    made: dict[str, list[str]] = {}
    for p, a in g.made:
        made.setdefault(p, []).append(a)
    runs: dict[str, list[str]] = {}
    for p in g.producers:
        runs.setdefault(g.runs.get(p, "this"), []).append(p)
    return made, runs


LEGEND = [
    '  subgraph legend["legend"]',
    "    direction LR",
    '    subgraph lg_p["producer"]',
    '      lg_a[/"artifact template · rows"/]',
    "    end",
    '    lg_c("consumer")',
    '    lg_o("consumer")',
    '    lg_r{{"release"}}',
    '    lg_a -->|"required input"| lg_c',
    '    lg_a -.->|"optional input"| lg_o',
    '    lg_a ==>|"selected for release"| lg_r',
    "  end",
]


def mermaid(plan: Plan, graph: Graph | None = None, *, legend: bool = True) -> str:
    """Mermaid source: each producer a box holding its artifact templates (one node per
    template, with its row count), producers of other runs inside a box per run, then
    the consumers and releases, and a legend. An edge starts at a producer's box where
    it takes all of that producer's artifacts, so that one consumer of ten templates is
    one arrow, not ten."""
    g = graph or build(plan)
    ids = {text: f"a{i}" for i, text in enumerate(g.artifacts)}
    lines = ["flowchart LR", f"  %% {plan.migration.id} at stage {plan.stage}"]
    if legend:  # first, so that layouts put it at the top, apart from the picture
        lines += LEGEND
    made, runs = _boxes(g)
    for run, members in runs.items():
        inner = "    " if run != "this" else "  "
        if run != "this":
            lines.append(f'  subgraph {_node_id("run", run)}["run {_mermaid_label(run)}"]')
        for p in members:
            lines.append(f'{inner}subgraph {_node_id("p", p)}["{_mermaid_label(p)}"]')
            lines += [
                f'{inner}  {ids[a]}[/"{_mermaid_label(_rows_label(g, a))}"/]'
                for a in made.get(p, [])
            ]
            lines.append(f"{inner}end")
        if run != "this":
            lines.append("  end")
    if g.consumers:
        lines.append("  subgraph consumers")
        lines += [f'    {_node_id("c", c)}("{_mermaid_label(c)}")' for c in g.consumers]
        lines.append("  end")
    if g.releases:
        lines.append("  subgraph releases")
        lines += [f'    {_node_id("r", r)}{{{{"{_mermaid_label(r)}"}}}}' for r in g.releases]
        lines.append("  end")
    owner = {a: p for p, a in g.made}

    def sources(targets: list[str]) -> list[str]:
        """The producers' boxes whose every artifact is in ``targets``, else the artifacts."""
        out: list[str] = []
        for a in targets:
            p = owner.get(a)
            whole = p is not None and len(made[p]) > 1 and set(made[p]) <= set(targets)
            node = _node_id("p", p) if whole and p is not None else ids[a]
            if node not in out:
                out.append(node)
        return out

    for c in g.consumers:
        for required, arrow in ((True, "-->"), (False, "-.->")):
            taken = [a for a, cc, req in g.taken if cc == c and req is required]
            lines += [f"  {s} {arrow} {_node_id('c', c)}" for s in sources(taken)]
    for r in g.releases:
        taken = [a for a, rr in g.released if rr == r]
        lines += [f"  {s} ==> {_node_id('r', r)}" for s in sources(taken)]
    if legend and (g.releases or g.consumers):  # an invisible link keeps it beside them
        lines.append(f"  {'releases' if g.releases else 'consumers'} ~~~ legend")
    return "\n".join(lines)


def _dot_quote(text: str) -> str:
    return '"' + one_line(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot(plan: Plan, graph: Graph | None = None) -> str:
    """Graphviz source: the same picture as ``mermaid``, each producer a cluster holding
    its artifact templates (with row counts), producers of another run inside its run's
    cluster."""
    g = graph or build(plan)
    lines = [
        f"digraph {_dot_quote(plan.migration.id + ' stage ' + str(plan.stage))} {{",
        "  rankdir=LR;",
        "  compound=true;",
    ]
    made, runs = _boxes(g)
    for run, members in runs.items():
        if run != "this":
            lines.append(f"  subgraph {_dot_quote('cluster_run:' + run)} {{")
            lines.append(f"    label={_dot_quote('run ' + run)}; style=dashed;")
        for p in members:
            lines.append(f"  subgraph {_dot_quote('cluster_producer:' + p)} {{")
            lines.append(f"    label={_dot_quote(p)}; shape=box;")
            lines += [
                f"    {_dot_quote('artifact:' + a)} [label={_dot_quote(_rows_label(g, a))}, shape=note];"
                for a in made.get(p, [])
            ]
            lines.append("  }")
        if run != "this":
            lines.append("  }")
    lines += [
        f"  {_dot_quote('consumer:' + c)} [label={_dot_quote(c)}, shape=ellipse];"
        for c in g.consumers
    ]
    lines += [
        f"  {_dot_quote('release:' + r)} [label={_dot_quote(r)}, shape=hexagon];"
        for r in g.releases
    ]
    lines += [
        f"  {_dot_quote('artifact:' + a)} -> {_dot_quote('consumer:' + c)}"
        + ("" if required else " [style=dashed]")
        + ";"
        for a, c, required in g.taken
    ]
    lines += [
        f"  {_dot_quote('artifact:' + a)} -> {_dot_quote('release:' + r)} [style=bold];"
        for a, r in g.released
    ]
    lines.append("}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- renderer table


def focus(
    plan: Plan,
    graph: Graph,
    *,
    producers: Sequence[str] = (),
    consumers: Sequence[str] = (),
    releases: Sequence[str] = (),
) -> Graph:
    """``graph`` narrowed to the neighbourhood of the items named (all of it when none
    is); a UsageError for an id the migration does not declare or that is not active."""
    named = {"producer": producers, "consumer": consumers, "release": releases}
    if not any(named.values()):
        return graph
    migration = plan.migration
    for kind, ids in named.items():
        declared: dict[str, object] = getattr(migration, f"{kind}s")
        active = set(getattr(graph, f"{kind}s"))
        for item in ids:
            if item not in declared:
                raise UsageError(f"no {kind} {item!r} in {migration.file}{suggest(item, declared)}")
            if item not in active:
                raise UsageError(
                    f"{kind} {item} is not active at stage {plan.stage}; "
                    f"`stagegate plan --stage {plan.stage}` lists what is."
                )
    return neighbourhood(graph, producers=producers, consumers=consumers, releases=releases)


@record
class Picture:
    """`graph`'s result: the resolved stage and the part of its graph to draw."""

    plan: Plan
    graph: Graph
    legend: bool = True


PICTURE: Renderers[Picture] = {
    "mermaid": echo_text(lambda p: mermaid(p.plan, p.graph, legend=p.legend)),
    "dot": echo_text(lambda p: dot(p.plan, p.graph)),
}
