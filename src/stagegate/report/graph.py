"""producers -> artifacts -> consumers and releases, as Mermaid or Graphviz source.

Artifacts are shown per template and run (its rows folded into one node; a node of
another run than the one being built says which); an edge to a consumer or release
means its glob selects at least one row in the runs it downloads from, decided exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import TooComplex
from ..globs import TooMuchWork, budget
from ..match import index, release_selection
from ..resolve import Plan, Row


@dataclass(frozen=True, slots=True)
class Graph:
    producers: list[str]
    artifacts: list[str]  # template texts
    consumers: list[str]
    releases: list[str]
    made: list[tuple[str, str]]  # producer -> artifact
    taken: list[tuple[str, str, bool]]  # artifact -> consumer (required?)
    released: list[tuple[str, str]]  # artifact -> release


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
    from ..checks._base import selections

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
    return Graph(
        producers=[p.id for p in plan.producers],
        artifacts=artifacts,
        consumers=[c.id for c in plan.consumers],
        releases=[r.id for r in plan.releases],
        made=made,
        taken=taken,
        released=released,
    )


def _node_id(prefix: str, name: str) -> str:
    return prefix + "_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


def _mermaid_label(text: str) -> str:
    return text.replace('"', "#quot;")


def mermaid(plan: Plan) -> str:
    g = build(plan)
    ids = {text: f"a{i}" for i, text in enumerate(g.artifacts)}
    lines = ["flowchart LR", f"  %% {plan.migration.id} at stage {plan.stage}"]
    lines.append("  subgraph producers")
    lines += [f'    {_node_id("p", p)}["{_mermaid_label(p)}"]' for p in g.producers]
    lines.append("  end")
    lines.append("  subgraph artifacts")
    lines += [f'    {ids[a]}[/"{_mermaid_label(a)}"/]' for a in g.artifacts]
    lines.append("  end")
    lines.append("  subgraph consumers")
    lines += [f'    {_node_id("c", c)}("{_mermaid_label(c)}")' for c in g.consumers]
    lines.append("  end")
    lines.append("  subgraph releases")
    lines += [f'    {_node_id("r", r)}{{{{"{_mermaid_label(r)}"}}}}' for r in g.releases]
    lines.append("  end")
    lines += [f"  {_node_id('p', p)} --> {ids[a]}" for p, a in g.made]
    lines += [
        f"  {ids[a]} {'-->' if required else '-.->'} {_node_id('c', c)}"
        for a, c, required in g.taken
    ]
    lines += [f"  {ids[a]} ==> {_node_id('r', r)}" for a, r in g.released]
    return "\n".join(lines)


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot(plan: Plan) -> str:
    g = build(plan)
    lines = [
        f"digraph {_dot_quote(plan.migration.id + ' stage ' + str(plan.stage))} {{",
        "  rankdir=LR;",
    ]
    lines += [
        f"  {_dot_quote('producer:' + p)} [label={_dot_quote(p)}, shape=box];" for p in g.producers
    ]
    lines += [
        f"  {_dot_quote('artifact:' + a)} [label={_dot_quote(a)}, shape=note];" for a in g.artifacts
    ]
    lines += [
        f"  {_dot_quote('consumer:' + c)} [label={_dot_quote(c)}, shape=ellipse];"
        for c in g.consumers
    ]
    lines += [
        f"  {_dot_quote('release:' + r)} [label={_dot_quote(r)}, shape=hexagon];"
        for r in g.releases
    ]
    lines += [
        f"  {_dot_quote('producer:' + p)} -> {_dot_quote('artifact:' + a)};" for p, a in g.made
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
