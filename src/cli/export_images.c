/* export_images.c: the images `assay export --format html` embeds:
 * each PNG a workspace_change named, read from the run dir's workspace
 * or the recorded host workspace (one component at a time, never
 * through a link), else out of the run's workspace.tar.gz by the
 * archive helper (sbx_archive_members), each bounded in size; and the
 * copy of each image sent to the model (image_sent) from the run dir's
 * images/, shown at its step in every format. */
#include "export.h"

#include "assay/events.h"
#include "assay/sandbox.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A workspace path from the transcript stays inside the workspace. */
static int exp_safe_rel(const char *p)
{
	if (*p == '/' || !*p)
		return 0;
	for (const char *s = p; s; s = strchr(s, '/')) {
		if (*s == '/')
			s++;
		if (!strncmp(s, "..", 2) && (s[2] == '/' || !s[2]))
			return 0;
	}
	return 1;
}

static const char exp_not_here[] = "not in the workspace";

/* The file rel below the directory root, opened one component at a
 * time without following links (the sandbox made the tree: a link in
 * it must not lead the export outside). At most max bytes; NULL with
 * *why (static text, or *owned when made) if not read. */
static char *exp_read_below(const char *root, const char *rel, size_t max,
                            size_t *n, const char **why, char **owned)
{
	char *data = NULL, *save = NULL, *p = xstrdup(rel);
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	*why = exp_not_here;
	for (char *c = strtok_r(p, "/", &save); c && fd >= 0;) {
		char *next = strtok_r(NULL, "/", &save);
		int nfd = openat(fd, c,
		                 O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK |
		                     O_CLOEXEC | (next ? O_DIRECTORY : 0));
		if (nfd < 0 && (errno == ELOOP || errno == ENOTDIR))
			*why = "a link or not a file: not followed";
		else if (nfd < 0 && errno != ENOENT)
			*why = *owned =
			    xasprintf("cannot be opened: %s", strerror(errno));
		close(fd);
		fd = nfd;
		c = next;
	}
	free(p);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
	} else if ((size_t)st.st_size > max) {
		*why = *owned = xasprintf("%lld bytes, over the %zu MiB limit",
		                          (long long)st.st_size, max >> 20);
	} else {
		data = xmalloc((size_t)st.st_size + 1);
		*n = 0;
		ssize_t r;
		while (*n <= (size_t)st.st_size &&
		       (r = read(fd, data + *n, (size_t)st.st_size + 1 - *n)) !=
		           0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				*why = *owned = xasprintf("cannot be read: %s",
				                          strerror(errno));
				free(data);
				data = NULL;
				break;
			}
			*n += (size_t)r;
		}
		if (data && *n > (size_t)st.st_size) {
			*why = "grew while read";
			free(data);
			data = NULL;
		}
	}
	close(fd);
	return data;
}

/* Where each image comes from, and why one could not be had. */
struct exp_img {
	char *data;
	size_t n;
	const char *why;
	char *why_owned;
};

/* Say why im is not embedded (owned: a message to free). */
static void exp_img_why(struct exp_img *im, const char *why, char *owned)
{
	free(im->why_owned);
	im->why = why;
	im->why_owned = owned;
}

/* A name the archive helper takes: components that are neither empty,
 * "." nor "..", and no control character (its report is by lines). */
