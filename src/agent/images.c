/* images.c: images to the model (images.h). One image at a time: its
 * bytes read through the sandbox (every backend alike), put in an
 * unlinked file of the run dir for the assay-image helper's stdin, the
 * helper's answer (the image scaled to what the provider uses, checked
 * and re-encoded) read from the loop under a deadline, the result kept
 * in the run dir by its sha256. The helper's output line is not an
 * event; neither is the conversation's image part. */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/imgrender.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/models.h"
#include "assay/path.h"
#include "assay/spawn.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define IMAGES_MAX_FILE (32u << 20) /* read at most this much */
#define IMAGES_MAX_OUT (40u << 20)  /* the helper's answer */
#define IMAGES_TIMEOUT_MS 10000     /* the helper's deadline */
#define IMAGES_AUTO_MAX 4           /* auto images per call */

struct image_job {
	char *id;        /* the call */
	char *path;      /* workspace-relative */
	const char *how; /* "view" or "auto" */
	char *detail;
	int in_fd; /* the bytes, for the helper's stdin */
	struct image_job *next;
};

static void images_next(struct session *s);

static void job_free(struct image_job *j)
{
	if (!j)
		return;
	if (j->in_fd >= 0)
		close(j->in_fd);
	free(j->id);
	free(j->path);
	free(j->detail);
	free(j);
}

static const char *images_ext(const char *media_type)
{
	if (!strcmp(media_type, "image/jpeg"))
		return "jpg";
	if (!strcmp(media_type, "image/gif"))
		return "gif";
	if (!strcmp(media_type, "image/webp"))
		return "webp";
	return "png";
}

/* Whether path names an image by its extension (auto: what to look at). */
static int images_named(const char *path)
{
	const char *dot = strrchr(path, '.');
	static const char *const exts[] = {"png", "jpg", "jpeg", "gif", "webp"};
	if (!dot)
		return 0;
	for (size_t i = 0; i < sizeof exts / sizeof *exts; i++)
		if (!strcasecmp(dot + 1, exts[i]))
			return 1;
	return 0;
}

/* The model of the run takes images. */
static int images_vision(const struct session *s)
{
	const struct model_info *m =
	    models_find(s->budget.models, llm_model(s->llm));
	return models_vision(m, llm_provider(s->llm));
}

static const char *images_detail(const char *d)
{
	return d && (!strcmp(d, "low") || !strcmp(d, "high")) ? d : "auto";
}

/* --- the end of a job ------------------------------------------------ */

/* A job is over: its call hears (view) or the record does (auto). sent
 * is {"event", "part"} (taken) or NULL with why. */
static void images_done(struct session *s, struct image_job *j, cJSON *sent,
                        const char *text, const char *why)
{
	if (!strcmp(j->how, "view")) {
		if (sent) {
			cJSON *list = cJSON_CreateArray();
			cJSON_AddItemToArray(list, sent);
			tools_finished_images(s, j->id, text, 0, list);
		} else {
			char *msg = xasprintf("view_image: %s", why);
			tools_finished(s, j->id, msg, 1);
			free(msg);
		}
		return;
	}
	if (!sent) {
		struct ev_image im = {
		    .id = j->id, .path = j->path, .how = j->how, .error = why};
		session_emit(s, ev_image_sent(&im));
		return;
	}
	session_emit(s, cJSON_Duplicate(cJSON_GetObjectItem(sent, "event"), 1));
	messages_add_image(s->conv.messages, j->id,
	                   cJSON_DetachItemFromObject(sent, "part"));
	cJSON_Delete(sent);
}

/* The helper's answer: "ok view W H SRC_W SRC_H NBYTES MEDIA_TYPE\n"
 * and the bytes. 0 and the fields, else -1. */
static int images_parse(const struct buf *out, int *wh, const char **bytes,
                        size_t *n, char type[32])
{
	const char *nl = memchr(out->data ? out->data : "", '\n', out->len);
	if (!nl)
		return -1;
	char line[160];
	size_t ll = (size_t)(nl - out->data);
	if (ll >= sizeof line)
		return -1;
	memcpy(line, out->data, ll);
	line[ll] = '\0';
	unsigned long nb = 0;
	if (sscanf(line, "ok view %d %d %d %d %lu %31s", &wh[0], &wh[1], &wh[2],
	           &wh[3], &nb, type) != 6)
		return -1;
	if (nb != out->len - ll - 1 || wh[0] < 1 || wh[1] < 1 ||
	    strncmp(type, "image/", 6))
		return -1;
	*bytes = nl + 1;
	*n = nb;
	return 0;
}

