# The answer names the number the data gives.
import pandas as pd
n = int(pd.read_csv("input/building_energy.csv")["energy_kwh"].isna().sum())
answer = open("answer.txt").read()
print("missing readings: %d; the answer: %s" % (n, answer.strip()[:80]))
raise SystemExit(0 if str(n) in answer.split() else 1)
