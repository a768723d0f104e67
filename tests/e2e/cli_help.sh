#!/usr/bin/env bash
# --help tells the truth: every sandbox backend and every value each
# option takes is listed (the bundled themes, the image modes, the ask
# modes, the providers); `assay help TOPIC` and `assay TOPIC --help`
# print the subcommand's own options (the same text, on stdout, exit
# 0); an unknown topic is a usage error naming the topics. The manual
# page is generated from the same text (tests/e2e/install.sh reads it).
source "$(dirname "$0")/lib.bash"
cd "$T"
"$ASSAY" --help >help.txt 2>&1
code=$?
check "assay --help: exit 0 (got $code)" test "$code" = 0
for b in local docker opensandbox; do
	check "--sandbox lists $b" sh -c "grep -A2 -- '^  --sandbox ' help.txt | grep -qw '$b'"
done
for m in all risky none; do
	check "--ask lists $m" sh -c "grep -A2 -- '^  --ask ' help.txt | grep -qw '$m'"
done
for m in auto sixel kitty blocks off; do
	check "--images lists $m" sh -c "grep -A2 -- '^  --images ' help.txt | grep -qw '$m'"
done
for f in "$SRC"/themes/*.json; do
	name=$(basename "$f" .json)
	check "--theme lists the bundled theme $name" sh -c "grep -A4 -- '^  --theme ' help.txt | grep -q -- '$name'"
done
check "--theme lists auto (the default)" sh -c "grep -A4 -- '^  --theme ' help.txt | grep -q 'auto'"
for p in openai openai-responses anthropic ollama script; do
	check "--provider lists $p" sh -c "grep -A2 -- '^  --provider ' help.txt | grep -q -- '$p'"
done
check "every subcommand is in the usage" sh -c 'for s in run demo replay resume export eval models trust doctor help; do grep -q "assay $s" help.txt || exit 1; done'
declare -A own=([resume]='usage: assay resume RUN' [replay]='usage: assay replay RUN'
	[export]='usage: assay export RUN' [eval]='usage: assay eval SUITE'
	[doctor]='usage: assay doctor' [trust]='usage: assay trust' [models]='usage: assay models')
for t in resume replay export eval doctor trust models; do
	"$ASSAY" help "$t" >"h-$t.txt" 2>"h-$t.err"
	c1=$?
	"$ASSAY" "$t" --help >"s-$t.txt" 2>"s-$t.err"
	c2=$?
	check "assay help $t: its own options on stdout (exit $c1)" \
		sh -c "test $c1 = 0 && grep -q '^${own[$t]}' 'h-$t.txt'"
	check "... the same as assay $t --help (exit $c2)" \
		sh -c "test $c2 = 0 && cmp -s 'h-$t.txt' 's-$t.txt'"
done
check "export's help lists its formats" grep -q 'md|html|ipynb|script' h-export.txt
check "eval's help lists --ask with its modes" grep -q -- '--ask MODE *all|risky|none' h-eval.txt
"$ASSAY" help run >h-run.txt 2>&1
check "assay help run: the options of a run" grep -q -- '--max-cost USD' h-run.txt
"$ASSAY" help nosuch >h-bad.txt 2>&1 && code=0 || code=$?
check "assay help nosuch: usage error (exit $code)" test "$code" = 2
check "... naming the topics" grep -q "topics: run, demo, resume, replay, export, eval" h-bad.txt
finish
