"""Find unusual energy use in hourly building meter data.

Baseline ("what would this hour normally use?"):
    energy = profile[hour of week]
             + heating slope * max(0, Th - T) + cooling slope * max(0, T - Tc)
  with heating/cooling slopes for each hour of the day, weekdays and
  weekends apart (HVAC runs on a schedule), balance points Th/Tc chosen by
  least squares, and a robust refit that ignores hours the first fit could
  not explain.

Scores: residual / (1.4826 * MAD of residuals), the scale estimated per
hour of the day and day type (noise grows with load).

Events: hours with |score| >= 3 are candidates; candidates less than 4 hours
apart are merged; an event is kept if it is strong (peak |score| >= 8) or
sustained (>= 4 hours with mean |score| >= 3.5). Runs of missing or zero
readings are reported as meter dropouts.

Writes output/anomalies.csv, output/energy_anomalies.png and
output/anomaly_report.md.
"""
import os

import numpy as np
import pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.dates as mdates
import matplotlib.pyplot as plt

SRC = "input/building_energy.csv"
OUT = "output"
CAND_Z = 3.0        # candidate hour
MERGE_GAP_H = 4     # merge candidates closer than this
STRONG_Z = 8.0      # a single hour this extreme is an event on its own
SUSTAIN_H = 4       # ...otherwise at least this many hours
SUSTAIN_Z = 3.5     # ...with at least this mean |score|
HOT_DAY_MAX_C = 30.0
HOUR = pd.Timedelta(hours=1)

os.makedirs(OUT, exist_ok=True)

# ---------------------------------------------------------------- load
df = pd.read_csv(SRC, parse_dates=["timestamp"])
df = df.sort_values("timestamp").set_index("timestamp")
full = pd.date_range(df.index.min(), df.index.max(), freq=HOUR)
df = df.reindex(full)                      # make gaps in the index explicit
df.index.name = "timestamp"
y = df["energy_kwh"]
temp = df["outdoor_temp_c"].interpolate(limit_direction="both")
missing = y.isna() | (y <= 0)              # no reading, or a zero reading
how = np.asarray(df.index.dayofweek * 24 + df.index.hour)  # hour of week 0..167
ok = ~missing.to_numpy()
yv = y.to_numpy(dtype=float)
tv = temp.to_numpy(dtype=float)

# Temperature sensitivity follows the HVAC schedule, so the heating and
# cooling slopes may differ for every hour of the day, weekdays vs weekends.
weekend = np.asarray(df.index.dayofweek >= 5)
sgrp = np.asarray(df.index.hour) + 24 * weekend        # 48 slope groups
# Occupied hours (for the noise scale and the report): hour-of-week median
# in the upper half of its range.
prof = pd.Series(yv[ok]).groupby(how[ok]).median().reindex(range(168))
occ = (prof > prof.min() + 0.5 * (prof.max() - prof.min())).to_numpy()[how]


def degree_terms(th, tc):
    return np.maximum(0.0, th - tv), np.maximum(0.0, tv - tc)


def fit(th, tc, use):
    """Least squares: hour-of-week intercepts + per-group HDD/CDD slopes.

    Intercepts are removed by demeaning within each hour of the week; the
    two slopes of each group then come from its 2x2 normal equations."""
    hdd, cdd = degree_terms(th, tc)
    g = how[use]
    n = np.bincount(g, minlength=168).astype(float)
    mean = lambda v: np.bincount(g, weights=v[use], minlength=168) / n
    ym, hm, cm = mean(yv), mean(hdd), mean(cdd)
    yd, hd, cd = yv[use] - ym[g], hdd[use] - hm[g], cdd[use] - cm[g]
    s = sgrp[use]
    S = lambda v: np.bincount(s, weights=v, minlength=48)
    a, b, c = S(hd * hd) + 1e-6, S(hd * cd), S(cd * cd) + 1e-6
    p, q = S(hd * yd), S(cd * yd)
    det = a * c - b * b
    bh, bc = (c * p - b * q) / det, (a * q - b * p) / det
    sg_of_how = (np.arange(168) % 24) + 24 * (np.arange(168) >= 120)
    alpha = ym - hm * bh[sg_of_how] - cm * bc[sg_of_how]
    pred = alpha[how] + hdd * bh[sgrp] + cdd * bc[sgrp]
    return pred, bh, bc


