/* export_script.c: `assay export RUN --format script`: the run as one
 * Python file that replays, on a host, the calls export_safe.c judged
 * safe there, in order, and carries the others only as comments with
 * the reason (no line of their code is code of the script). It
 * replays in workspace/ beside itself, never the current directory:
 * it copies the run's inputs in (from its command line, else from
 * where the run took them), refuses a workspace that is not empty
 * without --force, and lists its plan without running anything with
 * --dry-run. Shell calls run in the workspace with HOME set to it (the
 * sandbox's HOME was its workspace) and python3 on PATH the interpreter
 * that runs the replay (the sandbox's was the cells' one); python cells share
 * one namespace with the workspace as their directory; "/workspace" as a whole
 * path word in a call becomes the workspace's path, when that path is plain
 * enough to go into code unquoted (else the call is left out). */
#include "export_nb.h"

#include "assay/events.h"
#include "assay/json.h"
#include "assay/path.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

static const char SCRIPT_PRELUDE[] =
    "import atexit as _assay_atexit\n"
    "import os as _assay_os\n"
    "import re as _assay_re\n"
    "import shutil as _assay_shutil\n"
    "import subprocess as _assay_subprocess\n"
    "import sys as _assay_sys\n"
    "import tempfile as _assay_tempfile\n"
    "\n"
    "# the replay's workspace: beside this file, never the current "
    "directory\n"
    "_ASSAY_WS = _assay_os.path.join(\n"
    "    _assay_os.path.dirname(_assay_os.path.abspath(__file__)), "
    "\"workspace\")\n"
    "# the sandbox's /workspace as a whole path word, made _ASSAY_WS\n"
    "_ASSAY_ABS = _assay_re.compile(r\"(?<![\\w./~-])/workspace(?![\\w.-])\")\n"
    "# a workspace path that can go into shell and Python code unquoted\n"
    "_ASSAY_PLAIN = _assay_re.compile(r\"[A-Za-z0-9_./+,:@=-]+\")\n"
    "_ASSAY_CALLS = []\n"
    "\n"
    "\n"
    "def _assay_call(call_id, kind, body):\n"
    "    \"\"\"A call of the run to replay (shell, python, write_file).\"\"\"\n"
    "    _ASSAY_CALLS.append((call_id, kind, body, None))\n"
    "\n"
    "\n"
    "def _assay_skip(call_id, kind, why):\n"
    "    \"\"\"A call left out: its code is only in the comments above.\"\"\"\n"
    "    _ASSAY_CALLS.append((call_id, kind, None, why))\n"
    "\n"
    "\n"
    "def _assay_plan(ws):\n"
    "    \"\"\"Each call as it runs here (/workspace made ws), or why "
    "not.\"\"\"\n"
    "    plan = []\n"
    "    for call_id, kind, body, why in _ASSAY_CALLS:\n"
    "        if why is None and kind != \"write_file\" and "
    "_ASSAY_ABS.search(body):\n"
    "            if _ASSAY_PLAIN.fullmatch(ws):\n"
    "                body = _ASSAY_ABS.sub(lambda m: ws, body)\n"
    "            else:\n"
    "                why = (\"it names /workspace, and the path of this \"\n"
    "                       \"workspace (%s) cannot go into code unquoted: \"\n"
    "                       \"move the script to a plainer path\" % ws)\n"
    "        plan.append((call_id, kind, body, why))\n"
    "    return plan\n"
    "\n"
    "\n"
    "def _assay_stage(ws, dest, src):\n"
    "    \"\"\"An input copied where the run had it (a copy: the calls may "
    "change it;\n"
    "    links followed: none may lead out of the workspace).\"\"\"\n"
    "    to = _assay_os.path.join(ws, dest)\n"
    "    _assay_os.makedirs(_assay_os.path.dirname(to), exist_ok=True)\n"
    "    if _assay_os.path.isdir(src):\n"
    "        _assay_shutil.copytree(src, to, dirs_exist_ok=True,\n"
    "                               ignore_dangling_symlinks=True)\n"
    "    else:\n"
    "        _assay_shutil.copyfile(src, to)\n"
    "\n"
    "\n"
    "def _assay_shell(ws, call_id, command):\n"
    "    \"\"\"A shell call: bash in the workspace; the replay stops if it "
    "fails.\"\"\"\n"
    "    done = _assay_subprocess.run([\"/bin/bash\", \"-c\", command], "
    "cwd=ws)\n"
    "    if done.returncode != 0:\n"
    "        _assay_sys.exit(\"replay: %s exited %d: %r; the calls after it "
    "were not run\"\n"
    "                        % (call_id, done.returncode, command))\n"
    "\n"
    "\n"
    "def _assay_write(ws, rel, text):\n"
    "    \"\"\"A write_file call: rel is inside the workspace.\"\"\"\n"
    "    path = _assay_os.path.join(ws, rel)\n"
    "    _assay_os.makedirs(_assay_os.path.dirname(path), exist_ok=True)\n"
    "    with open(path, \"w\", encoding=\"utf-8\") as f:\n"
    "        f.write(text)\n"
    "\n"
    "\n"
    "def _assay_dry(ws, sources, plan, busy):\n"
    "    \"\"\"--dry-run: what a replay would do; nothing runs.\"\"\"\n"
    "    print(\"dry run: nothing is run, copied or written\")\n"
    "    print(\"workspace: %s%s\" % (ws, \" (not empty: the replay would \"\n"
    "          \"refuse without --force)\" if busy else \"\"))\n"
    "    for dest, src in sources:\n"
    "        print(\"input: %s <- %s%s\" % (dest, src, \"\" if "
    "_assay_os.path.exists(src)\n"
    "              else \" (missing: give it on the command line)\"))\n"
    "    for call_id, kind, body, why in plan:\n"
    "        if why is not None:\n"
    "            print(\"skip %s (%s): %s\" % (call_id, kind, why))\n"
    "            continue\n"
    "        print(\"run  %s (%s):\" % (call_id, kind))\n"
    "        text = body if kind != \"write_file\" else \"%s (%d "
    "characters)\" % (\n"
    "            body[0], len(body[1]))\n"
    "        for line in text.splitlines():\n"
    "            print(\"    \" + line)\n"
    "    return 0\n"
    "\n"
    "\n"
    "def _assay_main(argv):\n"
    "    import argparse\n"
    "    ap = argparse.ArgumentParser(description=\"Replay the assay run \" "
    "+ _ASSAY_RUN\n"
    "        + \" in workspace/ beside this script: the calls judged safe on "
    "a host.\")\n"
    "    ap.add_argument(\"inputs\", nargs=\"*\", metavar=\"INPUT\",\n"
    "                    help=\"the run's inputs, in the order listed at "
    "the top of \"\n"
    "                    \"this file (one not given: where the run took "
    "it)\")\n"
    "    ap.add_argument(\"--dry-run\", action=\"store_true\",\n"
    "                    help=\"list what would run and what is left out, "
    "and why; \"\n"
    "                    \"run, copy and write nothing\")\n"
    "    ap.add_argument(\"--force\", action=\"store_true\",\n"
    "                    help=\"replay even though workspace/ is not "
    "empty\")\n"
    "    a = ap.parse_args(argv)\n"
    "    if len(a.inputs) > len(_ASSAY_INPUTS):\n"
    "        ap.error(\"%d inputs given; the run had %d\" % "
    "(len(a.inputs), len(_ASSAY_INPUTS)))\n"
    "    ws = _ASSAY_WS\n"
    "    sources = [(dest, a.inputs[i] if i < len(a.inputs) else src)\n"
    "               for i, (dest, src) in enumerate(_ASSAY_INPUTS)]\n"
    "    plan = _assay_plan(ws)\n"
    "    busy = _assay_os.path.lexists(ws) and not (\n"
    "        _assay_os.path.isdir(ws) and not _assay_os.listdir(ws))\n"
    "    if a.dry_run:\n"
    "        return _assay_dry(ws, sources, plan, busy)\n"
    "    if busy and (not a.force or not _assay_os.path.isdir(ws)):\n"
    "        _assay_sys.exit(\"replay: %s is not an empty directory and the "
    "replay writes \"\n"
    "                        \"there: empty it or move it away, or pass "
    "--force to replay \"\n"
    "                        \"over what it holds\" % ws)\n"
    "    for dest, src in sources:\n"
    "        if not _assay_os.path.exists(src):\n"
    "            _assay_sys.exit(\"replay: input %s: %s does not exist: give "
    "the file on \"\n"
    "                            \"the command line (see --help)\" % (dest, "
    "src))\n"
    "    _assay_os.makedirs(ws, exist_ok=True)\n"
    "    for dest, src in sources:\n"
    "        _assay_stage(ws, dest, src)\n"
    "    _assay_os.environ[\"HOME\"] = ws  # the sandbox's HOME was its "
    "workspace\n"
    "    # python3 in a shell call is this interpreter, as the sandbox's "
    "was the one\n"
    "    # its cells ran in (the first on PATH may lack their libraries)\n"
    "    pybin = _assay_tempfile.mkdtemp(prefix=\"replay-bin-\")\n"
    "    _assay_atexit.register(_assay_shutil.rmtree, pybin, True)\n"
    "    for name in (\"python3\", \"python\"):\n"
    "        _assay_os.symlink(_assay_sys.executable, "
    "_assay_os.path.join(pybin, name))\n"
    "    _assay_os.environ[\"PATH\"] = pybin + _assay_os.pathsep + "
    "_assay_os.environ.get(\"PATH\", \"\")\n"
    "    _assay_os.chdir(ws)\n"
    "    ns = {\"__name__\": \"__main__\"}\n"
    "    for call_id, kind, body, why in plan:\n"
    "        if why is not None:\n"
    "            print(\"replay: left out %s (%s): %s\" % (call_id, kind, "
    "why),\n"
    "                  file=_assay_sys.stderr)\n"
    "        elif kind == \"shell\":\n"
    "            _assay_shell(ws, call_id, body)\n"
    "        elif kind == \"python\":\n"
    "            exec(compile(body, \"<%s>\" % call_id, \"exec\"), ns)\n"
    "        else:\n"
    "            _assay_write(ws, body[0], body[1])\n"
    "    return 0\n";

