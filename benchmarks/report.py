"""Regenerate docs/results.md from the JSON files in benchmarks/results/ (never type a figure by hand)."""

from __future__ import annotations

import json

from _common import RESULTS, ROOT
from report_external import section_agentdojo, section_blind


def _load(name: str) -> dict | None:
    p = RESULTS / f"{name}.json"
    return json.loads(p.read_text()) if p.exists() else None


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def _per_call(cpu_seconds: float | None, calls: int) -> str:
    return "–" if cpu_seconds is None or not calls else f"{cpu_seconds / calls * 1000:.1f}"


def _embedding_row(e: dict, how: str = "") -> str:
    """The serve table's row for the embedding model alone on the same queries (the floor under a new query)."""
    return (
        f"| embedding model alone{how}, in-process (queries of {e['tokens_p50']} word pieces at p50, "
        f"{e['tokens_p99']} at p99) | "
        f"{e['queries']} | {e['p50_ms']:.1f} | {e['p99_ms']:.1f} | – | {e['cpu_ms']:.1f} | – |"
    )


def _serve_row(label: str, row: dict) -> str:
    """One one-client row of the serve table (CPU per call only in results that measured it)."""
    return (
        f"| {label} | {row['calls']} | {row['p50_ms']:.1f} | {row['p99_ms']:.1f} | {row['errors']} | "
        f"{_f(row.get('server_cpu_ms'))} | {_f(row.get('client_cpu_ms'))} |"
    )


def _section_retrieval() -> list[str]:
    lines: list[str] = []
    for name in sorted(p.stem for p in RESULTS.glob("retrieval-*.json")):
        r = _load(name)
        assert r is not None
        lines += [
            f"## Retrieval: {r['benchmark']}@{r['k']} ({r['n_tasks']} tasks)",
            "",
            "| method | P | R | NDCG | paper P | paper R | paper NDCG |",
            "|---|---|---|---|---|---|---|",
        ]
        # the paper's LIBRA is propagation over a dense base: where both rows are there, its figures go beside
        # libra-dense, not beside the default (propagation over the hybrid base)
        methods = {row["method"] for row in r["results"]}
        published = dict(r.get("paper") or {})
        if "libra-dense" in methods and "libra" in published:
            published["libra-dense"] = published.pop("libra")
        for row in r["results"]:
            paper = published.get(row["method"]) or [None] * 3
            lines.append(
                f"| {row['method']} | {_f(row['precision'])} | {_f(row['recall'])} | {_f(row['ndcg'])} | "
                f"{_f(paper[0])} | {_f(paper[1])} | {_f(paper[2])} |"
            )
        if "table3" in r:
            t3 = r["table3"]
            pct = t3["percent"]
            lines += [
                "",
                f"Recovery breakdown (Table 3), {t3['occurrences']} gold occurrences outside the dense top-K:",
                "",
                "| no edge | consumer not seeded | provider not selected | below cutoff | recovered |",
                "|---|---|---|---|---|",
                "| "
                + " | ".join(
                    f"{pct[k]:.1f}%"
                    for k in ("no_edge", "consumer_not_seeded", "provider_not_selected", "below_cutoff", "recovered")
                )
                + " |",
            ]
            causes = t3.get("no_edge_causes") or {}
            if causes:
                lines += [
                    "",
                    (
                        "'No edge' occurrences by why the tool provides no relation (the library's "
                        "`stats.health.no_relation`, see README):"
                    ),
                    "",
                    "| " + " | ".join(c.replace("_", " ") for c in causes) + " |",
                    "|" + "---|" * len(causes),
                    "| " + " | ".join(str(v) for v in causes.values()) + " |",
                ]
            tools = t3.get("no_edge_tools") or []
            if tools:
                lines += [
                    "",
                    "Its most frequent tools: "
                    + ", ".join(
                        f"`{t['tool']}` {t['occurrences']}"
                        + (f" ({t['cause'].replace('_', ' ')})" if t.get("cause") else "")
                        for t in tools[:10]
                    )
                    + ".",
                ]
        if "table6" in r:
            space = r.get("score_space", "similarity")
            note = (
                (
                    " LIBRA's rows above average the encoder's probabilities (README, Algorithm 2); 'similarity "
                    "(paper)' is the paper's average."
                )
                if space == "probability"
                else ""
            )
            lines += [
                "",
                f"Sensitivity (Table 6), R / NDCG.{note}",
                "",
                "| setting | variant | R | NDCG |",
                "|---|---|---|---|",
            ]
            lines += [
                f"| {row['setting']} | {row['variant']} | {_f(row['recall'])} | {_f(row['ndcg'])} |"
                for row in r["table6"]
            ]
        lines.append("")
    return lines


