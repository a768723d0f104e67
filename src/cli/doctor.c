/* doctor.c: `assay doctor`: what works on this machine and what to do
 * about what does not, one section per area (terminal graphics, the
 * sandbox backends, the sandbox's python libraries, model keys), each
 * item OK / WARN / FAIL. Every check is real and bounded: the terminal
 * is asked (150 ms), a local sandbox is started and runs python, the
 * Docker daemon is called with a short timeout. --json prints the same
 * report as one object. The JSON it reads (the sandbox's python report,
 * the report itself) is not an event. */
#include "cli.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/loop.h"
#include "assay/sandbox.h"
#include "assay/util.h"
#include "assay/workbench.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DOC_TTY_MS 150     /* the terminal's answers */
#define DOC_TMUX_MS 500    /* tmux display -p */
#define DOC_DOCKER_MS 3000 /* each daemon call */
#define DOC_PYTHON_S 30    /* the python check in the sandbox */
#define DOC_OUT_MAX 65536  /* its output, at most */
#define DOC_DEFAULT_IMAGE "assay-sandbox:latest"

enum doc_status { DOC_OK, DOC_WARN, DOC_FAIL };

static const char *const status_names[] = {"OK", "WARN", "FAIL"};

struct doctor {
	cJSON *report;
	cJSON *sections;
	cJSON *items; /* of the current section */
	int failed;
};

/* A new section of the report; items go into it. */
static void section(struct doctor *d, const char *name)
{
	cJSON *s = cJSON_CreateObject();
	cJSON_AddStringToObject(s, "name", name);
	d->items = cJSON_AddArrayToObject(s, "items");
	cJSON_AddItemToArray(d->sections, s);
}

/* One finding: detail says what was seen, fix what to do (or NULL).
 * Takes ownership of detail and fix. */
static void item(struct doctor *d, enum doc_status st, const char *name,
                 char *detail, char *fix)
{
	cJSON *it = cJSON_CreateObject();
	cJSON_AddStringToObject(it, "name", name);
	cJSON_AddStringToObject(it, "status", status_names[st]);
	cJSON_AddStringToObject(it, "detail", detail ? detail : "");
	if (fix)
		cJSON_AddStringToObject(it, "fix", fix);
	cJSON_AddItemToArray(d->items, it);
	if (st == DOC_FAIL)
		d->failed = 1;
	free(detail);
	free(fix);
}

/* ---- terminal graphics ---- */

/* A string the terminal sent, for the JSON report: valid UTF-8 with no
 * C1 control or DEL (each becomes U+FFFD); C0 controls stay, cJSON
 * writes them escaped (\u001b). */
static char *json_text(const char *s)
{
	struct buf b;
	buf_init(&b, 0);
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = utf8_decode(s + i, n - i, &cp);
		if (cp == 0x7f || (cp >= 0x80 && cp < 0xa0) ||
		    (cp == 0xFFFD && len == 1))
			buf_append(&b, "\xef\xbf\xbd", 3);
		else
			buf_append(&b, s + i, len);
		i += len;
	}
	buf_append(&b, "", 1);
	return buf_detach(&b);
}

/* Add what the terminal sent to o as a safe JSON string. */
static void add_terminal_str(cJSON *o, const char *name, const char *s)
{
	char *safe = json_text(s);
	cJSON_AddStringToObject(o, name, safe);
	free(safe);
}

/* The key of a signal typed while the terminal was asked (it arrived as
 * a byte: see ui_termcaps_detect): doctor stops as that key would have
 * stopped it, the terminal already restored. */
static int typed_signal(int sig)
{
	if (sig == SIGTSTP) {
		raise(SIGTSTP); /* suspended here; on fg, go on */
		return 0;
	}
	if (!sig)
		return 0;
	fprintf(stderr, "assay doctor: interrupted\n");
	return -1;
}

/* The graphics section in the JSON report: what the terminal said,
 * in its own words (escaped), and what was chosen. */
