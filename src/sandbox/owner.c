/* owner.c: who owns a sandbox that outlives its assay (a docker
 * container and its volume, an OpenSandbox sandbox): the labels (or
 * metadata) naming the run and its owner (host, pid, process start
 * time, boot), and whether that owner is still alive, so that a later
 * start can remove what a crashed assay left, and only that. */
#include "assay/json.h"
#include "assay/util.h"
#include "sandbox/owner.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct owner_self {
	char host[256];
	char boot[64];
	char pstart[32];
};

/* The first line of a small file, or "". */
static void read_line(const char *path, char *out, size_t n)
{
	out[0] = '\0';
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(out, (int)n, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

/* Field 22 of /proc/PID/stat: when the process started (clock ticks
 * since boot), which tells a live owner from a reused pid. */
static void proc_start(int pid, char *out, size_t n)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	read_line(path, line, sizeof line);
	out[0] = '\0';
	char *p = strrchr(line, ')');
	for (int field = 2; p && *p; p++)
		if (*p == ' ' && ++field == 22) {
			snprintf(out, n, "%.*s", (int)strcspn(p + 1, " "),
			         p + 1);
			return;
		}
}

/* This machine's name, "unknown" when it has none. */
void owner_host(char *out, size_t n)
{
	if (gethostname(out, n) < 0)
		snprintf(out, n, "unknown");
	out[n - 1] = '\0';
}

/* Who we are, as the labels record it. */
static void self_get(struct owner_self *o)
{
	owner_host(o->host, sizeof o->host);
	read_line("/proc/sys/kernel/random/boot_id", o->boot, sizeof o->boot);
	proc_start((int)getpid(), o->pstart, sizeof o->pstart);
}

/* Is the assay that labelled this alive? Owners on other hosts are
 * presumed alive: only they can tell. */
static int alive_as(const cJSON *labels, const struct owner_self *me)
{
	const char *host = json_str(labels, "assay.owner.host", NULL);
	const char *boot = json_str(labels, "assay.owner.boot", "");
	const char *pstart = json_str(labels, "assay.owner.start", "");
	int pid = atoi(json_str(labels, OWNER_LABEL_PID, "0"));
	if (!host || strcmp(host, me->host))
		return 1;
	if (*boot && *me->boot && strcmp(boot, me->boot))
		return 0;
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return 0;
	char now[32];
	proc_start(pid, now, sizeof now);
	return !*pstart || !*now || !strcmp(now, pstart);
}

char *owner_run_root(const char *run_dir)
{
	char *real = realpath(run_dir, NULL);
	char *root = real ? real : xstrdup(run_dir);
	char *slash = strrchr(root, '/');
	if (slash && slash != root)
		*slash = '\0';
	else if (slash)
		slash[1] = '\0';
	return root;
}

/* Whether a container or volume with these labels is a leftover this
 * start may remove: its assay is dead, and its run dir was in root,
 * the directory this run's is in. Why the second condition: the sweep
 * used to take every dead assay's leftovers on the machine, and one
 * run (a test, say) could then remove the container another run, alive
 * or being examined, still expected to find, the container of a run
 * killed with kill -9 that a resume or a look with `docker exec` is
 * about to see. Runs kept together are one user's, one project's (or
 * one test's): their leftovers go with the next run there; elsewhere
 * they wait for a run in their own directory (or `scripts/setup-docker
 * stop`). What an assay without the label made (an older version) has
 * no directory to wait for and goes as before. */
int owner_leftover(const cJSON *labels, const char *root)
{
	struct owner_self me;
	self_get(&me);
	if (alive_as(labels, &me))
		return 0;
	const char *theirs = json_str(labels, OWNER_LABEL_ROOT, NULL);
	return !theirs || !strcmp(theirs, root);
}

int owner_alive(const cJSON *labels)
{
	struct owner_self me;
	self_get(&me);
	return alive_as(labels, &me);
}

/* The labels that name the run and its owner (see the top). */
cJSON *owner_labels(struct sbx *s, const char *root_label)
{
	struct owner_self o, *me = &o;
	self_get(me);
	cJSON *l = cJSON_CreateObject();
	char pid[24];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	const char *run = strrchr(s->run_dir, '/');
	cJSON_AddStringToObject(l, "assay.run",
	                        run && run[1] ? run + 1 : s->run_dir);
	char *root =
	    root_label ? xstrdup(root_label) : owner_run_root(s->run_dir);
	cJSON_AddStringToObject(l, OWNER_LABEL_ROOT, root);
	free(root);
	cJSON_AddStringToObject(l, OWNER_LABEL_PID, pid);
	cJSON_AddStringToObject(l, "assay.owner.host", me->host);
	cJSON_AddStringToObject(l, "assay.owner.boot", me->boot);
	cJSON_AddStringToObject(l, "assay.owner.start", me->pstart);
	cJSON_AddStringToObject(l, "assay.version", ASSAY_VERSION);
	return l;
}
