#!/usr/bin/python3
"""Check an energy-anomaly analysis against the ground truth.

    /usr/bin/python3 sample-data/check_findings.py OUTPUT_DIR TRUTH_JSON

OUTPUT_DIR must hold anomalies.csv (one row per detected event, with at
least `start` and `end` columns, timestamps "YYYY-MM-DD HH:MM", inclusive),
energy_anomalies.png and anomaly_report.md. Checks:

  - the three files exist and are not empty;
  - the PNG is a PNG (signature, IHDR) of a sensible size;
  - the report is plain ASCII;
  - every truth event with anomaly=true overlaps a detected event;
  - no detected event overlaps a truth event with anomaly=false;
  - no detected event is unmatched (overlaps no true anomaly).

Prints what it found; exit status 0 if every check passes, 1 otherwise,
2 on bad usage. Standard library only.
"""

import csv
import datetime as dt
import json
import os
import struct
import sys

PNG_SIG = b"\x89PNG\r\n\x1a\n"
PNG_MIN_BYTES = 2 * 1024
PNG_MAX_BYTES = 2 * 1024 * 1024
PNG_MIN_SIDE, PNG_MAX_SIDE = 300, 5000

failures = []


def ok(msg):
    print("ok    " + msg)


def fail(msg):
    print("FAIL  " + msg)
    failures.append(msg)


def parse_ts(s):
    s = s.strip()
    for fmt in ("%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M",
                "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"):
        try:
            return dt.datetime.strptime(s, fmt)
        except ValueError:
            pass
    raise ValueError("bad timestamp %r" % s)


def overlaps(a, b):
    return a[0] <= b[1] and b[0] <= a[1]


def check_files(out_dir):
    paths = {}
    for name in ("anomalies.csv", "energy_anomalies.png", "anomaly_report.md"):
        p = os.path.join(out_dir, name)
        if not os.path.isfile(p):
            fail("%s: missing" % name)
        elif os.path.getsize(p) == 0:
            fail("%s: empty" % name)
        else:
            ok("%s: present, %d bytes" % (name, os.path.getsize(p)))
            paths[name] = p
    return paths


def check_png(p):
    with open(p, "rb") as f:
        head = f.read(33)
    size = os.path.getsize(p)
    if head[:8] != PNG_SIG:
        fail("energy_anomalies.png: not a PNG (bad signature)")
        return
    if head[12:16] != b"IHDR":
        fail("energy_anomalies.png: no IHDR chunk first")
        return
    w, h = struct.unpack(">II", head[16:24])
    desc = "%dx%d, %d KB" % (w, h, size // 1024)
    if not (PNG_MIN_SIDE <= w <= PNG_MAX_SIDE and
            PNG_MIN_SIDE <= h <= PNG_MAX_SIDE):
        fail("energy_anomalies.png: odd dimensions (%s)" % desc)
    elif not (PNG_MIN_BYTES <= size <= PNG_MAX_BYTES):
        fail("energy_anomalies.png: odd file size (%s)" % desc)
    else:
        ok("energy_anomalies.png: valid PNG, %s" % desc)


def check_report(p):
    with open(p, "rb") as f:
        data = f.read()
    bad = [i for i, b in enumerate(data)
           if b > 126 or (b < 32 and b not in (9, 10, 13))]
    if bad:
        line = data[:bad[0]].count(b"\n") + 1
        fail("anomaly_report.md: %d non-ASCII/control bytes (first on line "
             "%d)" % (len(bad), line))
    else:
        ok("anomaly_report.md: plain ASCII, %d lines" % data.count(b"\n"))


def read_detected(p):
    with open(p, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        fail("anomalies.csv: no rows")
        return []
    cols = {c.strip().lower(): c for c in rows[0].keys() if c}
    if "start" not in cols or "end" not in cols:
        fail("anomalies.csv: needs start and end columns (has: %s)"
             % ", ".join(rows[0].keys()))
        return []
    out = []
    for n, r in enumerate(rows, 1):
        try:
            s, e = parse_ts(r[cols["start"]]), parse_ts(r[cols["end"]])
        except ValueError as ex:
            fail("anomalies.csv row %d: %s" % (n, ex))
            continue
        kind = r.get(cols.get("kind", ""), "") or "?"
        out.append({"n": n, "start": s, "end": e, "kind": kind.strip()})
    ok("anomalies.csv: %d detected events" % len(out))
    return out


def fmt(ev):
    return "%s .. %s" % (ev["start"].strftime("%Y-%m-%d %H:%M"),
                         ev["end"].strftime("%Y-%m-%d %H:%M"))


def main():
    if len(sys.argv) != 3:
        print("usage: check_findings.py OUTPUT_DIR TRUTH_JSON", file=sys.stderr)
        return 2
    out_dir, truth_path = sys.argv[1], sys.argv[2]
    try:
        with open(truth_path) as f:
            truth = json.load(f)
        events = truth["events"] if isinstance(truth, dict) else truth
        for ev in events:
            ev["start"], ev["end"] = parse_ts(ev["start"]), parse_ts(ev["end"])
            ev["anomaly"] = bool(ev["anomaly"])
    except (OSError, ValueError, KeyError, TypeError) as ex:
        print("cannot read truth file %s: %s" % (truth_path, ex),
              file=sys.stderr)
        return 2

    paths = check_files(out_dir)
    if "energy_anomalies.png" in paths:
        check_png(paths["energy_anomalies.png"])
    if "anomaly_report.md" in paths:
        check_report(paths["anomaly_report.md"])
    detected = read_detected(paths["anomalies.csv"]) \
        if "anomalies.csv" in paths else []

    span = lambda e: (e["start"], e["end"])
    for ev in events:
        hits = [d for d in detected if overlaps(span(d), span(ev))]
        label = "truth %s %s (%s)" % (ev["id"], ev["kind"], fmt(ev))
        if ev["anomaly"]:
            if hits:
                ok("%s found as: %s" % (label, "; ".join(
                    "#%d %s %s" % (d["n"], d["kind"], fmt(d)) for d in hits)))
            else:
                fail("%s not detected" % label)
        else:
            if hits:
                fail("%s is not an anomaly but was flagged: %s" % (
                    label, "; ".join("#%d %s %s" % (d["n"], d["kind"], fmt(d))
                                     for d in hits)))
            else:
                ok("%s correctly not flagged" % label)

    true_spans = [span(ev) for ev in events if ev["anomaly"]]
    unmatched = [d for d in detected
                 if not any(overlaps(span(d), t) for t in true_spans)]
    if unmatched:
        fail("%d detected event(s) match no true anomaly: %s" % (
            len(unmatched), "; ".join("#%d %s %s" % (d["n"], d["kind"],
                                                     fmt(d))
                                      for d in unmatched)))
    else:
        ok("0 detected events match no true anomaly")

    print("RESULT: %s (%d failure%s)" % (
        "PASS" if not failures else "FAIL", len(failures),
        "" if len(failures) == 1 else "s"))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
