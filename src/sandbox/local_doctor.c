/* local_doctor.c: what `assay doctor` checks of the local backend
 * (sbx_ops.probe): a real local sandbox started in a scratch run dir
 * (the same start, probe and limits a run gets), then its python and
 * the libraries the analyses need, asked inside it. Blocking: it runs
 * a loop of its own until each step completes. */
#include "assay/config.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/local_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LD_PYTHON_S 30   /* the python check in the sandbox */
#define LD_OUT_MAX 65536 /* its output, at most */

struct pyrun {
	struct buf out, errb;
	int done;
	struct sbx_exit ex;
	char *error;
};

/* The python check's output, kept up to LD_OUT_MAX. */
static void py_output(void *arg, enum sbx_stream s, const char *data, size_t n)
{
	struct pyrun *p = arg;
	struct buf *b = s == SBX_STDOUT ? &p->out : &p->errb;
	if (b->len + n <= LD_OUT_MAX)
		buf_append(b, data, n);
}

/* The python check ended: keep how. */
static void py_exit(void *arg, const struct sbx_exit *ex)
{
	struct pyrun *p = arg;
	p->ex = *ex;
	p->error = ex->error ? xstrdup(ex->error) : NULL;
	p->done = 1;
}

/* Versions without importing (find_spec + metadata): fast, and a
 * broken import still shows as present here, which is what we ask. */
static const char PY_SCRIPT[] =
    "import json, sys, importlib.util as u\n"
    "try:\n"
    "    from importlib import metadata as m\n"
    "except Exception:\n"
    "    m = None\n"
    "out = {'python': sys.version.split()[0]}\n"
    "for n in ('pandas', 'matplotlib', 'numpy', 'scipy'):\n"
    "    v = None\n"
    "    if u.find_spec(n):\n"
    "        try:\n"
    "            v = m.version(n)\n"
    "        except Exception:\n"
    "            v = 'present'\n"
    "    out[n] = v\n"
    "print(json.dumps(out))\n";

/* Run python in the started sandbox: its version and whether the
 * libraries the analyses need import. */
static void check_python(struct sbx_probe *d, struct sbx *s, struct loop *l,
                         int required)
{
	sbx_probe_section(d, "python in the local sandbox");
	struct pyrun p = {0};
	buf_init(&p.out, 0);
	buf_init(&p.errb, 0);
	const char *argv[] = {"python3", "-c", PY_SCRIPT, NULL};
	struct sbx_exec_req r = {.argv = argv, .timeout_s = LD_PYTHON_S};
	struct sbx_exec_obs o = {py_output, py_exit, &p};
	char *err = NULL;
	int64_t t0 = now_ms();
	if (!sbx_exec(s, &r, &o, &err)) {
		sbx_probe_add(
		    d, required ? SBX_PROBE_FAIL : SBX_PROBE_WARN, "python3",
		    xasprintf("could not run python3 in the sandbox: %s", err),
		    NULL);
		free(err);
		goto out;
	}
	while (!p.done)
		loop_once(l, 1000); /* the sandbox's own timeout bounds it */
	int64_t took = now_ms() - t0;
	cJSON *j = p.ex.exit_code == 0
	               ? cJSON_ParseWithLength(p.out.data, p.out.len)
	               : NULL;
	if (!j) {
		sbx_probe_add(
		    d, required ? SBX_PROBE_FAIL : SBX_PROBE_WARN, "python3",
		    xasprintf("python3 failed in the sandbox (exit %d%s%s): "
		              "%.300s",
		              p.ex.exit_code,
		              p.ex.timed_out ? ", timed out" : "",
		              p.error ? ", " : "", p.error ? p.error : ""),
		    xstrdup("install python3 (apt-get install python3) or use "
		            "--sandbox docker"));
		goto out;
	}
	sbx_probe_add(d, SBX_PROBE_OK, "python3",
	              xasprintf("python %s runs in the sandbox (%lld ms)",
	                        json_str(j, "python", "?"), (long long)took),
	              NULL);
	/* the demo and most analyses need the first three */
	static const struct {
		const char *name;
		int core;
	} libs[] = {
	    {"pandas", 1}, {"matplotlib", 1}, {"numpy", 1}, {"scipy", 0}};
	if (!d->facts)
		d->facts = cJSON_CreateObject();
	cJSON *pj = cJSON_AddObjectToObject(d->facts, "python");
	cJSON_AddStringToObject(pj, "python", json_str(j, "python", "?"));
	for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
		const char *v = json_str(j, libs[i].name, NULL);
		if (v) {
			cJSON_AddStringToObject(pj, libs[i].name, v);
			sbx_probe_add(d, SBX_PROBE_OK, libs[i].name,
			              xasprintf("%s", v), NULL);
		} else {
			cJSON_AddNullToObject(pj, libs[i].name);
			enum sbx_probe_status st = libs[i].core && required
			                               ? SBX_PROBE_FAIL
			                               : SBX_PROBE_WARN;
			sbx_probe_add(
			    d, st, libs[i].name, xstrdup("not installed"),
			    xasprintf("apt-get install python3-%s (the local "
			              "sandbox uses the host's /usr)",
			              libs[i].name));
		}
	}
	cJSON_Delete(j);