/* The run dir's images/ (made if missing) is a directory of its own,
 * not a link elsewhere (a run dir may come from anyone). */
static int images_dir(const char *run_dir, int make, char **err)
{
	char *dir = xasprintf("%s/images", run_dir);
	struct stat st;
	if (make && mkdir(dir, 0755) < 0 && errno != EEXIST) {
		set_err(err, "cannot make %s: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	int rc = 0;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		rc = set_err(err, "%s is not a directory of the run dir", dir);
	free(dir);
	return rc;
}

/* Keep bytes in the run dir as rel (once: the name is their hash). */
static int images_keep(const struct session *s, const char *rel,
                       const char *bytes, size_t n, char **err)
{
	char *path = xasprintf("%s/%s", s->rundir.run_dir, rel);
	struct stat st;
	int rc = 0;
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size != n)
		rc = write_file_atomic(path, bytes, n, err);
	free(path);
	return rc;
}

/* The helper is done with job j: what it made goes to the model. */
static void images_answer(struct session *s, struct image_job *j)
{
	int wh[4];
	const char *bytes;
	size_t n;
	char type[32], hash[65], *err = NULL;
	if (images_parse(&s->img.out, wh, &bytes, &n, type) < 0) {
		images_done(s, j, NULL, NULL,
		            "the image helper gave no valid image");
		return;
	}
	sha256_hex(bytes, n, hash);
	char *file = xasprintf("images/%s.%s", hash, images_ext(type));
	if (images_keep(s, file, bytes, n, &err) < 0) {
		char *why = xasprintf("cannot keep it in the run dir: %s", err);
		images_done(s, j, NULL, NULL, why);
		free(why);
		free(err);
		free(file);
		return;
	}
	const struct model_info *m =
	    models_find(s->budget.models, llm_model(s->llm));
	long tokens = models_image_tokens(m, llm_provider(s->llm), wh[0], wh[1],
	                                  j->detail);
	struct ev_image im = {.id = j->id,
	                      .path = j->path,
	                      .how = j->how,
	                      .media_type = type,
	                      .sha256 = hash,
	                      .file = file,
	                      .detail = j->detail,
	                      .width = wh[0],
	                      .height = wh[1],
	                      .src_width = wh[2],
	                      .src_height = wh[3],
	                      .bytes = (double)n,
	                      .tokens = tokens};
	cJSON *ev = ev_image_sent(&im);
	cJSON *sent = cJSON_CreateObject();
	cJSON_AddItemToObject(sent, "part",
	                      images_part(s->rundir.run_dir, ev, NULL));
	cJSON_AddItemToObject(sent, "event", ev);
	if (!cJSON_IsObject(cJSON_GetObjectItem(sent, "part"))) {
		cJSON_Delete(sent);
		images_done(
		    s, j, NULL, NULL,
		    "the image kept in the run dir cannot be read back");
		free(file);
		return;
	}
	const char *had = messages_image_call(s->conv.messages, hash);
	if (had) { /* the same image is in the conversation already */
		char *text = xasprintf(
		    "%s: the same image (%dx%d) is with the result of call "
		    "%s above, unchanged since; look at it there",
		    j->path, wh[0], wh[1], had);
		log_info("images: %s of call %s was sent with call %s", j->path,
		         j->id, had);
		cJSON_Delete(sent);
		if (!strcmp(j->how, "view"))
			tools_finished(s, j->id, text, 0);
		free(text);
		free(file);
		return;
	}
	char *text = xasprintf(
	    "%s: %dx%d %s, sent to the model as %dx%d (about %ld tokens); "
	    "look at it and check what you meant to show",
	    j->path, wh[2], wh[3], type + 6, wh[0], wh[1], tokens);
	images_done(s, j, sent, text, NULL);
	free(text);
	free(file);
}

/* The helper's exit code and stderr as the reason a job failed. */
static char *images_child_error(struct session *s, int status)
{
	if (s->img.cancelled)
		return xstrdup("cancelled");
	if (s->img.timed_out)
		return xasprintf("preparing the image took over %d s: save a "
		                 "smaller image",
		                 IMAGES_TIMEOUT_MS / 1000);
	char *e = xstrdup(buf_str(&s->img.err));
	size_t n = strlen(e);
	while (n && (e[n - 1] == '\n' || e[n - 1] == '\r'))
		e[--n] = '\0';
	const char *msg = !strncmp(e, "image: ", 7) ? e + 7 : e;
	if (*msg) {
		char *clean = utf8_sanitize(msg, strlen(msg), NULL);
		free(e);
		return clean;
	}
	free(e);
	if (WIFSIGNALED(status))
		return xasprintf("the image helper was killed by signal %d "
		                 "(a limit: CPU time or memory)",
		                 WTERMSIG(status));
	return xasprintf("the image helper failed (exit %d)",
	                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* --- the helper ------------------------------------------------------ */

static void images_close_fds(struct session *s)
{
	int *fds[] = {&s->img.out_fd, &s->img.err_fd};
	for (int i = 0; i < 2; i++) {
		if (*fds[i] >= 0) {
			loop_fd_del(s->loop, *fds[i]);
			close(*fds[i]);
			*fds[i] = -1;
		}
	}
}

/* Read what the helper wrote so far (to EOF or EAGAIN). */
static void images_drain(struct session *s, int *fd, struct buf *b, size_t max)
{
	char chunk[65536];
	for (;;) {
		ssize_t r = read(*fd, chunk, sizeof chunk);
		if (r > 0) {
			if (b->len + (size_t)r <= max)
				buf_append(b, chunk, (size_t)r);
			else if (s->img.pid > 0) /* too much: no image */
				kill(s->img.pid, SIGKILL);
			continue;
		}
		if (r < 0 && (errno == EINTR))
			continue;
		if (r == 0 || errno != EAGAIN) {
			loop_fd_del(s->loop, *fd);
			close(*fd);
			*fd = -1;
		}
		return;
	}
}

static void images_on_fd(int fd, int revents, void *arg)
{
	struct session *s = arg;
	(void)revents;
	if (fd == s->img.out_fd)
		images_drain(s, &s->img.out_fd, &s->img.out, IMAGES_MAX_OUT);
	else if (fd == s->img.err_fd)
		images_drain(s, &s->img.err_fd, &s->img.err, 4096);
}

static void images_on_timeout(void *arg)
{
	struct session *s = arg;
	s->img.timer = 0;
	s->img.timed_out = 1;
	if (s->img.pid > 0)
		kill(s->img.pid, SIGKILL);
}

static void images_on_exit(pid_t pid, int status, void *arg)
{
	struct session *s = arg;
	(void)pid;
	if (s->img.out_fd >= 0)
		images_drain(s, &s->img.out_fd, &s->img.out, IMAGES_MAX_OUT);
	if (s->img.err_fd >= 0)
		images_drain(s, &s->img.err_fd, &s->img.err, 4096);
	images_close_fds(s);
	if (s->img.timer)
		loop_timer_cancel(s->loop, s->img.timer);
	s->img.timer = 0;
	s->img.pid = 0;
	struct image_job *j = s->img.run;
	s->img.run = NULL;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    !s->img.timed_out) {
		images_answer(s, j);
	} else {
		char *why = images_child_error(s, status);
		images_done(s, j, NULL, NULL, why);
		free(why);
	}
	job_free(j);
	buf_free(&s->img.out);
	buf_free(&s->img.err);
	images_next(s);
}

/* Start the helper on job j's bytes, with the provider's box. */
static int images_spawn(struct session *s, struct image_job *j, char **err)
{
	char *bin = helper_path("ASSAY_IMAGE_BIN", "assay-image");
	if (!bin || access(bin, X_OK) < 0) {
		set_err(err,
		        "the image helper %s is missing: reinstall assay "
		        "(assay-image belongs beside assay) or set "
		        "ASSAY_IMAGE_BIN",
		        bin ? bin : "assay-image");
		free(bin);
		return -1;
	}
	struct model_image_box box =
	    models_image_box(llm_provider(s->llm), j->detail);
	char a_max[32], a_mpx[32], a_short[32];
	snprintf(a_max, sizeof a_max, "max=%d", box.max);
	snprintf(a_mpx, sizeof a_mpx, "mpx=%d", box.mpx);
	snprintf(a_short, sizeof a_short, "short=%d", box.shortside);
	char *argv[] = {bin, "view", a_max, a_mpx, a_short, NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	struct spawn_opts o = {
	    .argv = argv,
	    .envp = envp,
	    .io = {{SPAWN_FD, j->in_fd}, {SPAWN_PIPE, -1}, {SPAWN_PIPE, -1}}};
	struct spawn_proc p;
	int rc = spawn_start(&o, &p, err);
	free(bin);
	if (rc < 0)
		return -1;
	s->img.pid = p.pid;
	s->img.out_fd = p.fd[STDOUT_FILENO];
	s->img.err_fd = p.fd[STDERR_FILENO];
	fcntl(s->img.out_fd, F_SETFL, O_NONBLOCK);
	fcntl(s->img.err_fd, F_SETFL, O_NONBLOCK);
	buf_init(&s->img.out, 0);
	buf_init(&s->img.err, 0);
	s->img.timed_out = s->img.cancelled = 0;
	loop_fd_add(s->loop, s->img.out_fd, POLLIN, images_on_fd, s);
	loop_fd_add(s->loop, s->img.err_fd, POLLIN, images_on_fd, s);
	s->img.timer =
	    loop_timer_add(s->loop, IMAGES_TIMEOUT_MS, images_on_timeout, s);
	loop_child_watch(s->loop, p.pid, images_on_exit, s);
	return 0;
}

/* The bytes in an unlinked file of the run dir (the helper's stdin). */
static int images_stage(const struct session *s, const struct buf *data,
                        char **err)
{
	if (images_dir(s->rundir.run_dir, 1, err) < 0)
		return -1;
	char *tmpl = xasprintf("%s/images/.in-XXXXXX", s->rundir.run_dir);
	int fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0) {
		set_err(err, "cannot stage the image: %s", strerror(errno));
		free(tmpl);
		return -1;
	}
	unlink(tmpl);
	free(tmpl);
	size_t off = 0;
	while (off < data->len) {
		ssize_t w = write(fd, data->data + off, data->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			set_err(err, "cannot stage the image: %s",
			        strerror(errno));
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* The image's bytes arrived from the sandbox. */
static void images_read(struct session *s, void *ctx, int rc, const char *err,
                        struct buf *data, cJSON *list)
{
	struct image_job *j = ctx;
	char *why = NULL;
	(void)list;
	if (s->img.run != j) { /* cancelled meanwhile */
		job_free(j);
		return;
	}
	if (rc == SBX_TRUNCATED)
		why = xasprintf("%s is larger than %u MiB: save a smaller "
		                "image",
		                j->path, IMAGES_MAX_FILE >> 20);
	else if (rc < 0)
		why = xstrdup(err ? err : "cannot read it");
	else if ((j->in_fd = images_stage(s, data, &why)) >= 0 &&
	         images_spawn(s, j, &why) == 0)
		return;
	s->img.run = NULL;
	images_done(s, j, NULL, NULL, why);
	free(why);
	job_free(j);
	images_next(s);
}

/* Start the next job when none runs; when none is left, the session
 * goes on. */
static void images_next(struct session *s)
{
	if (s->img.run)
		return;
	struct image_job *j = s->img.q;
	if (!j) {
		session_scanned(s);
		return;
	}
	s->img.q = j->next;
	j->next = NULL;
	s->img.run = j;
	sbx_read_file(s->sbx, j->path, IMAGES_MAX_FILE, session_sbx_done,
	              session_sbx_call(s, images_read, j));
}

static void images_queue(struct session *s, const char *id, const char *rel,
                         const char *how, const char *detail)
{
	struct image_job *j = xcalloc(1, sizeof *j);
	j->id = xstrdup(id);
	j->path = xstrdup(rel);
	j->how = how;
	j->detail = xstrdup(images_detail(detail));
	j->in_fd = -1;
	struct image_job **tail = &s->img.q;
	while (*tail)
		tail = &(*tail)->next;
	*tail = j;
	images_next(s);
}

/* --- entry points ---------------------------------------------------- */

void images_init(struct images *im)
{
	memset(im, 0, sizeof *im);
	im->out_fd = im->err_fd = -1;
}

/* The call's arguments are not an event. */
void images_view(struct session *s, const char *id, const cJSON *args)
{
	const char *path = json_str(args, "path", NULL);
	char *rel = NULL, *err = NULL;
	if (!path) {
		tools_finished(s, id, "view_image: missing \"path\" (a string)",
		               1);
		return;
	}
	if (!images_vision(s)) {
		char *msg = xasprintf(
		    "view_image: the model %s does not take images (the model "
		    "table marks it without vision), so %s was not sent; "
		    "check the figure from the data that made it instead",
		    llm_model(s->llm) ? llm_model(s->llm) : "in use", path);
		tools_finished(s, id, msg, 1);
		free(msg);
		return;
	}
	if (path_normalize(path, &rel, &err) < 0) {
		char *msg = xasprintf("view_image: %s", err);
		tools_finished(s, id, msg, 1);
		free(msg);
		free(err);
		return;
	}
	images_queue(s, id, rel, "view", json_str(args, "detail", NULL));
	free(rel);
}

void images_changed(struct session *s, const char *call, const char *path)
{
	if (!call || !images_named(path) || s->state == SESSION_ENDING ||
	    strcmp(s->cfg->send_images ? s->cfg->send_images : "auto", "auto"))
		return;
	if (!images_vision(s)) {
		if (!s->img.told_novision++)
			log_info("images: the model takes no images: %s and "
			         "others a call makes are not sent",
			         path);
		return;
	}
	if (!s->img.auto_call || strcmp(s->img.auto_call, call)) {
		free(s->img.auto_call);
		s->img.auto_call = xstrdup(call);
		s->img.auto_count = 0;
	}
	if (++s->img.auto_count > IMAGES_AUTO_MAX) {
		char *why =
		    xasprintf("not sent: a call sends at most %d images "
		              "by itself; view_image shows the others",
		              IMAGES_AUTO_MAX);
		struct ev_image im = {
		    .id = call, .path = path, .how = "auto", .error = why};
		session_emit(s, ev_image_sent(&im));
		free(why);
		return;
	}
	images_queue(s, call, path, "auto", NULL);
}

int images_busy(const struct session *s)
{
	return s->img.run || s->img.q;
}

void images_cancel(struct session *s)
{
	struct image_job *j = s->img.q;
	s->img.q = NULL;
	while (j) {
		struct image_job *next = j->next;
		if (!strcmp(j->how, "view"))
			tools_finished(s, j->id, "view_image: cancelled", 1);
		job_free(j);
		j = next;
	}
	if (s->img.pid > 0) { /* images_on_exit ends the one running */
		s->img.cancelled = 1;
		kill(s->img.pid, SIGKILL);
	}
}

void images_free(struct session *s)
{
	struct image_job *j = s->img.q;
	while (j) {
		struct image_job *next = j->next;
		job_free(j);
		j = next;
	}
	s->img.q = NULL;
	if (s->img.pid > 0) {
		loop_child_unwatch(s->loop, s->img.pid);
		kill(s->img.pid, SIGKILL);
		waitpid(s->img.pid, NULL, 0);
	}
	images_close_fds(s);
	if (s->img.timer)
		loop_timer_cancel(s->loop, s->img.timer);
	/* a job still reading: the sandbox's answer is dropped
	 * (session_sbx_done), so it is freed here */
	job_free(s->img.run);
	s->img.run = NULL;
	buf_free(&s->img.out);
	buf_free(&s->img.err);
	free(s->img.auto_call);
	s->img.auto_call = NULL;
}

cJSON *images_part(const char *run_dir, const cJSON *ev, char **err)
{
	const char *file = ev_str(ev, EVF_FILE, NULL);
	const char *hash = ev_str(ev, EVF_SHA256, "");
	if (ev_item(ev, EVF_ERROR) || !ev_image_file_ok(file)) {
		set_err(err, "no image was sent");
		return NULL;
	}
	if (images_dir(run_dir, 0, err) < 0)
		return NULL;
	char *path = xasprintf("%s/%s", run_dir, file);
	size_t n = 0;
	char *rerr = NULL, got[65] = "";
	char *data =
	    read_file_flags(path, O_NOFOLLOW, IMAGES_MAX_OUT, &n, &rerr);
	free(path);
	if (data)
		sha256_hex(data, n, got);
	if (!data || strcmp(got, hash)) {
		set_err(err, "%s: %s", file,
		        !data ? rerr : "not the bytes recorded (sha256)");
		free(rerr);
		free(data);
		return NULL;
	}
	char *b64 = xmalloc(4 * (n / 3 + 1) + 1);
	b64[img_base64(data, n, b64)] = '\0';
	free(data);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "path", ev_str(ev, EVF_PATH, ""));
	cJSON_AddStringToObject(p, "media_type",
	                        ev_str(ev, EVF_MEDIA_TYPE, "image/png"));
	cJSON_AddNumberToObject(p, "width", ev_num(ev, EVF_WIDTH, 0));
	cJSON_AddNumberToObject(p, "height", ev_num(ev, EVF_HEIGHT, 0));
	cJSON_AddNumberToObject(p, "tokens", ev_num(ev, EVF_TOKENS, 0));
	cJSON_AddStringToObject(p, "detail", ev_str(ev, EVF_DETAIL, "auto"));
	cJSON_AddStringToObject(p, "sha256", hash);
	cJSON_AddStringToObject(p, "data", b64);
	free(b64);
	return p;
}
