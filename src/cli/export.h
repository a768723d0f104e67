/* export.h: what the parts of `assay export` share (export.c walks the
 * transcript, export_write.c writes markdown or HTML, export_nb.c a
 * notebook, export_script.c a script, export_safe.c judges which calls
 * those may replay on a host, export_images.c finds the images to
 * embed). Private to src/cli/. */
#ifndef ASSAY_CLI_EXPORT_H
#define ASSAY_CLI_EXPORT_H

#include "assay/buf.h"

#include <cjson/cJSON.h>

#include <stddef.h>

#define EXP_LINE_MAX (16u << 20) /* longest transcript line accepted */
#define EXP_OUT_MAX (256u << 20) /* the whole record */
#define EXP_CALL_OUT_MAX 4096    /* output shown per tool call */
#define EXP_IMAGE_MAX (5u << 20) /* largest PNG embedded */
#define EXP_IMAGES_MAX 32        /* images embedded at most */
#define EXP_HELPER_MS 120000     /* the archive helper's time */
#define EXP_HELPER_OUT (64u << 10)

struct exp;

/* An image sent to the model after a call (image_sent), or refused. */
struct exp_sent {
	const char *id, *path; /* the call; the workspace path named */
	int sent;              /* 0: refused (caption says why) */
	/* "sent to the model: 800x450, ~480 tokens" or "not sent to the
	 * model: WHY" */
	char *caption;
	char *file; /* the run dir's copy (run dir + images/<sha256>.png) */
	const char *media_type;
	char *data; /* its bytes (checked against the event's sha256) */
	size_t n;
	char *why; /* why data is NULL for an image sent */
};

/* One output format: how each kind of block is written. */
struct exp_ops {
	void (*begin)(struct exp *x, const char *title);
	void (*end)(struct exp *x);
	void (*heading)(struct exp *x, int level, const char *text);
	/* prose from the conversation (may be markdown) */
	void (*text)(struct exp *x, const char *text);
	/* "label: value" line */
	void (*item)(struct exp *x, const char *label, const char *value);
	void (*code)(struct exp *x, const char *text);
	void (*note)(struct exp *x, const char *text);
	void (*image)(struct exp *x, const char *path, const unsigned char *png,
	              size_t n);
	/* an image sent to the model, at its step */
	void (*sent)(struct exp *x, const struct exp_sent *s);
};

/* The formats (export_write.c). */
extern const struct exp_ops exp_md_ops;
extern const struct exp_ops exp_html_ops;
/* ipynb and script (export_nb.c): cells gathered from every event
 * (exp_nb_event, before the walk's own handler), written at end. */
extern const struct exp_ops exp_nb_ops;
struct exp_nb;

struct exp {
	const struct exp_ops *ops;
	struct buf out;
	int overflow;
	char *run_dir;
	/* run_dir as a markdown link names it (absolute when the record
	 * is written to a file elsewhere) */
	char *link_dir;
	/* the recorded host workspace (a backend with one), as run_start
	 * recorded it */
	char *workspace;
	/* the tool call whose output is being gathered */
	char *call_id;
	struct buf call_out;
	int call_cut;
	int call_had_exec;
	/* PNG paths seen in workspace_change events */
	char *images[EXP_IMAGES_MAX];
	int n_images, images_dropped;
	struct exp_nb *nb; /* ipynb and script: the cells */
};

/* Append to the record; past EXP_OUT_MAX nothing more is kept and
 * overflow says so. */
void exp_put(struct exp *x, const char *s, size_t n);
void exp_puts(struct exp *x, const char *s);
void exp_putf(struct exp *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The "Images" section: each PNG the run wrote, from the workspace
 * directories or else the run's workspace.tar.gz (export_images.c). */
void exp_embed_images(struct exp *x);
/* An image_sent event as s: its caption, and the run dir's copy read
 * (no link followed, at most EXP_IMAGE_MAX bytes, its sha256 the
 * event's, a PNG or JPEG). exp_sent_free frees what s holds. */
void exp_sent_load(struct exp *x, const cJSON *e, struct exp_sent *s);
void exp_sent_free(struct exp_sent *s);

/* export_nb.c: the cells of a notebook (script: of a script,
 * export_nb.h). */
void exp_nb_new(struct exp *x, int script);
void exp_nb_event(struct exp *x, const cJSON *e);
void exp_nb_free(struct exp *x);

#endif
