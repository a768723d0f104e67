/* history.c: the file that keeps the message box's history across
 * runs, $XDG_STATE_HOME/assay/history (see history.h). It reads a
 * project's entries back, appends one, trims the file to its bound, and
 * tells what looks like a secret (never written). No curses here. The
 * JSON it reads (the history file's entries) is not an event. */
#include "tui/history.h"

#include "assay/json.h"
#include "assay/path.h"
#include "assay/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

void ui_hist_init(struct ui_hist *h, const char *path, const char *project)
{
	memset(h, 0, sizeof *h);
	h->path = path ? xstrdup(path) : path_state_dir("history");
	h->project = xstrdup(project);
	h->keep = UI_HIST_KEEP;
}

void ui_hist_free(struct ui_hist *h)
{
	free(h->path);
	free(h->project);
	free(h->last);
	memset(h, 0, sizeof *h);
}

/* ---- what looks like a secret -------------------------------------------
 */

/* A character of a key or a token (not of a path or a sentence). */
static int hist_tokch(int c)
{
	return isalnum(c) || c == '_' || c == '-';
}

/* The prefixes of the API keys and tokens providers hand out. */
static const char *const hist_key_prefixes[] = {
    "sk-",  "sk_live_", "rk_live_",    "ghp_",  "gho_",  "ghu_",  "ghs_",
    "ghr_", "glpat-",   "github_pat_", "xoxb-", "xoxp-", "xapp-", "hf_",
    "AKIA", "ASIA",     "AIza",        "ya29.", "npm_",  "pypi-",
};

/* A known prefix at s, then 16 or more token characters with a letter
 * and a digit among them ("sk-learn-style-names" is no key). */
static int hist_prefixed_key(const char *s)
{
	for (size_t i = 0;
	     i < sizeof hist_key_prefixes / sizeof *hist_key_prefixes; i++) {
		size_t n = strlen(hist_key_prefixes[i]);
		if (strncmp(s, hist_key_prefixes[i], n))
			continue;
		size_t k = 0;
		int alpha = 0, digit = 0;
		for (; hist_tokch((unsigned char)s[n + k]); k++) {
			alpha |= isalpha((unsigned char)s[n + k]) != 0;
			digit |= isdigit((unsigned char)s[n + k]) != 0;
		}
		if (k >= 16 && alpha && digit)
			return 1;
	}
	return 0;
}

/* The class of a character for hist_random_token: 0 lower, 1 upper,
 * 2 digit, 3 other. */
static int hist_class(unsigned char c)
{
	return islower(c) ? 0 : isupper(c) ? 1 : isdigit(c) ? 2 : 3;
}

/* A run of n token characters that reads as random: long, with letters
 * of both cases and digits, which change class between neighbours in
 * at least 40% of the places (about 60% in a random key; a CamelCase
 * name, a hex digest or a UUID stays far below). */
static int hist_random_token(const char *s, size_t n)
{
	if (n < 32)
		return 0;
	size_t count[4] = {0}, pairs = 0, changes = 0;
	for (size_t i = 0; i < n; i++) {
		int c = hist_class((unsigned char)s[i]);
		count[c]++;
		if (i == 0 || c == 3)
			continue;
		int prev = hist_class((unsigned char)s[i - 1]);
		if (prev == 3)
			continue;
		pairs++;
		changes += prev != c;
	}
	if (count[0] < 2 || count[1] < 2 || count[2] < 2)
		return 0;
	return changes * 10 >= pairs * 4;
}

/* NAME=value (or NAME: value) where NAME (n bytes) names a key, a
 * token, a secret or a password, and the value after sign is more than
 * a placeholder. */
static int hist_secret_assignment(const char *name, size_t n, const char *sign)
{
	static const char *const words[] = {
	    "key", "token", "secret", "passw", "pwd", "credential", "private"};
	char low[64];
	if (n == 0 || n >= sizeof low)
		return 0;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[n] = '\0';
	int named = 0;
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		named |= strstr(low, words[i]) != NULL;
	if (!named)
		return 0;
	const char *v = sign + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	if (*v == '"' || *v == '\'')
		v++;
	size_t k = 0;
	while (v[k] && !isspace((unsigned char)v[k]) && v[k] != '"' &&
	       v[k] != '\'')
		k++;
	/* "the key: use..." is prose; "password=hunter2" is not */
	return *sign == '=' ? k >= 6 : k >= 12;
}