def _section_documents() -> list[str]:
    lines: list[str] = []
    docs = _load("documents")
    if docs:
        lines += [
            "## Dense documents: prose (default) or the paper's JSON",
            "",
            (
                f"Tools whose document fills the {docs['embedder']} window ({docs['window_tokens']} tokens, so "
                "its end is cut), and dense and LIBRA with each document style (R / NDCG):"
            ),
            "",
            "| benchmark | document | tools at window | dense | libra | margin |",
            "|---|---|---|---|---|---|",
        ]
        for row in docs["rows"]:
            d, g = row["dense"], row["libra"]
            lines.append(
                f"| {row['benchmark']}@{row['k']} | {row['document']} | {row['tools_at_window']} / "
                f"{row['tools']} | {_f(d['recall'])} / {_f(d['ndcg'])} | "
                f"{_f(g['recall'])} / {_f(g['ndcg'])} | {g['recall'] - d['recall']:+.1f} / "
                f"{g['ndcg'] - d['ndcg']:+.1f} |"
            )
        lines.append("")
    return lines


def _section_defaults() -> list[str]:
    """The retrieval default chosen on the development halves (bench_defaults.py), with the serve budget's figures."""
    d = _load("defaults")
    if not d:
        return []
    benches = list(d["paper_libra"])
    head = " | ".join(f"{b}@{d['k'][b]} P/R/NDCG" for b in benches)
    lines = [
        "## Retrieval default (chosen on the development halves)",
        "",
        (
            f"`{d['chosen']['label']}`: the best worst case over the three development halves of "
            f"{len(d['grid'])} configurations (worst margin over the paper's LIBRA row "
            f"{100 * d['chosen']['worst']:+.1f}%; dense alone {100 * d['dense_worst']:+.1f}%). "
            "Test halves and full sets below took no part in the choice."
        ),
        "",
        f"| method | half | {head} |",
        "|" + "---|" * (2 + len(benches)),
    ]
    for name, r in d["report"].items():
        for half in ("dev", "test", "all"):
            cells = ["/".join(_f(r["benchmarks"][b][half][m]) for m in ("P", "R", "NDCG")) for b in benches]
            lines.append(f"| {name} | {half} | " + " | ".join(cells) + " |")
    lines.append("| paper LIBRA | all | " + " | ".join("/".join(_f(x) for x in d["paper_libra"][b]) for b in benches))
    lines[-1] += " |"
    lines += [
        "",
        "Tasks whose gold holds a tool the request never names (full sets): the share retrieved whole (every gold "
        "tool in the top K), of how many (how many have a gold set of at most K tools, the only ones that can be "
        "whole), and the share of their unnamed gold tools in the top K:",
        "",
        "| method | " + " | ".join(benches) + " |",
        "|" + "---|" * (1 + len(benches)),
    ]
    for name, r in d["report"].items():
        hv = [r["benchmarks"][b]["hidden"]["all"] for b in benches]
        cells = [
            f"{h['complete_percent']:.1f}% of {h['tasks']} ({h['fits_k']} fit K); "
            f"unnamed found {h['found_percent']:.1f}%"
            for h in hv
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def _section_build_cpu() -> list[str]:
    lines: list[str] = []
    for name in sorted(p.stem for p in RESULTS.glob("build-cpu-*.json")):
        c = _load(name)
        assert c is not None
        summary = (
            f"{c['executed_calls']:,} executed calls in {c['process_wall_seconds']} s of wall time on "
            f"{c['machine']['cpus']} CPUs: the caller (the engine) "
            f"used {c['caller_cpu_seconds']} s of CPU ({c['caller_cpu_ms_per_call']} ms per call), its "
            f"{c['worker_processes']} workers (the tool calls) "
            f"{c['worker_cpu_seconds']} s ({c['worker_cpu_ms_per_call']} ms per call); the caller's peak "
            f"resident memory {c['caller_max_rss_mb']} MB."
        )
        lines += [f"## Build CPU: {c['benchmark']} (`{c['command']}`)", "", summary, ""]
    return lines


def _section_builds() -> list[str]:
    lines: list[str] = []
    for name in sorted(p.stem for p in RESULTS.glob("build-*.json") if not p.stem.startswith("build-cpu-")):
        b = _load(name)
        assert b is not None
        s = b["stats"]
        paper = b.get("paper_table5") or {}
        lines += [
            f"## Library construction: {b['benchmark']} (Table 5)",
            "",
            "| | tools | candidates | value relations | state relations | wall | CPUs |",
            "|---|---|---|---|---|---|---|",
            (
                f"| ours | {s['tools']} | {s['candidate_compositions']:,} | {s['value_relations']} | "
                f"{s['state_relations']} | {s['wall_seconds']:.1f} s | {b['machine']['cpus']} |"
            ),
        ]
        if paper:
            lines.append(
                f"| paper | {paper['tools']} | {paper['candidates']:,} | {paper['value_relations']} | "
                f"{paper['state_relations']} | {paper['wall']} | {paper['cpus']} |"
            )
        e = s.get("engine", {})
        lines += [
            "",
            (
                f"Executed invocations {e.get('executed_calls', 0):,}; memoised repeats "
                f"{e.get('memo_hits', 0):,}; provenance tests {e.get('provenance_tests', 0):,}; state tests "
                f"{e.get('state_tests', 0):,}; tests skipped as implied {e.get('skipped_implied', 0):,}; offers "
                f"pruned by type or format {e.get('skipped_unfit', 0):,}."
            ),
        ]
        if e.get("calls_from_checking"):
            lines.append(
                f"Of the executed invocations, {e['calls_from_checking']:,} were contract checking's calls, "
                "taken from the shared memo instead of run again."
            )
        spent = [(k, e[f"calls_{k}"]) for k in ("offers", "controls", "sweeps", "probes") if f"calls_{k}" in e]
        if spent:
            lines.append(
                "Calls spent on "
                + ", ".join(f"{k} {v:,}" for k, v in spent)
                + " (offers: calls with a provider's value bound;"
                " controls: counterfactual re-runs, with the value replaced or before its provider ran; "
                "sweeps: consumers run before and after a state change;"
                " probes: templates re-run in a new state)."
            )
        lines.append("")
        for f in b.get("expected_relations", []):
            lines.append(
                f"- {'found' if f['ok'] else 'missing'}: {f['provider']} -> {f['consumer']} "
                f"({', '.join(f['found_kinds']) or 'none'})"
            )
        lines.append("")
    return lines


def _section_credit() -> list[str]:
    lines: list[str] = []
    credit = _load("credit")
    if credit:
        lines += [
            "## Who provides a value: `--credit origin` (default) or `export` (the paper's)",
            "",
            "`export` also credits calls that only pass a value along (a read handing back the name it was "
            "given), so more tools have an "
            "outgoing edge (Table 3's 'no edge' is the share of dense misses with none); the generalization "
            "suite says whether those edges are dependencies.",
            "",
            "| benchmark | credit | value relations | state relations | dense R / NDCG | libra R / NDCG | no edge |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in credit["benchmarks"]:
            d, g = row["dense"], row["libra"]
            lines.append(
                f"| {row['benchmark']}@{row['k']} | {row['credit']} | {row['value_relations']} | "
                f"{row['state_relations']} | {_f(d['recall'])} / {_f(d['ndcg'])} | "
                f"{_f(g['recall'])} / {_f(g['ndcg'])} | {row['table3']['percent']['no_edge']:.1f}% |"
            )
        lines += ["", "| suite | credit | designed | found | excluded hit | relations |", "|---|---|---|---|---|---|"]
        lines += [
            (
                f"| generalization | {s['credit']} | {s['designed']} | {s['found']} | {s['excluded_hit']} | "
                f"{s['relations_total']} |"
            )
            for s in credit["suite"]
        ]
        lines.append("")
    return lines


def _section_generalization() -> list[str]:
    lines: list[str] = []
    gen = _load("generalization")
    if gen:
        lines += [
            "## Generalization suite: catalogs nobody tuned for",
            "",
            "Small catalogs written for this purpose (`tests/generalization/`), built with the defaults and no hints. "
            "Designed: relations their author designed; found: of those, how many the build kept; excluded "
            "hit: relations "
            "the catalog says must not exist that the build kept anyway.",
            "",
            "| catalog | designed | found | excluded hit | relations | build s | health warning |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, r in gen["catalogs"].items():
            warning = ((r.get("health") or {}).get("warning") or "").replace("|", "/") or "–"
            lines.append(
                f"| {name} | {r['designed']} | {r['found']} | {r['excluded_hit']} | {r['relations_total']} | "
                f"{r['build_s']:.2f} | {warning} |"
            )
        lines.append("")
    return lines


def _section_joint() -> list[str]:
    lines: list[str] = []
    joint = _load("joint")
    if joint:
        t = joint["total"]
        lines += [
            "## Several sources in one build",
            "",
            "The unrelated services of `tests/joint/` built one by one and all in one build (defaults, no hints). "
            "Separate: relations among the service's own tools its own build finds; joint: those the joint build "
            "finds; kept: the separate build's relations the joint build finds too.",
            "",
            "| service | designed | separate | joint | kept | build s alone |",
            "|---|---|---|---|---|---|",
        ]
        for name, m in joint["modules"].items():
            lines.append(
                f"| {name} | {m['designed']} | {m['separate']} | {m['joint']} | {m['kept']} | "
                f"{m['separate_build_s']:.2f} |"
            )
        lines += [
            f"| total | | {t['separate']} | | {t['kept']} ({100 * t['kept_share']:.1f}%) | "
            f"{t['separate_build_s']:.2f} (joint build {t['joint_build_s']:.2f}) |",
            "",
        ]
    return lines


def _section_library() -> list[str]:
    lines: list[str] = []
    libs = _load("library")
    if libs:
        lines += [
            "## Library files: size and load time",
            "",
            "Loading is paid once by every `libra eval --method libra` and `libra retrieve` before the first query.",
            (
                "The first load of a file also checks it against the library schema (check s); later loads of "
                "the same bytes skip the check."
            ),
            "",
            "| benchmark | file MB | format | relations | candidates | load s | check s | graph s |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, r in libs["benchmarks"].items():
            check = f"{r['check_seconds']:.2f}" if "check_seconds" in r else "–"
            lines.append(
                f"| {name} | {r['file_mb']} | {r['format_version']} | {r['relations']:,} | "
                f"{r['candidates']:,} | {r['load_seconds']:.2f} | {check} | {r['graph_seconds']:.3f} |"
            )
        lines.append("")
    return lines


def _section_eval_wall() -> list[str]:
    lines: list[str] = []
    ev = _load("eval")
    if ev:
        lines += [
            "## Evaluation wall time",
            "",
            (
                f"`{ev['command']}`: cold {ev['cold_seconds']} s, warm {ev['warm_seconds']} s (target "
                f"{ev['target_warm_seconds']} s warm)."
            ),
            "",
        ]
    return lines


def _section_invoke() -> list[str]:
    lines: list[str] = []
    inv = _load("invoke")
    if inv:
        lines += [
            "## Isolated invocations (BFCL)",
            "",
            "```json",
            json.dumps({k: v for k, v in inv.items() if k not in ("machine", "commit")}, indent=1)[:3000],
            "```",
            "",
        ]
    return lines


def _section_hostile() -> list[str]:
    lines: list[str] = []
    hostile = _load("hostile")
    if hostile:
        lines += [
            "## A build over hostile tools",
            "",
            f"{hostile['settings']['tools']} tools (huge, cyclic and odd outputs, printing, environment, "
            "directory and module changes) built "
            f"with {hostile['settings']['workers']} isolated workers in {hostile['build_s']} s; create_item "
            f"-> get_item found: {hostile['relation_found']}; "
            f"caller peak RSS {hostile['caller_peak_rss_mb']} MB "
            f"({hostile['caller_peak_rss_mb_before_build']} MB before the build, with the "
            f"{hostile['settings']['embedder']} embedder loaded; limit {hostile['caller_peak_limit_mb']} MB).",
            "",
        ]
    return lines


def _section_appworld_sandbox() -> list[str]:
    lines: list[str] = []
    aw = _load("appworld-sandbox")
    if aw:
        t = aw["timings"]
        lines += [
            "## AppWorld sandbox (inside its own environment)",
            "",
            "| what | value |",
            "|---|---|",
            f"| server start (imports, tables) | {t['start_s']:.2f} s |",
            f"| fresh state (sign-ups, records) | {t['fresh_s']:.2f} s |",
            f"| state size | {t['state_bytes'] / 1e6:.2f} MB |",
            f"| full reset (restore every app) | {t['full_reset_ms']:.2f} ms |",
            f"| read call | {t['read_call_ms']:.2f} ms |",
            f"| read call after switching state | {t['read_call_with_reset_ms']:.2f} ms |",
            f"| write call (with serialize + diff) | {t['write_call_ms']:.2f} ms |",
            "",
        ]
    return lines


def _section_llm_proposer() -> list[str]:
    lines: list[str] = []
    llm = _load("llm-bfcl")
    if llm:
        lines += [
            "## LLM proposer against a local OpenAI-compatible stub (BFCL)",
            "",
            f"First build: {llm['first_build']['http_requests']} chat requests for {llm['tools']} tools "
            f"(limit {llm['max_calls_allowed']}); "
            f"rebuild with the response cache: {llm['second_build']['http_requests']} requests; same edges: "
            f"{llm['same_edges']}.",
            "",
        ]
    return lines


def _section_llm_methods() -> list[str]:
    lines: list[str] = []
    lm = _load("llm-methods-bfcl")
    if lm:
        lines += [
            "## LLM retrieval methods against the scripted stub endpoint (BFCL; costs only)",
            "",
            "| method | chat requests | per tool | per task | wall s | rerun requests |",
            "|---|---|---|---|---|---|",
        ]
        for name, row in lm["methods"].items():
            per = ["–" if row[k] is None else row[k] for k in ("calls_per_tool", "calls_per_task")]
            lines.append(
                f"| {name} | {row['http_requests']} | {per[0]} | {per[1]} | {row['wall_seconds']} | "
                f"{row['rerun_http_requests']} |"
            )
        exp = lm["expected_calls"]
        lines += [
            "",
            "| catalog | tools | toolrex | tgr-adapt (10 neighbours / all pairs) | ego-trip | toolreagt (max) |",
            "|---|---|---|---|---|---|",
        ]
        for cat, e in exp.items():
            lines.append(
                f"| {cat} | {e['tools']} | {e['toolrex']['min']}-{e['toolrex']['max']} | <= "
                f"{e['tgr-adapt']['max_neighbour_pairs']} / {e['tgr-adapt']['all_pairs']} | "
                f"{e['ego-trip']} | {e['toolreagt']['max_total']} |"
            )
        lines.append("")
    return lines


def _section_serve() -> list[str]:
    lines: list[str] = []
    srv = _load("serve")
    if srv:
        st, load = srv["startup"], srv["http_load"]
        lines += [
            "## libra serve (AppWorld library, official MCP client)",
            "",
            (
                f"Search index open {srv['open_seconds']:.3f} s (a full library load: "
                f"{srv['library_load_seconds']:.2f} s); "
                f"stdio start to handshake {st['ready_seconds']:.2f} s, to the first result "
                f"{st['first_result_seconds']:.2f} s"
                + (
                    f" (importing the MCP SDK's server alone: {srv['mcp_import_seconds']:.2f} s)."
                    if "mcp_import_seconds" in srv
                    else "."
                )
            ),
            "",
            (
                "| search_tools, k = 5 | calls | p50 ms | p99 ms | errors | server CPU ms per call | client CPU "
                "ms per call |"
            ),
            "|---|---|---|---|---|---|---|",
            _serve_row("stdio, one client", srv["stdio"]),
            _serve_row("HTTP, one client", srv["http"]),
            *(
                [_serve_row("stdio, the same queries again (query cache)", srv["stdio_repeated"])]
                if "stdio_repeated" in srv
                else []
            ),
            *([_embedding_row(srv["embedding"])] if "embedding" in srv else []),
            *(
                [_embedding_row(srv["embedding_package_graph"], " as its package ships it (unfused graph)")]
                if "embedding_package_graph" in srv
                else []
            ),
            (
                f"| HTTP, {load['clients']} clients for {load['seconds']:.0f} s | {load['served']:,} | "
                f"{load.get('p50_ms', 0):.1f} | {load.get('p99_ms', 0):.1f} | {load['errors']} | "
                f"{_per_call(load.get('server_cpu_seconds'), load['served'])} | "
                f"{_per_call(load.get('clients_cpu_seconds'), load['served'])} |"
            ),
            "",
            *(
                [
                    (
                        f"Machine load average (1 min) {srv['load_average']['before']} before, "
                        f"{srv['load_average']['after']} after, on {srv['machine']['cpus']} CPUs "
                        "(the machine may be shared). Every query of the one-client rows is new to the "
                        "server except the cache row; "
                        "every load-test query is unique."
                    ),
                    "",
                ]
                if "load_average" in srv
                else []
            ),
            *(
                [
                    (
                        "A new query's CPU ms by phase, in-process: "
                        + ", ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in srv["phases_cpu_ms"].items())
                        + "."
                    ),
                    "",
                ]
                if "phases_cpu_ms" in srv
                else []
            ),
            *_serve_previous_lines(srv),
        ]
    return lines


def _serve_previous_lines(srv: dict) -> list[str]:
    """The retrieval default beside the previous one, in the same run (alternating rounds of new queries)."""
    prev = srv.get("previous")
    if not prev or "stdio_alternating" not in srv:
        return []
    now, before = srv["stdio_alternating"], prev["stdio_alternating"]
    return [
        "The retrieval default against the previous one (dense base, one hop, Ks 15), same run, alternating rounds "
        "of new queries over stdio:",
        "",
        "| default | p50 ms | p99 ms | server peak RSS MB | search index open + model load s |",
        "|---|---|---|---|---|",
        f"| current | {now['p50_ms']:.1f} | {now['p99_ms']:.1f} | {now['server_peak_rss_mb']:.0f} | "
        f"{srv['open_and_model_seconds']:.2f} |",
        f"| previous | {before['p50_ms']:.1f} | {before['p99_ms']:.1f} | {before['server_peak_rss_mb']:.0f} | "
        f"{prev['open_and_model_seconds']:.2f} |",
        "",
    ]


def _section_workspace() -> list[str]:
    lines: list[str] = []
    ws = _load("workspace")
    if ws:
        lines += [
            "## examples/workspace: four MCP servers in one sandbox",
            "",
            f"`{ws['command']}`: {ws['tools']} tools, {len(ws['relations'])} relations, wall time "
            f"{ws['build_wall_seconds']} s "
            f"on {ws['machine']['cpus']} CPUs (whole command, server starts included). Tools never seen succeeding: "
            f"{', '.join(ws['health']['tools_never_succeeded']) or 'none'}.",
            "",
            "| method | K | P | R | NDCG |",
            "|---|---|---|---|---|",
        ]
        for k, methods in ws["eval"].items():
            lines += [
                f"| {m} | {k} | {r['precision']:.1f} | {r['recall']:.1f} | {r['ndcg']:.1f} |"
                for m, r in methods.items()
            ]
        lines += [
            "",
            f"Eval over the example's {ws['n_tasks']} tasks (`examples/workspace/tasks.jsonl`). Relations:",
            "",
            "```",
            *ws["relations"],
            "```",
            "",
        ]
    return lines


def _section_ray() -> list[str]:
    lines: list[str] = []
    rays = _load("ray")
    if rays:
        lines += _ray_lines(rays)
    return lines


def _section_propagation() -> list[str]:
    lines: list[str] = []
    prop = _load("propagation")
    if prop:
        lines += [
            "## Propagation cost per query",
            "",
            "| graph | tools | edges | dense ms | + propagation ms | added ms | target |",
            "|---|---|---|---|---|---|---|",
        ]
        for name in ("bfcl", "synthetic"):
            r = prop.get(name) or {}
            if "added_ms" in r:
                lines.append(
                    f"| {name} | {r['tools']:,} | {r['edges']:,} | {r['dense_ms']:.3f} | "
                    f"{r['dense_plus_propagation_ms']:.3f} | {r['added_ms']:.3f} | <= {r['target_added_ms']} "
                    "|"
                )
        lines.append("")
    return lines


SECTIONS = (
    _section_retrieval,
    _section_documents,
    _section_build_cpu,
    _section_defaults,
    _section_builds,
    _section_credit,
    _section_generalization,
    section_blind,
    section_agentdojo,
    _section_joint,
    _section_library,
    _section_eval_wall,
    _section_invoke,
    _section_hostile,
    _section_appworld_sandbox,
    _section_llm_proposer,
    _section_llm_methods,
    _section_serve,
    _section_workspace,
    _section_ray,
    _section_propagation,
)


def main() -> None:
    lines = [
        "# Measured results",
        "",
        "Generated by `make bench` (`benchmarks/report.py`) from `benchmarks/results/*.json`. Do not edit by hand.",
        "",
    ]
    for section in SECTIONS:
        lines += section()
    machine = (_load("propagation") or _load("eval") or {}).get("machine")
    if machine:
        lines += [f"Machine: {machine['cpus']} CPUs, Python {machine['python']}, {machine['platform']}."]
    (ROOT / "docs").mkdir(exist_ok=True)
    (ROOT / "docs" / "results.md").write_text("\n".join(lines) + "\n")
    print("wrote docs/results.md")


def _ray_lines(r: dict) -> list[str]:
    """Builds on Ray: the overhead on this machine, one call's cost, and the AppWorld model (bench_ray.py)."""
    d = r["dispatch"]
    out = [
        "## Builds on Ray",
        "",
        "Wall: the whole build; s in batches: the time the build waited on tool calls (the rest is the "
        "caller's own work, the "
        "same code either way, so on a shared machine it mostly shows the load).",
        "",
        f"On {r['machine']['cpus']} CPUs, {r['workers']} workers each way (a private local Ray started by the build). "
        f"One cheap BFCL call costs the caller {d['local_ms_per_call']:.3f} ms through the local pool and "
        f"{d['ray_ms_per_call']:.3f} ms through Ray "
        f"(+{d['ray_added_ms_per_call']:.3f} ms); starting the local Ray takes {d['ray_start_s']:.1f} s and "
        f"stopping it {d['ray_stop_s']:.1f} s.",
        "",
        (
            "| benchmark | executor | wall s | s in batches | executed calls | calls/s per worker | Ray overhead "
            "(wall / batches) | identical relations |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, b in r.get("builds", {}).items():
        for ex in ("local", "ray"):
            row = b[ex]
            in_batches = row["batches"]["seconds_in_batches"]
            extra = (
                (
                    f"{b['ray_overhead_pct']:+.1f}% / "
                    f"{100 * (in_batches / b['local']['batches']['seconds_in_batches'] - 1):+.1f}%"
                )
                if ex == "ray"
                else ""
            )
            same = str(b["identical_relations"]) if ex == "ray" else ""
            out.append(
                f"| {name} | {ex} | {row['wall_s']:.1f} | {in_batches:.1f} | {row['executed_calls']:,} | "
                f"{row['calls_per_s_per_worker']:.1f} | {extra} | {same} |"
            )
    m = r.get("appworld_model")
    if m:
        s, f = m["sample"], m["full_build"]
        out += [
            "",
            (
                f"AppWorld on N workers, modelled from a {s['max_calls']:,}-call build observed batch by "
                f"batch ({s['waves']} waves, "
                f"{s['engine_batches']} engine batches; {s['contract_calls']:,} contract-check calls, sent "
                "one at a time) and scaled to the full "
                f"build's statistics ({f['executed_calls']:,} calls, {f['waves']} waves, about "
                f"{f['batches_estimated']:,} batches of "
                f"{f['calls_per_batch']:.0f} calls, {f['wall_s_on_2']:.0f} s on {f['workers']} workers; load "
                f"factor {m['load_scale']}): "
                f"{m['per_call_ms']:.2f} ms per call on a worker, {m['contract_call_ms']:.2f} ms per "
                "contract-check call, "
                f"{m['caller_ms_per_call']:.3f} ms of the caller's own work per executed call."
            ),
            "",
            (
                "| workers | caller s | contract calls s | engine calls s | batch floor s | wall local s | "
                "speed-up | + Ray dispatch s | wall Ray s |"
            ),
            "|---|---|---|---|---|---|---|---|---|",
        ]
        out += [
            f"| {w['workers']} | {w['caller_s']:.0f} | {w['contract_calls_s']:.0f} | "
            f"{w['engine_calls_s']:.0f} | {w['batch_floor_s']:.0f} | "
            f"{w['wall_local_s']:.0f} | {w['speedup_local']:.1f} | {w['ray_dispatch_s']:.0f} | {w['wall_ray_s']:.0f} |"
            for w in m["rows"]
        ]
        out += [
            "",
            (
                f"At 96 workers the largest part is {m['largest_part_at_96']}: it does not shrink with "
                "workers, so it stops scaling first. "
                "Caller: the engine's own work and the build's set-up, serial. Batch floor: one call per "
                "batch whatever the number of "
                "workers (the critical path of the waves). Ray dispatch: Ray's added cost per call measured "
                "above, counted as if the caller "
                "paid it serially (an upper bound)."
            ),
        ]
    return out + [""]


if __name__ == "__main__":
    main()