# Balance points: grid search on the hours with a reading.
best = None
for th in np.arange(10.0, 20.01, 0.5):
    for tc in np.arange(th, 26.01, 0.5):
        pred, _, _ = fit(th, tc, ok)
        sse = float(np.sum((yv[ok] - pred[ok]) ** 2))
        if best is None or sse < best[0]:
            best = (sse, th, tc)
_, TH, TC = best


def robust_z(resid, use):
    """Residual / (1.4826 * MAD), scale per slope group (noise grows with
    load)."""
    z = np.full(len(resid), np.nan)
    for k in range(48):
        m = use & (sgrp == k)
        med = np.median(resid[m])
        mad = 1.4826 * np.median(np.abs(resid[m] - med))
        sel = ok & (sgrp == k)
        z[sel] = (resid[sel] - med) / mad
    return z


# Robust refit: drop hours the previous fit could not explain, fit again.
use = ok.copy()
for _ in range(3):
    pred, bh, bc = fit(TH, TC, use)
    z = robust_z(yv - pred, use)
    use = ok & (np.abs(z) < CAND_Z)
pred, bh, bc = fit(TH, TC, use)
resid = yv - pred
z = robust_z(resid, use)
r2 = 1.0 - np.sum(resid[ok] ** 2) / np.sum((yv[ok] - yv[ok].mean()) ** 2)
noise = {name: 1.4826 * np.median(np.abs(resid[use & m]
                                         - np.median(resid[use & m])))
         for name, m in (("occupied", occ), ("unoccupied", ~occ))}
work = [h for h in range(9, 17)]                  # weekday working hours
night = [h for h in range(0, 5)] + [h + 24 for h in range(24)]
slopes = (bh[work].mean(), bh[night].mean(), bc[work].mean(),
          bc[night].mean())

df["expected_kwh"] = pred
df["score"] = z

# ---------------------------------------------------------------- events
def runs(mask):
    """(start_index, end_index) of runs of True, inclusive."""
    m = np.concatenate([[False], mask, [False]]).astype(int)
    d = np.diff(m)
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1) - 1))


events = []
for a, b in runs(missing.to_numpy()):
    events.append(dict(i0=a, i1=b, kind="meter_dropout", peak=np.nan))

cand = ok & (np.abs(z) >= CAND_Z)
for sign in (1, -1):
    idx = np.flatnonzero(cand & (np.sign(z) == sign))
    groups = []
    for i in idx:
        if groups and i - groups[-1][-1] < MERGE_GAP_H:
            groups[-1].append(i)
        else:
            groups.append([i])
    for g in groups:
        a, b = g[0], g[-1]
        zz = np.abs(z[a:b + 1])
        zz = zz[~np.isnan(zz)]
        hours = b - a + 1
        strong = zz.max() >= STRONG_Z
        sustained = hours >= SUSTAIN_H and zz.mean() >= SUSTAIN_Z
        if not (strong or sustained):
            continue
        ts = df.index[a:b + 1]
        wk_share = np.mean(ts.dayofweek >= 5)
        if sign < 0:
            kind = "low_use"
        elif hours <= 2:
            kind = "spike"
        elif wk_share >= 0.5:
            kind = "equipment_left_on"
        elif hours >= 24:
            kind = "baseload_step"
        else:
            kind = "excess_use"
        events.append(dict(i0=a, i1=b, kind=kind, peak=float(zz.max())))

in_event = np.zeros(len(df), bool)
for e in events:
    in_event[e["i0"]:e["i1"] + 1] = True
z_normal = float(np.nanmax(np.abs(z[~in_event])))