int ui_hist_secret(const char *text)
{
	if (strstr(text, "PRIVATE KEY-----"))
		return 1;
	for (const char *s = text; *s;) {
		if (!hist_tokch((unsigned char)*s)) {
			s++;
			continue;
		}
		const char *z = s;
		while (hist_tokch((unsigned char)*z))
			z++;
		if (hist_prefixed_key(s) ||
		    hist_random_token(s, (size_t)(z - s)))
			return 1;
		const char *sign = z;
		if (*sign == '"' || *sign == '\'') /* "api_key": "..." */
			sign++;
		while (*sign == ' ')
			sign++;
		if ((*sign == '=' || *sign == ':') &&
		    hist_secret_assignment(s, (size_t)(z - s), sign))
			return 1;
		s = z;
	}
	return 0;
}

/* ---- the file -------------------------------------------------------------
 */

/* The last max bytes of the file at path (from a line's start) into
 * *out, its size in *size; an absent file is empty. -1 + *err. */
static int hist_read_tail(const char *path, size_t max, struct buf *out,
                          size_t *size, char **err)
{
	*size = 0;
	char *why = NULL;
	int fd = open_regular(path, O_RDONLY | O_NOFOLLOW, 0, &why);
	if (fd < 0) {
		int rc = errno == ENOENT ? 0 : set_err(err, "%s", why);
		free(why);
		return rc;
	}
	struct stat st;
	int rc = -1;
	if (fstat(fd, &st) < 0) {
		set_err(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	*size = (size_t)st.st_size;
	off_t from = st.st_size > (off_t)max ? st.st_size - (off_t)max : 0;
	char chunk[65536];
	ssize_t r;
	while ((r = pread(fd, chunk, sizeof chunk, from)) > 0 &&
	       out->len < max) {
		size_t take = (size_t)r;
		if (out->len + take > max)
			take = max - out->len;
		buf_append(out, chunk, take);
		from += r;
	}
	if (r < 0) {
		set_err(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (st.st_size > (off_t)max) { /* begin at a whole line */
		char *nl = memchr(out->data, '\n', out->len);
		size_t cut = nl ? (size_t)(nl - out->data) + 1 : out->len;
		memmove(out->data, out->data + cut, out->len - cut + 1);
		out->len -= cut;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

/* An entry of the file: its project and text, or NULL (a line that is
 * not one is skipped: a torn write, an older format). Free with
 * cJSON_Delete. */
static cJSON *hist_parse(const char *line, size_t n, const char **project,
                         const char **text)
{
	cJSON *e = cJSON_ParseWithLength(line, n);
	const cJSON *p = cJSON_GetObjectItem(e, "project");
	const cJSON *t = cJSON_GetObjectItem(e, "text");
	if (!cJSON_IsString(p) || !cJSON_IsString(t)) {
		cJSON_Delete(e);
		return NULL;
	}
	*project = p->valuestring;
	*text = t->valuestring;
	return e;
}

/* Calls fn for each entry of the file's text (n bytes), oldest first. */
static void hist_each(const char *data, size_t n,
                      void (*fn)(void *arg, const char *line, size_t len,
                                 const char *project, const char *text),
                      void *arg)
{
	for (size_t a = 0; a < n;) {
		const char *nl = memchr(data + a, '\n', n - a);
		size_t z = nl ? (size_t)(nl - data) : n;
		const char *project, *text;
		cJSON *e = hist_parse(data + a, z - a, &project, &text);
		if (e)
			fn(arg, data + a, z - a, project, text);
		cJSON_Delete(e);
		a = z + 1;
	}
}

struct hist_loading {
	struct ui_hist *h;
	struct ui_input *in;
};

/* One entry read back: this project's, cleaned as typed text is. */
static void hist_load_one(void *arg, const char *line, size_t len,
                          const char *project, const char *text)
{
	struct hist_loading *l = arg;
	(void)line;
	l->h->lines++;
	if (strcmp(project, l->h->project) || ui_hist_secret(text))
		return;
	struct ui_input clean;
	ui_input_init(&clean);
	ui_input_insert(&clean, text, strnlen(text, UI_HIST_TEXT_MAX));
	if (clean.text.len) {
		ui_input_remember(l->in, buf_str(&clean.text));
		free(l->h->last);
		l->h->last = xstrdup(buf_str(&clean.text));
	}
	ui_input_free(&clean);
	(void)len;
}

int ui_hist_load(struct ui_hist *h, struct ui_input *in, char **err)
{
	if (!h->path)
		return 0;
	struct buf data;
	buf_init(&data, 0);
	size_t size;
	int rc =
	    hist_read_tail(h->path, 2 * UI_HIST_FILE_MAX, &data, &size, err);
	if (rc == 0) {
		struct hist_loading l = {h, in};
		h->lines = 0;
		hist_each(data.data, data.len, hist_load_one, &l);
		h->bytes = size;
	}
	buf_free(&data);
	return rc;
}

/* The lock that makes an append and a trim of the file one at a time
 * across runs (the file itself is replaced by a trim); its fd or -1. */
static int hist_lock(const struct ui_hist *h, char **err)
{
	char *lock = xasprintf("%s.lock", h->path);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		set_err(err, "%s: %s", lock, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	free(lock);
	return fd;
}

/* Write all of data to fd; -1 (errno) on failure. */
static int hist_write_all(int fd, const char *data, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, data, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		data += w;
		n -= (size_t)w;
	}
	return 0;
}

struct hist_lines {
	const char **line;
	size_t *len;
	size_t n, cap;
};

static void hist_collect(void *arg, const char *line, size_t len,
                         const char *project, const char *text)
{
	struct hist_lines *l = arg;
	(void)project;
	(void)text;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->line = xrealloc(l->line, l->cap * sizeof *l->line);
		l->len = xrealloc(l->len, l->cap * sizeof *l->len);
	}
	l->line[l->n] = line;
	l->len[l->n++] = len;
}

/* The file rewritten with its newest h->keep entries (and no more than
 * half of UI_HIST_FILE_MAX): a temp file of mode 0600 renamed over it.
 * Under the lock. */
static int hist_trim(struct ui_hist *h, char **err)
{
	struct buf data, out;
	struct hist_lines l = {0};
	buf_init(&data, 0);
	buf_init(&out, 0);
	char *tmp = xasprintf("%s.XXXXXX", h->path);
	int fd = -1, rc = -1;
	size_t size;
	if (hist_read_tail(h->path, 2 * UI_HIST_FILE_MAX, &data, &size, err) <
	    0)
		goto out;
	hist_each(data.data, data.len, hist_collect, &l);
	if (l.n <= h->keep + h->keep / 2 && size <= UI_HIST_FILE_MAX) {
		h->lines = l.n; /* this run counted too few: not yet */
		h->bytes = size;
		rc = 0;
		goto out;
	}
	size_t first = l.n > h->keep ? l.n - h->keep : 0, bytes = 0;
	for (size_t i = l.n; i-- > first;) {
		if (bytes + l.len[i] + 1 > UI_HIST_FILE_MAX / 2) {
			first = i + 1;
			break;
		}
		bytes += l.len[i] + 1;
	}
	for (size_t i = first; i < l.n; i++) {
		buf_append(&out, l.line[i], l.len[i]);
		buf_append(&out, "\n", 1);
	}
	fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0 || hist_write_all(fd, out.data ? out.data : "", out.len) ||
	    fsync(fd) < 0 || close(fd) < 0) {
		set_err(err, "%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		goto out;
	}
	if (rename(tmp, h->path) < 0) {
		set_err(err, "%s: %s", h->path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	h->lines = l.n - first;
	h->bytes = out.len;
	rc = 0;
out:
	free(l.line);
	free(l.len);
	free(tmp);
	buf_free(&data);
	buf_free(&out);
	return rc;
}

/* The entry's line: one JSON object, its new lines escaped. */
static char *hist_line(const struct ui_hist *h, const char *text, int64_t t)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "project", h->project);
	cJSON_AddNumberToObject(e, "t", (double)t);
	cJSON_AddStringToObject(e, "text", text);
	char *json = cJSON_PrintUnformatted(e);
	cJSON_Delete(e);
	char *line = xasprintf("%s\n", json);
	cJSON_free(json);
	return line;
}

/* Append line to the file (created 0600; an older file made 0600). */
static int hist_append(struct ui_hist *h, const char *line, char **err)
{
	/* a FIFO there would block the open: refused by its type */
	int fd = open_regular(
	    h->path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0600, err);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 ||
	    ((st.st_mode & 077) && fchmod(fd, 0600) < 0) ||
	    hist_write_all(fd, line, strlen(line)) < 0) {
		set_err(err, "%s: %s", h->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (close(fd) < 0)
		return set_err(err, "%s: %s", h->path, strerror(errno));
	h->lines++;
	h->bytes = (size_t)st.st_size + strlen(line);
	return 0;
}

int ui_hist_add(struct ui_hist *h, const char *text, int64_t t, char **err)
{
	size_t n = strlen(text);
	if (!h->path || !text[strspn(text, " \n")] || n > UI_HIST_TEXT_MAX ||
	    ui_hist_secret(text) || (h->last && !strcmp(h->last, text)))
		return 0;
	char *dir = xstrdup(h->path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	char *line = hist_line(h, text, t);
	int rc = -1, lock = -1;
	if (mkdir_p(dir, err) < 0 || (lock = hist_lock(h, err)) < 0)
		goto out;
	if (hist_append(h, line, err) < 0)
		goto out;
	free(h->last);
	h->last = xstrdup(text);
	rc = 0;
	if (h->lines > h->keep + h->keep / 2 || h->bytes > UI_HIST_FILE_MAX)
		rc = hist_trim(h, err);
out:
	if (lock >= 0)
		close(lock);
	free(line);
	free(dir);
	return rc;
}