static void graphics_report(struct doctor *d, const struct ui_termcaps *tc,
                            const char *want, int tmux, int64_t took)
{
	cJSON *g = cJSON_AddObjectToObject(d->report, "graphics");
	cJSON_AddStringToObject(g, "mode", ui_termcaps_mode_name(tc->mode));
	cJSON_AddStringToObject(g, "want", want ? want : "auto");
	/* the terminal's own words in the JSON, escaped */
	add_terminal_str(g, "why", tc->why);
	cJSON_AddBoolToObject(g, "queried", tc->queried);
	cJSON_AddBoolToObject(g, "da1_seen", tc->da1_seen);
	add_terminal_str(g, "da1", tc->da1);
	cJSON_AddBoolToObject(g, "kitty_answered", tc->kitty_answered);
	add_terminal_str(g, "kitty_reply", tc->kitty_reply);
	cJSON_AddBoolToObject(g, "sixel", tc->sixel);
	cJSON_AddBoolToObject(g, "kitty", tc->kitty);
	cJSON_AddNumberToObject(g, "color_registers", tc->color_registers);
	cJSON_AddBoolToObject(g, "registers_assumed", tc->registers_assumed);
	cJSON_AddNumberToObject(g, "sixel_max_w", tc->sixel_max_w);
	cJSON_AddNumberToObject(g, "sixel_max_h", tc->sixel_max_h);
	cJSON_AddNumberToObject(g, "cell_w", tc->cell_w);
	cJSON_AddNumberToObject(g, "cell_h", tc->cell_h);
	cJSON_AddStringToObject(g, "cell_from", tc->cell_from);
	cJSON_AddBoolToObject(g, "truecolor", tc->truecolor);
	cJSON_AddBoolToObject(g, "in_tmux", tc->in_tmux);
	cJSON_AddNumberToObject(g, "tmux_sixel_support", tmux);
	cJSON_AddBoolToObject(g, "timed_out", tc->timed_out);
	cJSON_AddBoolToObject(g, "background_light", tc->bg_light);
	cJSON_AddStringToObject(g, "background_from", tc->bg_from);
	if (tc->bg_answered) {
		char rgb[8];
		snprintf(rgb, sizeof rgb, "#%02x%02x%02x", tc->bg_rgb[0],
		         tc->bg_rgb[1], tc->bg_rgb[2]);
		cJSON_AddStringToObject(g, "background", rgb);
	}
	cJSON_AddNumberToObject(g, "ms", (double)took);
}

/* The terminal's background and the theme --theme auto takes there. */
static void background_item(struct doctor *d, const struct ui_termcaps *tc)
{
	char rgb[16] = "";
	if (tc->bg_answered)
		snprintf(rgb, sizeof rgb, "#%02x%02x%02x, ", tc->bg_rgb[0],
		         tc->bg_rgb[1], tc->bg_rgb[2]);
	item(d, DOC_OK, "background",
	     xasprintf("%s%s (%s): --theme auto takes %s", rgb,
	               tc->bg_light ? "light" : "dark", tc->bg_from,
	               tc->bg_light ? "light" : "default"),
	     tc->bg_answered || !strcmp(tc->bg_from, "COLORFGBG")
	         ? NULL
	         : xstrdup("the terminal did not say (OSC 11): "
	                   "on a light one, set COLORFGBG=0;15 "
	                   "or use --theme light"));
}

