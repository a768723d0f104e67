# output/heat.md says the hot week is explained by temperature.
import sys
t = open("output/heat.md").read().lower()
print("heat.md: %d bytes" % len(t))
sys.exit(0 if "explained" in t and "temperature" in t else 1)
