#!/usr/bin/env bash
# assay eval on the docker sandbox, several sessions at once: each
# session and each check is a container of its own. Every check's run
# dir is named "check", and the containers were named after it and the
# pid alone, so two checks at once met as a name conflict (a docker
# eval with -j 2 or more failed its checks). Every task ends as the
# suite expects, and no container is left.
source "$(dirname "$0")/lib.bash"
need_docker_image
cd "$T"
mkdir -p xdg/assay
printf '{"sandbox": "docker", "image": "%s"}\n' "$image" >xdg/assay/config.json
before=$(docker ps -aq --filter label=assay.owner.pid | wc -l)
# four tasks that end together, each check slow enough to overlap the
# others
mkdir s
cat >s/answer.json <<'J'
{"turns": [{"text": "The answer is 42.", "tool_calls": []}]}
J
cat >s/slow.py <<'J'
import time
time.sleep(2)
print("ok" if "42" in open("answer.txt").read() else "no 42")
J
$PY - <<'PY'
import json
tasks = [{"name": f"t{i}", "prompt": "What is the answer?", "expect": "pass",
          "check": {"script": "slow.py", "answer_contains": ["42"]}} for i in range(4)]
json.dump({"defaults": {"provider": "script", "script": "answer.json"},
           "tasks": tasks}, open("s/suite.json", "w"))
PY
XDG_CONFIG_HOME=$T/xdg "$ASSAY" eval s/suite.json -j 4 --dir "$T/e" 2>"$T/e.stderr" || true
tail -8 "$T/e.stderr"
check "every task ends as the suite expects (its \"expect\")" $PY - "$T/s/suite.json" "$T/e/results.jsonl" <<'PY'
import json, sys
src = open(sys.argv[1]).read()
suite = json.loads(src)
want = {t["name"]: t.get("expect", "pass") == "pass" for t in suite["tasks"]}
got = {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    got[r["task"]] = r
bad = [(n, got.get(n, {}).get("reason")) for n, p in want.items()
       if n not in got or got[n]["pass"] != p]
print(bad)
sys.exit(1 if bad else 0)
PY
check "no check met a name conflict" bash -c "! grep -qi conflict '$T/e/results.jsonl' '$T/e.stderr'"
check "no container left" wait_until 10 "[ \$(docker ps -aq --filter label=assay.owner.pid | wc -l) -le $before ]"
finish