/* -1: interrupted (Ctrl-C during the query). */
static int check_graphics(struct doctor *d, const char *want)
{
	section(d, "terminal graphics");
	/* output may go to a file (assay doctor > report): ask the
	 * controlling terminal then */
	int in = STDIN_FILENO, out = STDOUT_FILENO, own = -1;
	if (!isatty(in) || !isatty(out)) {
		own = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (own >= 0)
			in = out = own;
	}
	struct ui_termcaps tc;
	int64_t t0 = now_ms();
	ui_termcaps_detect(in, out, want, DOC_TTY_MS, &tc);
	int64_t took = now_ms() - t0;
	if (own >= 0)
		close(own);
	if (typed_signal(tc.sig_typed) < 0)
		return -1;
	int tmux = tc.in_tmux ? ui_termcaps_tmux_sixel(DOC_TMUX_MS) : -1;

	const char *mode = ui_termcaps_mode_name(tc.mode);
	int forced = want && strcmp(want, "auto");
	int unconfirmed = (tc.mode == UI_GFX_SIXEL && !tc.sixel) ||
	                  (tc.mode == UI_GFX_KITTY && !tc.kitty);
	char *why =
	    xasprintf("%s (detection took %lld ms)", tc.why, (long long)took);
	if (tc.mode == UI_GFX_SIXEL || tc.mode == UI_GFX_KITTY)
		item(d, unconfirmed ? DOC_WARN : DOC_OK, "image mode", why,
		     unconfirmed ? xasprintf("--images %s is forced: if "
		                             "previews show garbage, use "
		                             "--images auto",
		                             mode)
		                 : NULL);
	else if (tc.mode == UI_GFX_BLOCKS)
		item(d, forced ? DOC_OK : DOC_WARN, "image mode", why,
		     forced ? NULL
		            : xstrdup("charts show as coloured half blocks; "
		                      "for pixels use a terminal with sixel "
		                      "or kitty graphics (xterm -ti vt340, "
		                      "foot, WezTerm, kitty, mlterm) or tmux "
		                      "3.4+ built with sixel"));
	else
		item(d, forced ? DOC_OK : DOC_WARN, "image mode", why,
		     forced ? NULL
		            : xstrdup("no terminal here: run assay doctor in "
		                      "the terminal you use assay in"));

	if (strcmp(tc.cell_from, "guess"))
		item(d, DOC_OK, "cell size",
		     xasprintf("%dx%d pixels per cell (%s)", tc.cell_w,
		               tc.cell_h, tc.cell_from),
		     NULL);
	else
		item(d,
		     tc.mode == UI_GFX_SIXEL || tc.mode == UI_GFX_KITTY
		         ? DOC_WARN
		         : DOC_OK,
		     "cell size",
		     xasprintf("%dx%d pixels per cell (a guess: the terminal "
		               "did not say)",
		               tc.cell_w, tc.cell_h),
		     tc.mode == UI_GFX_SIXEL || tc.mode == UI_GFX_KITTY
		         ? xstrdup("images may come out too large or small")
		         : NULL);

	if (tc.mode == UI_GFX_SIXEL)
		item(d, DOC_OK, "colours",
		     xasprintf("%d sixel colour registers%s; largest sixel "
		               "image %dx%d%s",
		               tc.color_registers,
		               tc.registers_assumed ? " (assumed: XTSMGRAPHICS "
		                                      "did not say)"
		                                    : " (XTSMGRAPHICS)",
		               tc.sixel_max_w, tc.sixel_max_h,
		               tc.sixel_max_w ? "" : " (unknown)"),
		     NULL);
	else
		item(d, DOC_OK, "colours",
		     xstrdup(tc.truecolor ? "24-bit colour (COLORTERM or a "
		                            "-direct TERM says so)"
		                          : "256-colour cube (set "
		                            "COLORTERM=truecolor if the "
		                            "terminal has 24-bit colour)"),
		     NULL);
	if (tc.in_tmux)
		item(d, tc.sixel ? DOC_OK : DOC_WARN, "tmux",
		     xasprintf("inside tmux/screen: DA1 from tmux %s; "
		               "#{sixel_support} %s",
		               tc.sixel ? "lists sixel" : "has no sixel",
		               tmux == 1   ? "= 1"
		               : tmux == 0 ? "empty or 0 (tmux < 3.4 or built "
		                             "without sixel)"
		                           : "could not be asked"),
		     tc.sixel ? NULL
		              : xstrdup("tmux 3.4+ built with sixel shows "
		                        "pixel charts; else blocks are used"));

	background_item(d, &tc);
	graphics_report(d, &tc, want, tmux, took);
	return 0;
}