out:
	free(p.error);
	buf_free(&p.out);
	buf_free(&p.errb);
}

/* A sandbox operation doctor waits for (it has no other work): the
 * completion's rc and message. */
struct ld_wait {
	int done;
	int rc;
	char *err;
};

/* The completion of an operation doctor waits for. */
static void ld_wait_done(void *arg, int rc, const char *err, struct buf *data,
                         cJSON *list)
{
	struct ld_wait *w = arg;
	(void)data;
	(void)list;
	w->done = 1;
	w->rc = rc;
	w->err = err ? xstrdup(err) : NULL;
}

/* Run the loop until w's operation completes (it always does: the
 * sandbox bounds its own work). */
static void ld_wait_for(struct loop *l, struct ld_wait *w)
{
	while (!w->done)
		loop_once(l, 1000);
}

/* Start a real local sandbox in a scratch run dir (the same start, probe
 * and limits a run gets), then ask its python. */
void local_doctor(const struct config *cfg, int required, long timeout_ms,
                  struct sbx_probe *d)
{
	(void)cfg; /* a sandbox of the defaults: what any run gets */
	(void)timeout_ms;
	sbx_probe_section(d, "sandbox: local (bubblewrap)");
	struct config sc;
	config_defaults(&sc);
	config_set(&sc.sandbox, sbx_local_ops.name);
	const char *tmp = getenv("TMPDIR");
	char *dir =
	    xasprintf("%s/assay-doctor-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	struct loop *l = NULL;
	struct sbx *s = NULL;
	char *err = NULL;
	struct ld_wait start = {0};
	if (!mkdtemp(dir)) {
		sbx_probe_add(
		    d, SBX_PROBE_FAIL, "start",
		    xasprintf("cannot make a scratch directory %s: %s", dir,
		              strerror(errno)),
		    xstrdup("set TMPDIR to a writable directory"));
		free(dir);
		config_free(&sc);
		return;
	}
	l = loop_new();
	int64_t t0 = now_ms();
	s = l ? sbx_new(&sc, l, dir, &err) : NULL;
	if (s) {
		sbx_start(s, 1, ld_wait_done, &start);
		ld_wait_for(l, &start);
	}
	int ok = s && start.rc == SBX_OK;
	int64_t took = now_ms() - t0;
	if (ok) {
		sbx_probe_add(
		    d, SBX_PROBE_OK, "start",
		    xasprintf("bubblewrap accepts the sandbox's options "
		              "(user, mount, PID and network namespaces, "
		              "limits): set up in %lld ms; the python check "
		              "below runs inside it%s%s",
		              (long long)took, start.err ? "; note: " : "",
		              start.err ? start.err : ""),
		    NULL);
	} else {
		const char *why = start.err ? start.err : err;
		sbx_probe_add(
		    d, required ? SBX_PROBE_FAIL : SBX_PROBE_WARN, "start",
		    xasprintf("%s", why ? why : "cannot create the sandbox"),
		    xstrdup("see the message; or use --sandbox docker"));
	}
	free(err);
	free(start.err);
	if (ok)
		check_python(d, s, l, required);
	if (s) {
		struct ld_wait stop = {0};
		sbx_stop(s, ld_wait_done, &stop);
		ld_wait_for(l, &stop);
		free(stop.err);
		sbx_free(s);
	}
	if (l)
		loop_free(l);
	rm_rf(dir);
	free(dir);
	config_free(&sc);
}