rows = []
for e in sorted(events, key=lambda e: e["i0"]):
    seg = df.iloc[e["i0"]:e["i1"] + 1]
    rows.append(dict(
        start=seg.index[0].strftime("%Y-%m-%d %H:%M"),
        end=seg.index[-1].strftime("%Y-%m-%d %H:%M"),
        kind=e["kind"],
        hours=len(seg),
        mean_energy_kwh=seg["energy_kwh"].mean(),
        expected_kwh=seg["expected_kwh"].mean(),
        excess_kwh=(seg["energy_kwh"] - seg["expected_kwh"]).sum(min_count=1),
        mean_temp_c=seg["outdoor_temp_c"].mean(),
        score=seg["score"].abs().mean(),
        peak_score=e["peak"],
    ))
cols = ["start", "end", "kind", "hours", "mean_energy_kwh", "expected_kwh",
        "excess_kwh", "mean_temp_c", "score", "peak_score"]
anom = pd.DataFrame(rows, columns=cols)
anom.to_csv(os.path.join(OUT, "anomalies.csv"), index=False,
            float_format="%.1f")

# ---------------------------------------------------------------- hot spells
daily = df.resample("D").agg({"outdoor_temp_c": ["mean", "max"]})
daily.columns = ["tmean", "tmax"]
hot_days = (daily["tmax"] >= HOT_DAY_MAX_C).to_numpy()
hot = []
for a, b in runs(hot_days):
    if b - a + 1 < 3:
        continue
    t0 = daily.index[a]
    t1 = daily.index[b] + pd.Timedelta(hours=23)
    seg = df.loc[t0:t1]
    # Same hours of the week in the two weeks before and after.
    ref = pd.concat([df.loc[t0 + k * pd.Timedelta(days=7):
                            t1 + k * pd.Timedelta(days=7)]
                     for k in (-2, -1, 1, 2)])
    hot.append(dict(
        start=t0, end=t1, days=b - a + 1,
        tmax=seg["outdoor_temp_c"].max(), tmean=seg["outdoor_temp_c"].mean(),
        energy=seg["energy_kwh"].mean(), expected=seg["expected_kwh"].mean(),
        ref_energy=ref["energy_kwh"].mean(),
        ref_temp=ref["outdoor_temp_c"].mean(),
        maxz=np.nanmax(np.abs(seg["score"])),
    ))

# ---------------------------------------------------------------- chart
COL = {"meter_dropout": "0.35", "spike": "tab:red",
       "equipment_left_on": "tab:purple", "baseload_step": "tab:orange",
       "excess_use": "tab:red", "low_use": "tab:blue"}
zooms = [("A%d" % (i + 1), r) for i, r in enumerate(rows)]
zooms += [("H%d" % (i + 1), h) for i, h in enumerate(hot)]

fig = plt.figure(figsize=(16, 9), dpi=100)
gs = fig.add_gridspec(3, max(1, len(zooms)), height_ratios=[2.4, 1.0, 1.9],
                      hspace=0.38, wspace=0.3, left=0.05, right=0.96,
                      top=0.93, bottom=0.06)
ax = fig.add_subplot(gs[0, :])
axt = fig.add_subplot(gs[1, :], sharex=ax)
# Year overview: daily range of the hourly values (shaded) + daily mean.
day = df.resample("D").agg(["min", "max", "mean"])
dx = day.index + pd.Timedelta(hours=12)
ax.fill_between(dx, day[("energy_kwh", "min")], day[("energy_kwh", "max")],
                color="tab:blue", alpha=0.25, lw=0, label="hourly range")
ax.plot(dx, day[("energy_kwh", "mean")], lw=1.2, color="navy",
        label="daily mean")
ax.plot(dx, day[("expected_kwh", "mean")], lw=0.9, color="0.35", ls="--",
        label="expected (daily mean)")
axt.fill_between(dx, day[("outdoor_temp_c", "min")],
                 day[("outdoor_temp_c", "max")], color="tab:red", alpha=0.25,
                 lw=0)