/* ---- the local sandbox and its python ---- */

struct pyrun {
	struct buf out, errb;
	int done;
	struct sbx_exit ex;
	char *error;
};

/* The python check's output, kept up to DOC_OUT_MAX. */
static void py_output(void *arg, enum sbx_stream s, const char *data, size_t n)
{
	struct pyrun *p = arg;
	struct buf *b = s == SBX_STDOUT ? &p->out : &p->errb;
	if (b->len + n <= DOC_OUT_MAX)
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
static void check_python(struct doctor *d, struct sbx *s, struct loop *l,
                         int required)
{
	section(d, "python in the local sandbox");
	struct pyrun p = {0};
	buf_init(&p.out, 0);
	buf_init(&p.errb, 0);
	const char *argv[] = {"python3", "-c", PY_SCRIPT, NULL};
	struct sbx_exec_req r = {.argv = argv, .timeout_s = DOC_PYTHON_S};
	struct sbx_exec_obs o = {py_output, py_exit, &p};
	char *err = NULL;
	int64_t t0 = now_ms();
	if (!sbx_exec(s, &r, &o, &err)) {
		item(d, required ? DOC_FAIL : DOC_WARN, "python3",
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
		item(d, required ? DOC_FAIL : DOC_WARN, "python3",
		     xasprintf("python3 failed in the sandbox (exit %d%s%s): "
		               "%.300s",
		               p.ex.exit_code,
		               p.ex.timed_out ? ", timed out" : "",
		               p.error ? ", " : "", p.error ? p.error : ""),
		     xstrdup("install python3 (apt-get install python3) or use "
		             "--sandbox docker"));
		goto out;
	}
	item(d, DOC_OK, "python3",
	     xasprintf("python %s runs in the sandbox (%lld ms)",
	               json_str(j, "python", "?"), (long long)took),
	     NULL);
	/* the demo and most analyses need the first three */
	static const struct {
		const char *name;
		int core;
	} libs[] = {
	    {"pandas", 1}, {"matplotlib", 1}, {"numpy", 1}, {"scipy", 0}};
	cJSON *pj = cJSON_AddObjectToObject(d->report, "python");
	cJSON_AddStringToObject(pj, "python", json_str(j, "python", "?"));
	for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
		const char *v = json_str(j, libs[i].name, NULL);
		if (v) {
			cJSON_AddStringToObject(pj, libs[i].name, v);
			item(d, DOC_OK, libs[i].name, xasprintf("%s", v), NULL);
		} else {
			cJSON_AddNullToObject(pj, libs[i].name);
			enum doc_status st =
			    libs[i].core && required ? DOC_FAIL : DOC_WARN;
			item(d, st, libs[i].name, xstrdup("not installed"),
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
struct doc_wait {
	int done;
	int rc;
	char *err;
};

/* The completion of an operation doctor waits for. */
static void doc_wait_done(void *arg, int rc, const char *err, struct buf *data,
                          cJSON *list)
{
	struct doc_wait *w = arg;
	(void)data;
	(void)list;
	w->done = 1;
	w->rc = rc;
	w->err = err ? xstrdup(err) : NULL;
}

/* Run the loop until w's operation completes (it always does: the
 * sandbox bounds its own work). */
static void doc_wait_for(struct loop *l, struct doc_wait *w)
{
	while (!w->done)
		loop_once(l, 1000);
}

/* Start a real local sandbox in a scratch run dir (the same start, probe
 * and limits a run gets), then ask its python. */
static void check_local(struct doctor *d, int required)
{
	section(d, "sandbox: local (bubblewrap)");
	struct config sc;
	config_defaults(&sc);
	config_set(&sc.sandbox, "local");
	const char *tmp = getenv("TMPDIR");
	char *dir =
	    xasprintf("%s/assay-doctor-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	struct loop *l = NULL;
	struct sbx *s = NULL;
	char *err = NULL;
	struct doc_wait start = {0};
	if (!mkdtemp(dir)) {
		item(d, DOC_FAIL, "start",
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
		sbx_start(s, 1, doc_wait_done, &start);
		doc_wait_for(l, &start);
	}
	int ok = s && start.rc == SBX_OK;
	int64_t took = now_ms() - t0;
	if (ok) {
		item(d, DOC_OK, "start",
		     xasprintf("bubblewrap accepts the sandbox's options "
		               "(user, mount, PID and network namespaces, "
		               "limits): set up in %lld ms; the python check "
		               "below runs inside it%s%s",
		               (long long)took, start.err ? "; note: " : "",
		               start.err ? start.err : ""),
		     NULL);
	} else {
		const char *why = start.err ? start.err : err;
		item(d, required ? DOC_FAIL : DOC_WARN, "start",
		     xasprintf("%s", why ? why : "cannot create the sandbox"),
		     xstrdup("see the message; or use --sandbox docker"));
	}
	free(err);
	free(start.err);
	if (ok)
		check_python(d, s, l, required);
	if (s) {
		struct doc_wait stop = {0};
		sbx_stop(s, doc_wait_done, &stop);
		doc_wait_for(l, &stop);
		free(stop.err);
		sbx_free(s);
	}
	if (l)
		loop_free(l);
	rm_rf(dir);
	free(dir);
	config_free(&sc);
}

/* ---- docker ---- */

/* Ask the daemon DOCKER_HOST names (sbx_docker_probe) and say what
 * works and what to do. */
static void check_docker(struct doctor *d, const struct config *c, int required)
{
	section(d, "sandbox: docker");
	enum doc_status bad = required ? DOC_FAIL : DOC_WARN;
	const char *image =
	    c->image && *c->image ? c->image : DOC_DEFAULT_IMAGE;
	struct sbx_docker_probe p;
	sbx_docker_probe(image, DOC_DOCKER_MS, &p);
	const char *dv = p.docker_version ? p.docker_version : "?";
	switch (p.failed) {
	case SBX_PROBE_ENDPOINT:
		item(d, bad, "daemon", xasprintf("DOCKER_HOST: %s", p.error),
		     xstrdup("fix DOCKER_HOST (unix:///path or "
		             "tcp://host:port)"));
		goto out;
	case SBX_PROBE_PING:
		item(
		    d, bad, "daemon",
		    p.error
		        ? xasprintf("no answer from %s: %s", p.host, p.error)
		        : xasprintf("%s answered /_ping with status %ld",
		                    p.host, p.ping_status),
		    xstrdup("start the daemon (systemctl start docker), check "
		            "DOCKER_HOST and that you may use the socket (the "
		            "docker group); only needed for --sandbox docker"));
		goto out;
	case SBX_PROBE_VERSION:
		item(d, bad, "daemon",
		     xasprintf("%s: Docker %s: %s", p.host, dv, p.error), NULL);
		goto out;
	default:
		break;
	}
	item(d, DOC_OK, "daemon",
	     xasprintf("%s answers: Docker %s, API %s (assay speaks %s)",
	               p.host, dv, p.api_max ? p.api_max : "?", p.api),
	     NULL);
	if (p.failed == SBX_PROBE_OK)
		item(d, DOC_OK, "image",
		     xasprintf("%s is present (%.19s)", image,
		               p.image_id ? p.image_id : "?"),
		     NULL);
	else if (p.image_status == 404)
		item(
		    d, bad, "image",
		    xasprintf("%s is not on the daemon", image),
		    xstrdup("build it with scripts/sandbox-image/build-offline "
		            "(no registry needed)"));
	else
		item(d, bad, "image",
		     xasprintf("cannot ask about %s: %s", image,
		               p.error ? p.error : "unexpected status"),
		     NULL);
out:
	sbx_docker_probe_free(&p);
}

/* ---- sandbox: opensandbox (only when it is the one configured) ---- */

static void check_opensandbox(struct doctor *d, const struct config *c)
{
	section(d, "sandbox: opensandbox");
	char *detail = NULL, *fix = NULL;
	int rc = sbx_opensandbox_probe(c, DOC_DOCKER_MS, &detail, &fix);
	item(d, rc == 0 ? DOC_OK : DOC_FAIL, "server", detail, fix);
	if (rc < 0)
		return;
	rc = sbx_opensandbox_probe_network(c, DOC_DOCKER_MS, &detail, &fix);
	item(d,
	     rc == 0  ? DOC_OK
	     : rc > 0 ? DOC_WARN
	              : DOC_FAIL,
	     "network", detail, fix);
}

/* ---- model keys ---- */

static void check_keys(struct doctor *d, const struct config *c)
{
	section(d, "model keys");
	const char *names[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY",
	                       c->api_key_env};
	cJSON *k = cJSON_AddObjectToObject(d->report, "keys");
	int ollama = !strcmp(c->provider, "ollama");
	int script = !strcmp(c->provider, "script");
	const char *needed = ollama || script ? NULL
	                     : c->api_key_env ? c->api_key_env
	                                      : "OPENAI_API_KEY";
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		if (!names[i] || (i == 2 && (!strcmp(names[i], names[0]) ||
		                             !strcmp(names[i], names[1]))))
			continue;
		/* only whether it is set: never its value */
		const char *v = getenv(names[i]);
		int set = v && *v;
		cJSON_AddBoolToObject(k, names[i], set);
		int is_needed = needed && !strcmp(needed, names[i]);
		item(d, set || !is_needed ? DOC_OK : DOC_WARN, names[i],
		     xasprintf("%s%s", set ? "set" : "not set",
		               is_needed ? " (the configured provider uses it)"
		                         : ""),
		     set || !is_needed
		         ? NULL
		         : xasprintf("export %s=... for provider %s; without "
		                     "a key, `assay demo` and --provider "
		                     "ollama still work",
		                     names[i], c->provider));
	}
	if (ollama || script)
		item(d, DOC_OK, "provider",
		     xasprintf("%s needs no key", c->provider), NULL);
}

/* ---- output ---- */

/* Details carry what terminals, daemons and sandboxes said: every
 * string of the report is cleaned on its way to the terminal. */
static void put_clean(const char *s)
{
	char *c = ui_termcaps_printable(s, strlen(s));
	fputs(c, stdout);
	free(c);
}

/* The report as text: sections, then each item with its status and
 * what to do. */
static void print_text(const struct doctor *d)
{
	const cJSON *s;
	cJSON_ArrayForEach(s, d->sections)
	{
		put_clean(json_str(s, "name", ""));
		printf("\n");
		const cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(s, "items"))
		{
			printf("  %-4s  ", json_str(it, "status", ""));
			put_clean(json_str(it, "name", ""));
			printf(": ");
			put_clean(json_str(it, "detail", ""));
			printf("\n");
			const char *fix = json_str(it, "fix", NULL);
			if (fix) {
				printf("        -> ");
				put_clean(fix);
				printf("\n");
			}
		}
		printf("\n");
	}
	printf("%s\n", d->failed ? "assay doctor: something needed does not "
	                           "work (FAIL above)"
	                         : "assay doctor: the default setup works");
}

/* assay doctor --help. */
static void doctor_usage(FILE *f)
{
	fputs("usage: assay doctor [--json] [--images MODE] [--sandbox NAME] "
	      "[--config FILE]\n"
	      "  checks terminal graphics, the sandbox backends, the "
	      "sandbox's python\n"
	      "  libraries and model keys (whether set, never their values)\n"
	      "  --json          one JSON object instead of text\n"
	      "  --images MODE   auto|sixel|kitty|blocks|off [config, else "
	      "auto]\n"
	      "  --sandbox NAME  local|docker|opensandbox: the backend that "
	      "must work\n"
	      "                  (the others are checked too, as warnings) "
	      "[config, else local]\n"
	      "  --image IMG     the docker sandbox's image [config, else "
	      "assay-sandbox:latest]\n"
	      "  --opensandbox-url URL  the OpenSandbox server [config, "
	      "else $OPEN_SANDBOX_DOMAIN]\n"
	      "  --config FILE   extra configuration layer\n"
	      "exit codes: 0 the default setup works, 1 it does not, 2 "
	      "usage\n",
	      f);
}

int cmd_doctor(int argc, char **argv)
{
	int json = 0;
	const char *images = NULL, *extra = NULL, *sandbox = NULL;
	const char *image = NULL, *os_url = NULL;
	char *err = NULL;
	struct config c;
	config_defaults(&c);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			doctor_usage(stdout);
			config_free(&c);
			return 0;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--images") && i + 1 < argc) {
			images = argv[++i];
		} else if (!strncmp(a, "--images=", 9)) {
			images = a + 9;
		} else if (!strcmp(a, "--config") && i + 1 < argc) {
			extra = argv[++i];
		} else if (!strcmp(a, "--sandbox") && i + 1 < argc) {
			sandbox = argv[++i];
		} else if (!strcmp(a, "--image") && i + 1 < argc) {
			image = argv[++i];
		} else if (!strcmp(a, "--opensandbox-url") && i + 1 < argc) {
			os_url = argv[++i];
		} else {
			set_err(&err,
			        "doctor: unknown option or missing argument: "
			        "%s (see assay doctor --help)",
			        a);
			goto usage;
		}
	}
	char *user = config_user_file();
	int rc = config_load(&c, user, extra, &err);
	free(user);
	if (rc < 0)
		goto usage;
	if (images)
		config_set(&c.images, images);
	if (config_check_images(c.images, &err) < 0)
		goto usage;
	if (sandbox)
		config_set(&c.sandbox, sandbox);
	if (image)
		config_set(&c.image, image);
	if (os_url)
		config_set(&c.opensandbox_url, os_url);
	if (!sbx_backend_caps(c.sandbox)) {
		set_err(&err,
		        "doctor: unknown sandbox '%s': use --sandbox local, "
		        "docker or opensandbox",
		        c.sandbox ? c.sandbox : "");
		goto usage;
	}

	struct doctor d = {0};
	d.report = cJSON_CreateObject();
	d.sections = cJSON_AddArrayToObject(d.report, "sections");
	if (check_graphics(&d, c.images) < 0) {
		cJSON_Delete(d.report);
		config_free(&c);
		return EXIT_INTERRUPTED;
	}
	unsigned caps = sbx_backend_caps(c.sandbox);
	int docker = (caps & SBX_CAP_DOCKER) != 0;
	int osbx = (caps & SBX_CAP_OPENSANDBOX) != 0;
	check_local(&d, !docker && !osbx);
	check_docker(&d, &c, docker);
	if (osbx)
		check_opensandbox(&d, &c);
	check_keys(&d, &c);
	cJSON_AddStringToObject(d.report, "sandbox", c.sandbox);
	cJSON_AddBoolToObject(d.report, "ok", !d.failed);
	if (json) {
		char *text = json_print(d.report);
		printf("%s\n", text);
		free(text);
	} else {
		print_text(&d);
	}
	fflush(stdout);
	cJSON_Delete(d.report);
	config_free(&c);
	return d.failed ? 1 : 0;
usage:
	fprintf(stderr, "assay: %s\n", err);
	free(err);
	config_free(&c);
	return EXIT_USAGE;
}
