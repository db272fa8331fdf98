"""python -m bench [--quick] [--only training,decoding,app,scaling,heads] [--json results.json]

Prints Markdown tables (docs/benchmarks.md is this output) for: a training step against
torch.nn.Transformer, greedy decoding by three decoders, the app's core call, scaling with
sentence length, and the head atlas with live ablation in the browser. Noisy machines: compare
ratios measured in one run, not runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench import app_path, decoding, explain, heads, scaling, training
from bench.timing import machine
from bench.workload import load_workload
from core.io.checkpoint import load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT, ROOT

SECTIONS = ("training", "decoding", "app", "scaling", "heads", "explain")
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "cmn.txt"


def table(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown table; floats with 1 decimal (2 below 10)."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"
        return str(value)

    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(row[key]) for key in header) + " |" for row in rows]
    return "\n".join(lines)


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def browser_table(live: dict[str, Any] | str, row: Callable[[dict[str, Any]], dict[str, Any]], what: str) -> str:
    """A browser measurement's one-row table, or the reason it was not measured."""
    return table([row(live)]) + "\n" if isinstance(live, dict) else f"{what}: {live}.\n"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[1])
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT), help="a Transformer checkpoint")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the checkpoint's training data (its split)")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated subset of {', '.join(SECTIONS)}")
    parser.add_argument("--quick", action="store_true", help="small counts: checks that everything runs")
    parser.add_argument("--no-browser", action="store_true", help="skip the app server's memory (needs Chromium)")
    parser.add_argument("--json", type=Path, help="also write every number to this file")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # nn.Transformer announces its nested-tensor fast path; the benchmark keeps torch's defaults.
    warnings.filterwarnings("ignore", message=".*nested.tensor", category=UserWarning)
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        raise SystemExit(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    loaded = load_checkpoint(args.checkpoint)
    if loaded.config.arch != "transformer":
        raise SystemExit("the benchmarks compare against torch.nn.Transformer: give a Transformer checkpoint")
    workload = load_workload(loaded, args.data)
    counts = (
        {
            "sentences": 12,
            "repeats": 1,
            "batches": 2,
            "rounds": 1,
            "runs": 5,
            "per_length": 1,
            "fixed": 4,
            "atlas": 20,
            "toggles": 2,
            "explain": 3,
        }
        if args.quick
        else {
            "sentences": 200,
            "repeats": 3,
            "batches": 10,
            "rounds": 5,
            "runs": 50,
            "per_length": 3,
            "fixed": 50,
            "atlas": 500,
            "toggles": 10,
            "explain": 10,
        }
    )
    results: dict[str, Any] = {"machine": machine(), "checkpoint": Path(args.checkpoint).name}
    print("## Machine\n\n" + table([results["machine"]]) + "\n", flush=True)

    if "training" in sections:
        r = results["training"] = training.run(workload, counts["batches"], counts["rounds"])
        row = {
            "model": r["config"],
            "batches × rounds": f"{r['batches']} × {r['rounds']}",
            "ours tokens/s": r["ours_tokens_per_s"],
            "nn.Transformer tokens/s": r["torch_tokens_per_s"],
            "ratio ours/torch (median)": r["ratio"],
            "ratio range over rounds": f"{min(r['ratios']):.2f}–{max(r['ratios']):.2f}",
            "goal ≥ 1.0": verdict(r["ratio"] >= 1.0),
        }
        print("## 1. Training step (forward, backward, AdamW)\n\n" + table([row]) + "\n", flush=True)

    if "decoding" in sections:
        sentences = workload.held_out(counts["sentences"])
        r = results["decoding"] = decoding.run(
            loaded.model, loaded.pipeline, sentences, counts["repeats"], fixed_count=counts["fixed"]
        )
        identical = all(len(set(row["same_tokens_as_cached"].split("/"))) == 1 for row in r["rows"])
        speedup = r["cached_speedup_over_recompute_30"]
        print(
            f"## 2. Greedy decoding of {r['sentences']} held-out sentences (median of {r['repeats']} per sentence)\n\n"
            + table(r["rows"])
            + f"\n\nAt {r['fixed_steps']} output tokens: cached is {speedup:.2f}× full recompute "
            f"(goal ≥ 2: {verdict(speedup >= 2)}), {r['cached_speedup_over_torch_30']:.2f}× nn.Transformer; "
            f"identical tokens in every row: {identical}.\n",
            flush=True,
        )

    if "app" in sections:
        r = results["app"] = app_path.run(args.checkpoint, counts["runs"], not args.no_browser)
        shape = f"{r['source_tokens']} source → {r['output_tokens']} output tokens"
        rows = [
            {
                "trace of " + shape: label,
                "p50 ms": r[f"{key}_trace_ms_p50"],
                "p90 ms": r[f"{key}_trace_ms_p90"],
                "goal p50 ≤ 50 ms": verdict(r[f"{key}_trace_ms_p50"] <= 50),
            }
            for key, label in (
                ("app", "as in the app (a script thread)"),
                ("default", "main thread"),
            )
        ]
        memory = {
            "trace JSON KB": r["trace_json_kb"],
            "model load ms (median of 3)": r["load_ms_median"],
            "RSS python + torch MB": r["rss_python_and_torch_mb"],
            "RSS model loaded + traces MB": r["rss_model_loaded_mb"],
        }
        server = r["app_server_rss_mb"]
        server_line = (
            f"App server RSS: {server['server_started']:.0f} MB started, {server['after_first_page']:.0f} MB after "
            "rendering the Translate page in Chromium."
            if isinstance(server, dict)
            else f"App server RSS: {server}."
        )
        print(
            f"## 3. App path ({r['runs']} traces each)\n\n{table(rows)}\n\n{table([memory])}\n\n{server_line}\n",
            flush=True,
        )

    if "scaling" in sections:
        rows = results["scaling"] = scaling.run(
            loaded.model, loaded.pipeline, workload.held_out(400), counts["per_length"], counts["repeats"]
        )
        print("## 4. Scaling with sentence length (batch 1, medians)\n\n" + table(rows) + "\n", flush=True)

    if "heads" in sections:
        r = results["heads"] = {"atlas": heads.atlas(loaded, *workload.dev(counts["atlas"]))}
        atlas = r["atlas"]
        row = {
            "dev sentences": atlas["sentences"],
            "heads": atlas["heads"],
            "seconds (statistics, every head off alone, pruning)": atlas["seconds"],
            "goal ≤ 180 s for 500": verdict(atlas["seconds"] <= 180) if atlas["sentences"] >= 500 else "—",
            "prunable within 1 BLEU": atlas["prunable_within_1_bleu"],
            "alignment head (AER)": f"{atlas['alignment_head']} ({atlas['alignment_head_aer']})",
        }
        lines = [f"## 5. Head atlas and live ablation\n\n{table([row])}\n"]
        if not args.no_browser:
            live = r["browser"] = heads.browser_toggles(counts["toggles"])
            row = lambda live: {  # noqa: E731
                "clicks": live["toggles"],
                "head toggle → re-translated page, median ms": live["heads_ms_median"],
                "hello-world button → rerun, median ms": live["hello_ms_median"],
                "goal ≤ 1000 ms": verdict(live["heads_ms_median"] <= 1000),
            }
            lines.append(browser_table(live, row, "Live ablation in Chromium"))
        print("\n".join(lines), flush=True)

    if "explain" in sections:
        sentences = explain.ten_word_sentences(workload.held_out(2000), counts["explain"])
        r = results["explain"] = {"methods": explain.methods(loaded, sentences)}
        m = r["methods"]
        row = {
            "sentences": m["sentences"],
            "words (median)": m["words_median"],
            "output tokens (median)": m["steps_median"],
            **{f"{name} ms": ms for name, ms in m["ms_median"].items()},
            "IG completeness gap median / max": f"{m['ig_gap_median']:.1%} / {m['ig_gap_max']:.1%}",
            "goal IG ≤ 2000 ms, gap < 5%": verdict(m["ms_median"]["ig"] <= 2000 and m["ig_gap_max"] < 0.05),
            "goal norm, rollout ≤ 50 ms": verdict(max(m["ms_median"]["norm"], m["ms_median"]["rollout"]) <= 50),
        }
        lines = [f"## 6. Explaining every output token (medians per sentence)\n\n{table([row])}\n"]
        if not args.no_browser:
            live = r["browser"] = explain.browser_enter(sentences)
            row = lambda live: {  # noqa: E731
                "new sentences": live["sentences"],
                "Ctrl+Enter → Explain page's 4 charts drawn, median ms": live["explain_ms_median"],
                "hello-world button → rerun, median ms": live["hello_ms_median"],
                "goal ≤ 2000 ms": verdict(live["explain_ms_median"] <= 2000),
            }
            lines.append(browser_table(live, row, "Explain page in Chromium"))
        print("\n".join(lines), flush=True)

    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