/* Prose or code as comment lines. */
static void script_comment(struct exp *x, const char *prefix, const char *s)
{
	char *t = exp_nb_commented(prefix, s);
	exp_puts(x, t);
	free(t);
}

static void script_literal(struct exp *x, const char *s)
{
	char *t = exp_nb_literal(s);
	exp_puts(x, t);
	free(t);
}

/* Whether code reads the same in r'''...''': no ''' to end it early,
 * no \' (a raw string keeps the backslash but the quote no longer
 * ends it), no \r (Python reads it as a line break in source), no
 * quote or backslash at the end. */
static int script_raw_ok(const char *s)
{
	size_t n = strlen(s);
	return n && !strstr(s, "'''") && !strstr(s, "\\'") &&
	       !strchr(s, '\r') && s[n - 1] != '\'' && s[n - 1] != '\\';
}

/* Python code as a literal readable as code: r'''<newline>code'''[1:]
 * when it reads the same so, else a JSON literal. */
static void script_code(struct exp *x, const char *code)
{
	if (!script_raw_ok(code)) {
		script_literal(x, code);
		return;
	}
	exp_puts(x, "r'''\n");
	exp_puts(x, code);
	exp_puts(x, "'''[1:]");
}

/* Where an input came from: its path with links resolved when the
 * run recorded one (a mount), else the source as given. */