axt.plot(dx, day[("outdoor_temp_c", "mean")], lw=1.0, color="darkred")
ymax = np.nanmax(yv) * 1.12
for lab, r in zooms:
    if lab.startswith("H"):
        s, e, c = r["start"], r["end"] + HOUR, "gold"
    else:
        s = pd.Timestamp(r["start"])
        e = pd.Timestamp(r["end"]) + HOUR
        c = COL[r["kind"]]
    width = max(e - s, pd.Timedelta(hours=30))   # keep short events visible
    mid = s + (e - s) / 2
    for a_ in (ax, axt):
        a_.axvspan(mid - width / 2, mid + width / 2, color=c, alpha=0.35, lw=0)
    ax.text(mid, 1.01, lab, ha="center", va="bottom", fontsize=10,
            fontweight="bold", transform=ax.get_xaxis_transform())
ax.set_ylim(0, ymax)
ax.set_ylabel("energy (kWh per hour)")
ax.set_title("Building energy 2024: detected anomalies (A) and hot spells "
             "explained by temperature (H)", fontsize=13, pad=20)
ax.legend(loc="upper left", fontsize=9, ncol=3)
axt.set_ylabel("outdoor (C)")
axt.xaxis.set_major_locator(mdates.MonthLocator())
axt.xaxis.set_major_formatter(mdates.DateFormatter("%b"))
plt.setp(ax.get_xticklabels(), visible=False)
for a_ in (ax, axt):
    a_.grid(alpha=0.3)
    a_.set_xlim(df.index[0], df.index[-1])

for k, (lab, r) in enumerate(zooms):
    z_ax = fig.add_subplot(gs[2, k])
    if lab.startswith("H"):
        s, e = r["start"], r["end"]
        title = "%s hot spell (explained)" % lab
        c = "gold"
    else:
        s, e = pd.Timestamp(r["start"]), pd.Timestamp(r["end"])
        title = "%s %s" % (lab, r["kind"].replace("_", " "))
        c = COL[r["kind"]]
    pad = max(pd.Timedelta(days=2), (e - s) * 0.6)
    w = df.loc[s - pad:e + pad]
    z_ax.axvspan(s, e + HOUR, color=c, alpha=0.3, lw=0)
    z_ax.plot(w.index, w["expected_kwh"], color="0.3", lw=1.0, ls="--",
              label="expected")
    z_ax.plot(w.index, w["energy_kwh"], color="tab:blue", lw=1.0,
              label="actual")
    if lab.startswith("H"):
        t_ax = z_ax.twinx()
        t_ax.plot(w.index, w["outdoor_temp_c"], color="tab:red", lw=0.8,
                  alpha=0.8)
        t_ax.set_ylabel("outdoor (C)", fontsize=8, color="tab:red")
        t_ax.tick_params(labelsize=8, colors="tab:red")
    z_ax.set_title(title, fontsize=10)
    z_ax.xaxis.set_major_locator(mdates.AutoDateLocator(minticks=2,
                                                        maxticks=4))
    z_ax.xaxis.set_major_formatter(mdates.DateFormatter("%d %b"))
    z_ax.tick_params(labelsize=8)
    z_ax.grid(alpha=0.3)
    if k == 0:
        z_ax.set_ylabel("kWh per hour")
        z_ax.legend(fontsize=8, loc="center left", framealpha=0.9)
png = os.path.join(OUT, "energy_anomalies.png")
fig.savefig(png, dpi=100)
plt.close(fig)
try:                       # 256-colour palette: same look, a third the size
    from PIL import Image
    Image.open(png).convert("RGB").quantize(256).save(png, optimize=True)
except ImportError:
    pass

# ---------------------------------------------------------------- report
def f1(v):
    return "n/a" if pd.isna(v) else "%.1f" % v


def span(s, e):
    s, e = pd.Timestamp(s), pd.Timestamp(e)
    if s == e:
        return "%s (%s)" % (s.strftime("%Y-%m-%d %H:%M"), s.strftime("%a"))
    return "%s (%s) to %s (%s)" % (s.strftime("%Y-%m-%d %H:%M"),
                                   s.strftime("%a"),
                                   e.strftime("%Y-%m-%d %H:%M"),
                                   e.strftime("%a"))


