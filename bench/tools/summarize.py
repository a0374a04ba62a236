#!/usr/bin/env python3
"""Figures of several tabbard-bench runs side by side, with the range and how often
each target was met: python3 bench/tools/summarize.py .bench/a.json .bench/b.json …"""
import json, sys

runs = [(p, json.load(open(p))) for p in sys.argv[1:]]
metrics = []
for _, j in runs:
    for t in j["table"]:
        if t["metric"] not in metrics:
            metrics.append(t["metric"])
print("| metric | " + " | ".join(p.split("/")[-1].removesuffix(".json") for p, _ in runs) + " | target | met |")
print("|---|" + "---|" * len(runs) + "---|---|")
for m in metrics:
    cells, target, met, n = [], "", 0, 0
    for _, j in runs:
        t = next((t for t in j["table"] if t["metric"] == m), None)
        if not t:
            cells.append("")
            continue
        cells.append(t["tabbard"] + (f" ({t['reference']})" if "floor" in t["reference"] or "aplay" in t["reference"] else ""))
        target = t["target"] or target
        if t["verdict"]:
            n += 1
            met += t["verdict"] == "met"
    print(f"| {m} | " + " | ".join(cells) + f" | {target} | {f'{met}/{n}' if n else ''} |")
bg = [j.get("background_cpu_percent", {}) for _, j in runs]
print("| other load before / during idle window | " + " | ".join(f"{b.get('before_run', '?')}% / {b.get('during_idle_window', '?')}%" for b in bg) + " | | |")