static const char *script_input_src(const cJSON *in)
{
	const char *path = ev_str(in, EVF_PATH, NULL);
	return path && path[0] == '/' ? path : ev_str(in, EVF_SRC, "?");
}

/* The inputs: where the run had each in its workspace and where it
 * came from; an input whose place cannot be made workspace-relative
 * is named in a note. */
static void script_inputs(struct exp *x, struct exp_nb *nb)
{
	exp_puts(x, "\n_ASSAY_RUN = ");
	script_literal(x, nb->run_id ? nb->run_id : "?");
	exp_puts(x, "\n# the run's inputs: (where the run had it in its "
	            "workspace, where it came from)\n"
	            "_ASSAY_INPUTS = [\n");
	const cJSON *in;
	cJSON_ArrayForEach(in, nb->inputs)
	{
		const char *dest = ev_str(in, EVF_DEST, NULL);
		const char *src = script_input_src(in);
		char *rel = NULL;
		if (!dest || path_normalize(dest, &rel, NULL) < 0) {
			script_comment(x,
			               "left out: an input with no place in "
			               "the workspace: ",
			               src);
			continue;
		}
		exp_puts(x, "    (");
		script_literal(x, rel);
		exp_puts(x, ", ");
		script_literal(x, src);
		exp_puts(x, "),\n");
		free(rel);
	}
	exp_puts(x, "]\n");
}