static int exp_plain_name(const char *p)
{
	for (const unsigned char *c = (const unsigned char *)p; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return 0;
	for (const char *c = p;;) {
		size_t len = strcspn(c, "/");
		if (!len || (len == 1 && c[0] == '.') ||
		    (len == 2 && !strncmp(c, "..", 2)))
			return 0;
		if (!c[len])
			return 1;
		c += len + 1;
	}
}

/* Why the helper did not write name: its "NAME<TAB>why" line, or
 * NULL. */
static char *exp_helper_says(const struct buf *report, const char *name,
                             const char *archive)
{
	const char *base = strrchr(archive, '/');
	size_t len = strlen(name);
	for (const char *l = buf_str(report); *l;) {
		const char *nl = strchr(l, '\n');
		size_t ll = nl ? (size_t)(nl - l) : strlen(l);
		if (ll > len && !strncmp(l, name, len) && l[len] == '\t')
			return xasprintf("%.*s (%s)", (int)(ll - len - 1),
			                 l + len + 1,
			                 base ? base + 1 : archive);
		l += ll + (nl ? 1 : 0);
	}
	return NULL;
}

/* The images not found in a workspace directory, from the run's
 * workspace archive: extracted by the helper into a private temporary
 * directory, then read from there like a workspace. */
static void exp_images_from_archive(struct exp *x, struct exp_img *im)
{
	char *archive = sbx_archive_find(x->run_dir);
	char **names = xcalloc(EXP_IMAGES_MAX, sizeof *names);
	char *err = NULL, *dir = NULL;
	struct buf report;
	buf_init(&report, EXP_HELPER_OUT);
	int n = 0;
	for (int i = 0; i < x->n_images; i++) {
		if (im[i].data || !exp_safe_rel(x->images[i]))
			continue;
		if (exp_plain_name(x->images[i]))
			names[n++] = x->images[i];
		else
			exp_img_why(
			    &im[i],
			    "not in the workspace, and not a plain name to "
			    "look for in its archive",
			    NULL);
	}
	if (!n)
		goto out;
	if (!archive) {
		for (int i = 0; i < x->n_images; i++)
			if (!im[i].data && im[i].why == exp_not_here)
				exp_img_why(
				    &im[i],
				    "not in the workspace, and the run "
				    "has no workspace archive to read it "
				    "from",
				    NULL);
		goto out;
	}
	const char *tmp = getenv("TMPDIR");
	dir = xasprintf("%s/assay-export-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		set_err(&err, "%s: %s", dir, strerror(errno));
		free(dir);
		dir = NULL;
	} else {
		sbx_archive_members(archive, dir, EXP_IMAGE_MAX, names, n,
		                    &report, EXP_HELPER_MS, &err);
	}
	for (int i = 0; i < x->n_images; i++) {
		if (im[i].data || !exp_safe_rel(x->images[i]) ||
		    !exp_plain_name(x->images[i]))
			continue;
		if (err) {
			exp_img_why(&im[i], NULL,
			            xasprintf("not in the workspace, and its "
			                      "archive cannot be read: %s",
			                      err));
			continue;
		}
		const char *why = NULL;
		char *owned = NULL;
		im[i].data = exp_read_below(dir, x->images[i], EXP_IMAGE_MAX,
		                            &im[i].n, &why, &owned);
		if (im[i].data) {
			exp_img_why(&im[i], NULL, NULL);
			free(owned);
			continue;
		}
		char *said = exp_helper_says(&report, x->images[i], archive);
		if (said) {
			free(owned);
			owned = said;
		}
		exp_img_why(&im[i], owned ? NULL : why, owned);
	}
out:
	if (dir)
		rm_rf(dir);
	free(dir);
	free(err);
	buf_free(&report);
	free(names);
	free(archive);
}

void exp_embed_images(struct exp *x)
{
	static const unsigned char sig[8] = {0x89, 'P',  'N',  'G',
	                                     '\r', '\n', 0x1a, '\n'};
	if (!x->n_images)
		return;
	x->ops->heading(x, 2, "Images");
	struct exp_img *im = xcalloc((size_t)x->n_images, sizeof *im);
	char *run_ws = xasprintf("%s/workspace", x->run_dir);
	/* the run dir's own first: a copied run dir reads its copy */
	const char *dirs[2] = {run_ws, x->workspace};
	for (int i = 0; i < x->n_images; i++) {
		im[i].why = "path leaves the workspace";
		if (!exp_safe_rel(x->images[i]))
			continue;
		for (int d = 0; d < 2 && !im[i].data; d++) {
			const char *why = NULL;
			char *owned = NULL;
			if (!dirs[d])
				continue;
			im[i].data =
			    exp_read_below(dirs[d], x->images[i], EXP_IMAGE_MAX,
			                   &im[i].n, &why, &owned);
			exp_img_why(&im[i], why, owned);
		}
	}
	exp_images_from_archive(x, im);
	for (int i = 0; i < x->n_images; i++) {
		const char *rel = x->images[i];
		if (im[i].data && (im[i].n < 8 || memcmp(im[i].data, sig, 8))) {
			free(im[i].data);
			im[i].data = NULL;
			exp_img_why(&im[i], "not a PNG file", NULL);
		}
		if (im[i].data) {
			x->ops->image(x, rel, (const unsigned char *)im[i].data,
			              im[i].n);
		} else {
			char *note = xasprintf("image %s skipped: %s", rel,
			                       im[i].why_owned ? im[i].why_owned
			                                       : im[i].why);
			x->ops->note(x, note);
			free(note);
		}
		free(im[i].data);
		free(im[i].why_owned);
	}
	free(im);
	free(run_ws);
	if (x->images_dropped) {
		char *note =
		    xasprintf("%d more images not embedded", x->images_dropped);
		x->ops->note(x, note);
		free(note);
	}
}

/* The copy's bytes into s, or s->why. */
static void exp_sent_read(struct exp *x, const char *file, const char *hash,
                          struct exp_sent *s)
{
	static const unsigned char png[8] = {0x89, 'P',  'N',  'G',
	                                     '\r', '\n', 0x1a, '\n'};
	const char *why = NULL;
	char *owned = NULL, got[65] = "";
	if (!ev_image_file_ok(file)) {
		s->why = xstrdup("the run dir's copy is not named "
		                 "images/<sha256>.png");
		return;
	}
	s->data = exp_read_below(x->run_dir, file, EXP_IMAGE_MAX, &s->n, &why,
	                         &owned);
	if (!s->data) {
		s->why = owned ? owned : xasprintf("%s: %s", file, why);
		return;
	}
	free(owned);
	sha256_hex(s->data, s->n, got);
	int is_png = s->n >= 8 && !memcmp(s->data, png, 8);
	int is_jpeg = s->n >= 3 && !memcmp(s->data, "\xff\xd8\xff", 3);
	if (strcmp(got, hash))
		s->why = xasprintf("%s: not the bytes recorded (sha256)", file);
	else if (!is_png && !is_jpeg)
		s->why = xasprintf("%s: not a PNG or JPEG file", file);
	if (s->why) {
		free(s->data);
		s->data = NULL;
		s->n = 0;
		return;
	}
	s->media_type = is_png ? "image/png" : "image/jpeg";
	s->file =
	    xasprintf("%s/%s", x->link_dir ? x->link_dir : x->run_dir, file);
}

void exp_sent_load(struct exp *x, const cJSON *e, struct exp_sent *s)
{
	memset(s, 0, sizeof *s);
	s->id = ev_str(e, EVF_ID, "");
	s->path = ev_str(e, EVF_PATH, "?");
	const char *err = ev_str(e, EVF_ERROR, NULL);
	if (err) {
		s->caption = xasprintf("not sent to the model: %s", err);
		return;
	}
	s->sent = 1;
	s->caption =
	    xasprintf("sent to the model: %.0fx%.0f, ~%.0f tokens",
	              ev_num(e, EVF_WIDTH, 0), ev_num(e, EVF_HEIGHT, 0),
	              ev_num(e, EVF_TOKENS, 0));
	exp_sent_read(x, ev_str(e, EVF_FILE, NULL), ev_str(e, EVF_SHA256, ""),
	              s);
}

void exp_sent_free(struct exp_sent *s)
{
	free(s->caption);
	free(s->file);
	free(s->data);
	free(s->why);
}
