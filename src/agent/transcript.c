/* transcript.c: the run's event stream on its way out. Each event is
 * stamped (seq, t), made valid UTF-8 and appended to transcript.jsonl
 * with one write (a crash loses at most the event in flight). A write
 * that fails (the disk is full) is taken back to the last whole line,
 * so the file stays a valid record of the events before it; nothing
 * more is written, and the session ends the run (session.c). */
#include "agent_internal.h"

#include "assay/events.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void transcript_init(struct transcript *t)
{
	memset(t, 0, sizeof *t);
	t->fd = -1;
	t->t0 = now_ms();
}

int transcript_open(struct transcript *t, const char *run_dir, char **err)
{
	char *p = xasprintf("%s/transcript.jsonl", run_dir);
	/* a copied run dir's transcript may be anything: never a FIFO
	 * (the open would block) nor a link (written through) */
	t->fd = open_regular(p, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW,
	                     0666, err);
	struct stat st;
	if (t->fd < 0 || fstat(t->fd, &st) < 0) {
		set_err(err, "cannot create %s: %s", p, strerror(errno));
		if (t->fd >= 0)
			close(t->fd);
		t->fd = -1;
	} else {
		t->good = st.st_size;
	}
	free(p);
	return t->fd >= 0 ? 0 : -1;
}

void transcript_continue(struct transcript *t, uint64_t last_seq,
                         int64_t last_t)
{
	t->seq = last_seq;
	t->t0 = now_ms() - last_t - 1;
}

void transcript_close(struct transcript *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

/* Replace a string that is not valid UTF-8 by its sanitised copy
 * (cJSON's allocator owns both). */
static char *transcript_clean_string(char *s, int owned)
{
	char *clean = utf8_sanitize(s, strlen(s), NULL);
	if (owned)
		cJSON_free(s);
	char *out = cJSON_malloc(strlen(clean) + 1);
	strcpy(out, clean);
	free(clean);
	return out;
}

/* Every string of an event must be valid UTF-8 (JSON, the transcript,
 * the next request): model text, arguments, paths and errors may not
 * be. Fixes them in place. */
void transcript_sanitize(cJSON *item)
{
	for (cJSON *it = item; it; it = it->next) {
		if (cJSON_IsString(it) && it->valuestring &&
		    !utf8_valid(it->valuestring, strlen(it->valuestring)))
			it->valuestring =
			    transcript_clean_string(it->valuestring, 1);
		if (it->string && !utf8_valid(it->string, strlen(it->string))) {
			/* object keys come from us, or are paths: same rule */
			it->string = transcript_clean_string(
			    it->string, !(it->type & cJSON_StringIsConst));
			it->type &= ~cJSON_StringIsConst;
		}
		if (it->child)
			transcript_sanitize(it->child);
	}
}

cJSON *transcript_stamp(struct transcript *t, cJSON *ev)
{
	transcript_sanitize(ev->child);
	/* seq and t go first so the transcript reads well */
	cJSON *out = cJSON_CreateObject();
	cJSON_AddNumberToObject(out, "seq", (double)++t->seq);
	cJSON_AddNumberToObject(out, "t", (double)(now_ms() - t->t0));
	cJSON *it = ev->child;
	ev->child = NULL;
	while (it) {
		cJSON *next = it->next;
		it->prev = it->next = NULL;
		cJSON_AddItemToObject(out, it->string, it);
		it = next;
	}
	cJSON_Delete(ev);
	t->written++;
	return out;
}

int transcript_write(struct transcript *t, const cJSON *ev)
{
	if (t->fd < 0)
		return 0; /* not open, or failed before (already said) */
	char *text = json_print(ev);
	char *line = xasprintf("%s\n", text);
	size_t n = strlen(line);
	free(text);
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(t->fd, line + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(line);
	if (off == n) {
		t->good += (off_t)n;
		return 0;
	}
	t->failed = errno ? errno : ENOSPC;
	t->failed_seq = t->seq; /* ev was the last one stamped */
	if (ftruncate(t->fd, t->good) < 0)
		t->failed_cut = 1; /* a partial line may remain */
	close(t->fd);
	t->fd = -1;
	return -1;
}

cJSON *transcript_record(struct session *s, cJSON *ev)
{
	cJSON *out = transcript_stamp(&s->rundir.tr, ev);
	if (transcript_write(&s->rundir.tr, out) < 0)
		s->rundir.timer =
		    loop_timer_add(s->loop, 0, session_record_failed, s);
	return out;
}

/* The transcript could not be written (its disk is full): the run
 * cannot go on unrecorded. Said to the frontends, then ended; what
 * the transcript holds is whole and can be resumed from. */
void session_record_failed(void *arg)
{
	struct session *s = arg;
	s->rundir.timer = 0;
	const struct transcript *t = &s->rundir.tr;
	char *msg = xasprintf(
	    "cannot write %s/transcript.jsonl: %s; the run stops here: "
	    "the transcript holds every event before seq %llu%s; free "
	    "space on its filesystem, then `assay resume %s` goes on",
	    s->rundir.run_dir, strerror(t->failed),
	    (unsigned long long)t->failed_seq,
	    t->failed_cut ? " (its last line may be cut short)" : "",
	    s->rundir.run_dir);
	log_error("%s", msg);
	session_emit(s, ev_error("internal", msg, -1));
	free(msg);
	session_wind_up(s, "failed", EXIT_FAILED);
}

/* The events' clock (session.h). */
int64_t session_clock(const struct session *s)
{
	return s->rundir.tr.t0 ? now_ms() - s->rundir.tr.t0 : 0;
}
