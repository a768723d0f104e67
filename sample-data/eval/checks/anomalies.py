# The anomaly analysis against the ground truth (check/ holds it; the
# agent never saw it): the events found, none invented, the chart a PNG.
import json, subprocess, sys
import csv
truth = json.load(open("check/building_energy.truth.json"))
rows = list(csv.DictReader(open("output/anomalies.csv")))
found = [(r["start"], r["end"]) for r in rows]
want = [e for e in truth["events"] if e["anomaly"]]
miss = [e["id"] for e in want
        if not any(s <= e["end"] and e["start"] <= t for s, t in found)]
if miss:
    print("missed:", ", ".join(miss))
    sys.exit(1)
if open("output/energy_anomalies.png", "rb").read(8) != b"\x89PNG\r\n\x1a\n":
    print("the chart is not a PNG")
    sys.exit(1)
print("%d events found, all %d true anomalies among them" % (len(found), len(want)))