def explain(r):
    seg = df.loc[pd.Timestamp(r["start"]):pd.Timestamp(r["end"])]
    k = r["kind"]
    if k == "meter_dropout":
        return ("No reading for %d consecutive hours while the outdoor "
                "temperature was still recorded (%s C on average). The "
                "baseline puts the unrecorded consumption at about %.0f kWh "
                "(%.0f kWh per hour). Treat this as a data-quality gap: "
                "check the meter and its communication link, and do not "
                "read it as zero use."
                % (r["hours"], f1(r["mean_temp_c"]),
                   seg["expected_kwh"].sum(), r["expected_kwh"]))
    if k == "spike":
        return ("A single hour at %.0f kWh against %.0f kWh expected for "
                "that hour of the week at %s C (score %.1f). The hours "
                "before and after are normal, so this looks like a short "
                "burst of load (or a metering glitch) rather than a change "
                "in operation." % (r["mean_energy_kwh"], r["expected_kwh"],
                                   f1(r["mean_temp_c"]), r["peak_score"]))
    if k == "equipment_left_on":
        night = seg[(seg.index.hour < 6) | (seg.index.hour >= 20)]
        return ("Consumption stayed near weekday working-hours level for "
                "the whole period: %.0f kWh per hour on average against "
                "%.0f expected for these weekend hours (night hours %.0f "
                "against %.0f), at a mild %s C. About %.0f kWh of excess. "
                "The pattern fits lighting, plug loads and HVAC left "
                "running after the working week."
                % (r["mean_energy_kwh"], r["expected_kwh"],
                   night["energy_kwh"].mean(), night["expected_kwh"].mean(),
                   f1(r["mean_temp_c"]), r["excess_kwh"]))
    if k == "baseload_step":
        ex = seg["energy_kwh"] - seg["expected_kwh"]
        night = ex[(seg.index.hour < 6) | (seg.index.hour >= 20)].mean()
        day = ex[(seg.index.hour >= 8) & (seg.index.hour < 18)].mean()
        return ("Every hour ran above its baseline by a similar amount, "
                "night (%+.0f kWh) and day (%+.0f kWh) alike, for %d hours; "
                "the outdoor temperature (%s C) was unremarkable. A constant "
                "offset like this points to a load switched on permanently "
                "(a pump, heater or fan stuck on). About %.0f kWh of excess."
                % (night, day, r["hours"], f1(r["mean_temp_c"]),
                   r["excess_kwh"]))
    if k == "low_use":
        return ("Consumption fell well below the baseline (%.0f against "
                "%.0f kWh per hour)." % (r["mean_energy_kwh"],
                                         r["expected_kwh"]))
    return ("Consumption above the baseline (%.0f against %.0f kWh per "
            "hour), about %.0f kWh of excess." % (
                r["mean_energy_kwh"], r["expected_kwh"], r["excess_kwh"]))


L = []
L.append("# Building energy: anomaly report")
L.append("")
L.append("Data: `%s`, %d hourly readings from %s to %s; %d hours without "
         "a reading." % (SRC, len(df), df.index[0].strftime("%Y-%m-%d %H:%M"),
                         df.index[-1].strftime("%Y-%m-%d %H:%M"),
                         int(missing.sum())))
L.append("")
L.append("Found %d anomalies; %d hot spell(s) checked and explained by "
         "temperature." % (len(rows), len(hot)))
L.append("")
L.append("| # | start | end | kind | hours | mean kWh | expected kWh "
         "| temp C | score |")
L.append("|---|---|---|---|---|---|---|---|---|")
for i, r in enumerate(rows):
    L.append("| A%d | %s | %s | %s | %d | %s | %s | %s | %s |" % (
        i + 1, r["start"], r["end"], r["kind"], r["hours"],
        f1(r["mean_energy_kwh"]), f1(r["expected_kwh"]),
        f1(r["mean_temp_c"]), f1(r["score"])))
L.append("")
L.append("Score: mean |robust z| of the hourly residuals over the event; "
         "outside these events no hour goes beyond %.1f." % z_normal)
