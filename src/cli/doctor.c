/* doctor.c: `assay doctor`: what works on this machine and what to do
 * about what does not, one section per area (terminal graphics, the
 * sandbox backends, the sandbox's python libraries, model keys, MCP
 * servers), each
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

#define DOC_TTY_MS 150    /* the terminal's answers */
#define DOC_TMUX_MS 500   /* tmux display -p */
#define DOC_PROBE_MS 3000 /* each call to a sandbox daemon or server */
#define DOC_MCP_MS 10000  /* the MCP servers' start, all together */

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

/* ---- the sandbox backends ---- */

/* What the backends' probes found (sbx_probe: the chosen one must work,
 * the others are warnings), as sections of the report; the facts they
 * learned (the local sandbox's python) go into the report as they are. */
static void check_sandboxes(struct doctor *d, const struct config *c)
{
	static const enum doc_status st[] = {
	    [SBX_PROBE_OK] = DOC_OK,
	    [SBX_PROBE_WARN] = DOC_WARN,
	    [SBX_PROBE_FAIL] = DOC_FAIL,
	};
	struct sbx_probe p;
	sbx_probe(c, DOC_PROBE_MS, &p);
	for (size_t i = 0; i < p.n; i++) {
		section(d, p.v[i].name);
		for (size_t k = 0; k < p.v[i].n; k++) {
			struct sbx_probe_item *it = &p.v[i].items[k];
			item(d, st[it->status], it->name, it->detail, it->fix);
			it->detail = it->fix = NULL; /* taken */
		}
	}
	cJSON *f;
	while (p.facts && (f = p.facts->child)) {
		cJSON_DetachItemViaPointer(p.facts, f);
		cJSON_AddItemToObject(d->report, f->string, f);
	}
	sbx_probe_free(&p);
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

/* ---- MCP servers ---- */

/* Each configured MCP server started (at most DOC_MCP_MS for all), its
 * tools counted, ended. */
static void check_mcp(struct doctor *d, const struct config *c)
{
	section(d, "MCP servers");
	if (!cJSON_GetArraySize(c->mcp_servers)) {
		item(d, DOC_OK, "mcp_servers",
		     xstrdup("none configured (\"mcp_servers\" in your "
		             "config: assay help config)"),
		     NULL);
		return;
	}
	cJSON *got = mcp_probe(c->mcp_servers, DOC_MCP_MS);
	const cJSON *o;
	cJSON_ArrayForEach(o, got)
	{
		int ready = !strcmp(json_str(o, "status", ""), "ready");
		item(d, ready ? DOC_OK : DOC_WARN, json_str(o, "name", "?"),
		     ready
		         ? xasprintf("%s, ready: %.0f tools",
		                     json_str(o, "transport", ""),
		                     json_num(o, "tools", 0))
		         : xasprintf("%s, %s: %s", json_str(o, "transport", ""),
		                     json_str(o, "status", ""),
		                     json_str(o, "why", "no answer in time")),
		     ready ? NULL
		           : xstrdup("assay mcp list -v NAME shows its log; a "
		                     "run goes on without its tools"));
	}
	cJSON_AddItemToObject(d->report, "mcp", got);
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
	      "auto]\n",
	      f);
	char *names = sbx_backend_names("|");
	fprintf(f, "  --sandbox NAME  %s: the backend that must work\n", names);
	free(names);
	fputs("                  (the others are checked too, as warnings) "
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
	if (!sbx_backend_exists(c.sandbox)) {
		char *names = sbx_backend_names(NULL);
		set_err(&err, "doctor: unknown sandbox '%s': use --sandbox %s",
		        c.sandbox ? c.sandbox : "", names);
		free(names);
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
	check_sandboxes(&d, &c);
	check_keys(&d, &c);
	check_mcp(&d, &c);
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
