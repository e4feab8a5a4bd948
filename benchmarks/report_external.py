"""The sections of docs/results.md about code this project did not write: the blind-authored catalogs and
AgentDojo's task suites (kept apart from report.py so each file stays one screenful of sections)."""

from __future__ import annotations

import json

from _common import RESULTS


def _load(name: str) -> dict | None:
    p = RESULTS / f"{name}.json"
    return json.loads(p.read_text()) if p.exists() else None


def section_blind() -> list[str]:
    blind = _load("blind")
    if not blind:
        return []
    lines = [
        "## Blind-authored catalogs: code written by people who never saw libra",
        "",
        "Each catalog of `tests/blind/` was written by an author who had not read libra's source, from a one-paragraph "
        "brief (`tests/blind/BRIEF.md`), with the dependencies a user must respect (designed) and pairs that are "
        "independent (excluded) listed before any build. Built with the default options and no hints "
        "(`benchmarks/bench_blind.py`). Never: tools that no call succeeded on.",
        "",
        "| catalog | designed | found | excluded hit | relations | never succeeded | build s |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = {**blind["catalogs"], "total": blind["total"]}
    for name, r in rows.items():
        never = r["never_succeeded"] if isinstance(r["never_succeeded"], int) else len(r["never_succeeded"])
        lines.append(
            f"| {name} | {r['designed']} | {r['found']} ({100 * r['found'] / max(r['designed'], 1):.0f}%) | "
            f"{r['excluded_hit']} | {r['relations_total']} | {never} | {r['build_s']:.1f} |"
        )
    return [*lines, ""]


def section_agentdojo() -> list[str]:
    ad = _load("agentdojo")
    if not ad:
        return []
    lines = [
        "## AgentDojo: four task suites through a plain wrapper",
        "",
        "Tools as each suite defines them, state from its default environment, tasks from its user tasks with gold "
        "from their ground-truth calls; default build, no hints (`benchmarks/bench_agentdojo.py`). R@K per method "
        "(bm25 / dense / hybrid / libra-dense / libra: the paper's LIBRA on the dense base, then the default on the "
        "hybrid base); *hidden*: the tasks whose gold holds a tool the request never names.",
        "",
        "| suite | tools | tasks | relations | never succeeded (in gold) | R@5 | R@10 | hidden tasks | hidden R@5 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    methods = ("bm25", "dense", "hybrid", "libra-dense", "libra")
    for name, s in ad["suites"].items():
        r = {k: "/".join(f"{s['scores'][k]['all'][m]['R']:.1f}" for m in methods) for k in ("5", "10")}
        hidden = s["scores"]["5"]["hidden"]
        n_hidden = next(iter(hidden.values()), {}).get("tasks", 0)
        h = "/".join(f"{hidden[m]['R']:.1f}" for m in methods if m in hidden) or "–"
        lines.append(
            f"| {name} | {s['tools']} | {s['tasks']} | {sum(s['relations'].values())} | "
            f"{len(s['tools_never_succeeded'])} ({len(s['gold_tools_never_succeeded'])}) | {r['5']} | {r['10']} | "
            f"{n_hidden} | {h} |"
        )
    mean = ad["mean_R"]
    lines += [
        "",
        "Mean R over the suites (bm25 / dense / hybrid / libra-dense / libra): "
        + "; ".join(f"K = {k}: " + "/".join(f"{mean[k][m]:.1f}" for m in methods) for k in ("5", "10"))
        + ".",
        "",
    ]
    return lines
