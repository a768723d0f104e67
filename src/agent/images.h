/* images.h: the images part of a session: images that go to the model
 * with a call's result (images.c). view_image reads a workspace image
 * through the sandbox; with send_images "auto" each image a call made or
 * changed goes too. The assay-image helper checks, scales and re-encodes
 * each one (assay never decodes an image); the bytes sent are kept once
 * in the run dir (images/<sha256>.<ext>), the image_sent event says what
 * went, and the conversation's tool message carries it ("images"). */
#ifndef ASSAY_AGENT_IMAGES_H
#define ASSAY_AGENT_IMAGES_H

#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#include "assay/buf.h"

struct session;
struct image_job; /* one image on its way (images.c) */

/* part: img, owner: src/agent/images.c */
struct images {
	struct image_job *q;   /* waiting, in order */
	struct image_job *run; /* being read or prepared */
	pid_t pid;             /* the helper preparing run, or 0 */
	int out_fd, err_fd;
	uint64_t timer;    /* the helper's deadline */
	struct buf out;    /* its stdout */
	struct buf err;    /* its stderr */
	int timed_out;     /* killed at its deadline */
	int cancelled;     /* killed by images_cancel */
	cJSON *sent;       /* {sha256: 1}: sent already, not again by auto */
	char *auto_call;   /* the call auto images are counted for */
	int auto_count;    /* ... and how many it had */
	int told_novision; /* auto skipped for a model without vision */
};

/* No job, no helper (a new session). */
void images_init(struct images *im);
/* view_image {path, [detail]}: the call's result is the image (or why
 * not), through tools_finished_images. */
void images_view(struct session *s, const char *id, const cJSON *args);
/* A call changed (or made) workspace file path (diffs.c): with
 * send_images "auto", an image goes to the model with its result. */
void images_changed(struct session *s, const char *call, const char *path);
/* Images are being prepared: the session waits (session_scanned when
 * they are done). */
int images_busy(const struct session *s);
/* Stop what is under way (a view gets "cancelled"). */
void images_cancel(struct session *s);
void images_free(struct session *s);
/* A recorded image_sent event (ev) of the run in run_dir as the
 * conversation holds it ({path, media_type, width, height, tokens,
 * detail, sha256, data}): its bytes read back from the run dir and
 * checked against the sha256. NULL + *err when they are missing or
 * differ, or ev records an image not sent. */
cJSON *images_part(const char *run_dir, const cJSON *ev, char **err);

#endif