L.append("")
L.append("## Anomalies")
L.append("")
for i, r in enumerate(rows):
    L.append("**A%d. %s**, %s." % (i + 1, r["kind"].replace("_", " "),
                                   span(r["start"], r["end"])))
    L.append(explain(r))
    L.append("")
L.append("## Hot weather: high use, but not an anomaly")
L.append("")
if not hot:
    L.append("No run of 3 or more days reached %.0f C." % HOT_DAY_MAX_C)
for i, h in enumerate(hot):
    L.append("**H%d. %s to %s** (%d days, peak %.1f C, mean %.1f C against "
             "%.1f C in the same weeks around it)." % (
                 i + 1, h["start"].strftime("%Y-%m-%d"),
                 h["end"].strftime("%Y-%m-%d"), h["days"], h["tmax"],
                 h["tmean"], h["ref_temp"]))
    cmp_ = ("no more than ordinary hours elsewhere in the year"
            if h["maxz"] <= z_normal else "in isolated hours only")
    L.append("Energy use averaged %.1f kWh per hour, %.0f%% above the same "
             "hours of the two weeks before and after (%.1f). The "
             "temperature-aware baseline expects %.1f kWh per hour for "
             "these temperatures; the largest hourly score is %.1f, %s, "
             "and no run of hours stands out. The extra use is the cooling "
             "load responding to the heat, as it does on every warm day of "
             "the year. It is explained by temperature and is not flagged."
             % (h["energy"], 100.0 * (h["energy"] / h["ref_energy"] - 1.0),
                h["ref_energy"], h["expected"], h["maxz"], cmp_))
    L.append("")
L.append("## Method")
L.append("")
L.append("- Baseline: hour-of-week profile plus heating and cooling terms, "
         "max(0, %.1f - T) and max(0, T - %.1f) (balance points fitted), "
         "with slopes for each hour of the day, weekdays and weekends "
         "apart; refitted without the hours the first fit could not explain. R^2 = %.3f on "
         "the hours with a reading." % (TH, TC, r2))
L.append("- Slopes (kWh per degree-hour): heating %.2f in working hours / "
         "%.2f at night and weekends; cooling %.2f / %.2f." % slopes)
L.append("- Residual noise (1.4826 x MAD): %.1f kWh in occupied hours, "
         "%.1f kWh otherwise." % (noise["occupied"], noise["unoccupied"]))
L.append("- Events: hours with |z| >= %.0f, merged when less than %d hours "
         "apart; kept if the peak |z| >= %.0f or the event lasts >= %d hours "
         "with mean |z| >= %.1f. Missing or zero readings are meter "
         "dropouts." % (CAND_Z, MERGE_GAP_H, STRONG_Z, SUSTAIN_H, SUSTAIN_Z))
L.append("- Chart: `output/energy_anomalies.png`; event table: "
         "`output/anomalies.csv`.")
report = "\n".join(L) + "\n"
report.encode("ascii")           # the report must be plain ASCII
with open(os.path.join(OUT, "anomaly_report.md"), "w") as f:
    f.write(report)

print("baseline: balance points %.1f / %.1f C, R^2 %.3f, noise %.1f / %.1f "
      "kWh (occupied / unoccupied)" % (TH, TC, r2, noise["occupied"],
                                       noise["unoccupied"]))
print("anomalies: %d" % len(rows))
for i, r in enumerate(rows):
    print("  A%d %s .. %s  %-17s %3d h  score %s" % (
        i + 1, r["start"], r["end"], r["kind"], r["hours"], f1(r["score"])))
for i, h in enumerate(hot):
    print("  H%d %s .. %s  hot spell, peak %.1f C, max |z| %.1f: explained "
          "by temperature" % (i + 1, h["start"].strftime("%Y-%m-%d"),
                              h["end"].strftime("%Y-%m-%d"), h["tmax"],
                              h["maxz"]))
print("wrote output/anomalies.csv, output/energy_anomalies.png, "
      "output/anomaly_report.md")