/* The header: what it is, how to run it, what it leaves out. */
static void script_head(struct exp *x, struct exp_nb *nb)
{
	exp_puts(x, "#!/usr/bin/env python3\n");
	script_comment(x, "", nb->run_id ? nb->run_id : "?");
	exp_puts(
	    x, "# ^ the assay run this replays (assay export --format script): "
	       "its python\n"
	       "# cells in order in one namespace, its shell commands through "
	       "bash, the\n"
	       "# files it wrote; only the calls that are safe outside assay's "
	       "sandbox.\n"
	       "# The run ran in (what a replay here does not have):\n");
	char *where = exp_nb_sandbox_text(nb);
	script_comment(x, "  ", where);
	free(where);
	exp_puts(
	    x,
	    "#\n"
	    "#   python3 THIS.py [--dry-run] [--force] [INPUT...]\n"
	    "#\n"
	    "# It replays in workspace/ beside this file (made if missing; "
	    "not empty:\n"
	    "# refused without --force), never in the current directory. The "
	    "run's\n"
	    "# inputs are copied there, each from its INPUT given in this "
	    "order, else\n"
	    "# from where the run took it:\n");
	int k = 0;
	const cJSON *in;
	cJSON_ArrayForEach(in, nb->inputs)
	{
		char *t =
		    xasprintf("  %d. %s (from %s)", ++k,
		              ev_str(in, EVF_DEST, "?"), script_input_src(in));
		script_comment(x, "", t);
		free(t);
	}
	if (!k)
		exp_puts(x, "#   (none)\n");
	exp_puts(x, "# Calls run with the workspace as their directory and "
	            "HOME; /workspace in\n"
	            "# them (the sandbox's) is made the workspace's path. "
	            "--dry-run lists what\n"
	            "# would run and what is left out, and runs nothing.\n");
	int left = 0;
	for (size_t i = 0; i < nb->n; i++) {
		struct nb_cell *c = &nb->cell[i];
		if (c->kind == NB_MARKDOWN || !c->skip)
			continue;
		if (!left++)
			exp_puts(x, "#\n# Left out (each is below as comments, "
			            "with the reason):\n");
		char *what = xasprintf("  %s (%s): %s", c->id,
		                       exp_nb_kind_name(c->kind), c->skip);
		script_comment(x, "", what);
		free(what);
	}
	if (nb->restarts)
		exp_puts(x, "#\n# The run's Python session started again "
		            "during the run; here every cell shares one.\n");
	for (size_t i = 0; i < nb->notes.n; i++)
		script_comment(x, "", nb->notes.v[i]);
	exp_puts(x, "\n");
}

/* A call left out: its code as comments, the reason as a record the
 * plan (and --dry-run) shows. */
static void script_skip(struct exp *x, struct nb_cell *c)
{
	const char *kind = exp_nb_kind_name(c->kind);
	exp_putf(x, "\n# ---- %s (%s): left out ----\n", c->id, kind);
	script_comment(x, "why: ", c->skip);
	if (c->kind == NB_WRITE) {
		script_comment(x, "path: ", c->path);
		script_comment(x, "  | ", c->source);
	} else {
		script_comment(x, "  | ", c->source);
	}
	exp_puts(x, "_assay_skip(");
	script_literal(x, c->id);
	exp_putf(x, ", \"%s\", ", kind);
	script_literal(x, c->skip);
	exp_puts(x, ")\n");
}

/* A call replayed. */
static void script_call(struct exp *x, struct nb_cell *c)
{
	const char *kind = exp_nb_kind_name(c->kind);
	exp_putf(x, "\n# ---- %s (%s) ----\n", c->id, kind);
	exp_puts(x, "_assay_call(");
	script_literal(x, c->id);
	exp_putf(x, ", \"%s\", ", kind);
	if (c->kind == NB_PYTHON) {
		script_code(x, c->source);
	} else if (c->kind == NB_SHELL) {
		script_literal(x, c->source);
	} else {
		exp_puts(x, "(");
		script_literal(x, c->rel);
		exp_puts(x, ", ");
		script_literal(x, c->source);
		exp_puts(x, ")");
	}
	exp_puts(x, ")\n");
}

void exp_nb_write_script(struct exp *x, struct exp_nb *nb)
{
	script_head(x, nb);
	exp_puts(x, SCRIPT_PRELUDE);
	script_inputs(x, nb);
	for (size_t i = 0; i < nb->n; i++) {
		struct nb_cell *c = &nb->cell[i];
		if (c->kind == NB_MARKDOWN) {
			exp_puts(x, "\n");
			script_comment(x, "", c->source);
		} else if (c->skip) {
			script_skip(x, c);
		} else {
			script_call(x, c);
		}
	}
	exp_puts(x, "\n\nif __name__ == \"__main__\":\n"
	            "    _assay_sys.exit(_assay_main(_assay_sys.argv[1:]))\n");
}
