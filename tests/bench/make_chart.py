#!/usr/bin/python3
"""Write a realistic matplotlib line chart (an energy-anomaly style plot:
several series, legend, grid, annotations) as PNG.
usage: make_chart.py OUT.png [WIDTH HEIGHT]  (pixels, default 1600 900)"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

out = sys.argv[1]
w = int(sys.argv[2]) if len(sys.argv) > 2 else 1600
h = int(sys.argv[3]) if len(sys.argv) > 3 else 900
rng = np.random.default_rng(7)
t = np.arange(24 * 60)
fig, ax = plt.subplots(figsize=(w / 100, h / 100), dpi=100)
for i, name in enumerate(["site A", "site B", "site C", "site D"]):
    base = 50 + 10 * i + 8 * np.sin(2 * np.pi * t / (24 * 6) + i)
    y = base + rng.normal(0, 2.5, t.size).cumsum() * 0.05
    ax.plot(t, y, lw=1.2, label=f"{name} (kWh)")
    idx = rng.choice(t.size, 6, replace=False)
    ax.scatter(t[idx], y[idx], s=40, marker="o", edgecolor="k", zorder=3)
ax.axhspan(80, 90, color="tab:red", alpha=0.12, label="anomaly band")
ax.set_title("Energy consumption with detected anomalies")
ax.set_xlabel("minutes since midnight")
ax.set_ylabel("consumption (kWh)")
ax.grid(True, alpha=0.4)
ax.legend(loc="upper left")
fig.tight_layout()
fig.savefig(out, dpi=100)
