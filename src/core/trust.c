/* trust.c: the store of the user's project trust decisions
 * ($XDG_STATE_HOME/assay/trust.json, see trust.h). */
#include "assay/trust.h"
#include "assay/json.h"
#include "assay/path.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define TRUST_MAX_BYTES (8 << 20)

char *trust_store_path(void)
{
	return path_state_dir("trust.json");
}

/* The store's document: {"version":1,"projects":[...]}, a fresh one when
 * the file does not exist; NULL + *err when it cannot be read. */
static cJSON *store_read(const char *path, char **err)
{
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		cJSON *d = cJSON_CreateObject();
		cJSON_AddNumberToObject(d, "version", 1);
		cJSON_AddArrayToObject(d, "projects");
		return d;
	}
	cJSON *d = json_parse_file(path, TRUST_MAX_BYTES, err);
	if (!d)
		return NULL;
	if (!cJSON_IsArray(cJSON_GetObjectItem(d, "projects"))) {
		cJSON_Delete(d);
		set_err(err,
		        "%s: not a trust store (no \"projects\" array): move "
		        "it away and trust your projects again",
		        path);
		return NULL;
	}
	return d;
}

/* dir's entry in d, or NULL. */
static cJSON *store_entry(const cJSON *d, const char *dir)
{
	cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(d, "projects"))
	{
		if (!strcmp(json_str(e, "dir", ""), dir))
			return e;
	}
	return NULL;
}

/* dir's entry, made when missing. */
static cJSON *store_entry_add(cJSON *d, const char *dir)
{
	cJSON *e = store_entry(d, dir);
	if (e)
		return e;
	e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "dir", dir);
	cJSON_AddItemToArray(cJSON_GetObjectItem(d, "projects"), e);
	return e;
}

static void set_string(cJSON *obj, const char *key, const char *value)
{
	cJSON_DeleteItemFromObject(obj, key);
	if (value)
		cJSON_AddStringToObject(obj, key, value);
}

static void stamp(cJSON *e)
{
	char when[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	set_string(e, "date", when);
}

/* A change to the store: fn(d, arg) under the store's lock, written back
 * atomically when fn returns 1 (0: nothing to write). */
static int store_change(int (*fn)(cJSON *d, void *arg), void *arg, char **err)
{
	char *path = trust_store_path();
	if (!path)
		return set_err(err, "no place for the trust store: set HOME "
		                    "or XDG_STATE_HOME");
	char *dir = path_state_dir("");
	char *lock = xasprintf("%s.lock", path);
	int rc = -1, fd = -1;
	cJSON *d = NULL;
	if (mkdir_p(dir, err) < 0)
		goto out;
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		set_err(err, "%s: %s", lock, strerror(errno));
		goto out;
	}
	if (!(d = store_read(path, err)))
		goto out;
	rc = fn(d, arg);
	if (rc == 1) {
		char *text = cJSON_Print(d);
		rc = write_file_atomic(path, text, strlen(text), err) < 0 ? -1
		                                                          : 1;
		free(text);
	}
out:
	if (fd >= 0)
		close(fd);
	cJSON_Delete(d);
	free(lock);
	free(dir);
	free(path);
	return rc;
}

/* The store as it is now (no lock: a reader sees the old or the new
 * file, never half of one); NULL when absent or unreadable. */
static cJSON *store_snapshot(void)
{
	char *path = trust_store_path();
	char *err = NULL;
	cJSON *d = path ? store_read(path, &err) : NULL;
	free(err);
	free(path);
	return d;
}

int trust_is_remembered(const char *dir, const char *digest)
{
	cJSON *d = store_snapshot();
	const cJSON *e = d ? store_entry(d, dir) : NULL;
	int yes = e && digest && !strcmp(json_str(e, "hash", ""), digest);
	cJSON_Delete(d);
	return yes;
}

struct remember {
	const char *dir, *digest;
};

static int do_remember(cJSON *d, void *arg)
{
	struct remember *r = arg;
	cJSON *e = store_entry_add(d, r->dir);
	set_string(e, "hash", r->digest);
	stamp(e);
	return 1;
}

int trust_remember(const char *dir, const char *digest, char **err)
{
	struct remember r = {dir, digest};
	return store_change(do_remember, &r, err) < 0 ? -1 : 0;
}

static int do_revoke(cJSON *d, void *arg)
{
	cJSON *projects = cJSON_GetObjectItem(d, "projects");
	int i = 0;
	cJSON *e;
	cJSON_ArrayForEach(e, projects)
	{
		if (!strcmp(json_str(e, "dir", ""), arg)) {
			cJSON_DeleteItemFromArray(projects, i);
			return 1;
		}
		i++;
	}
	return 0;
}

int trust_revoke(const char *dir, char **err)
{
	return store_change(do_revoke, (void *)dir, err);
}

cJSON *trust_list(char **err)
{
	char *path = trust_store_path();
	if (!path) {
		set_err(err, "no trust store: set HOME or XDG_STATE_HOME");
		return NULL;
	}
	cJSON *d = store_read(path, err);
	free(path);
	if (!d)
		return NULL;
	cJSON *list = cJSON_DetachItemFromObject(d, "projects");
	cJSON_Delete(d);
	return list;
}

struct saved {
	const char *dir, *old_digest, *new_digest;
	const cJSON *rules;
};

static int do_add_rules(cJSON *d, void *arg)
{
	struct saved *s = arg;
	cJSON *e = store_entry_add(d, s->dir);
	cJSON *rules = cJSON_GetObjectItem(e, "rules");
	if (!cJSON_IsArray(rules)) {
		cJSON_DeleteItemFromObject(e, "rules");
		rules = cJSON_AddArrayToObject(e, "rules");
	}
	const cJSON *r, *have;
	cJSON_ArrayForEach(r, s->rules)
	{
		int there = 0;
		cJSON_ArrayForEach(have, rules)
		{
			there |= cJSON_Compare(have, r, 1);
		}
		if (!there)
			cJSON_AddItemToArray(rules, cJSON_Duplicate(r, 1));
	}
	if (s->old_digest && s->new_digest &&
	    !strcmp(json_str(e, "hash", ""), s->old_digest))
		set_string(e, "hash", s->new_digest);
	stamp(e);
	return 1;
}

int trust_add_saved_rules(const char *dir, const cJSON *rules,
                          const char *old_digest, const char *new_digest,
                          char **err)
{
	struct saved s = {dir, old_digest, new_digest, rules};
	return store_change(do_add_rules, &s, err) < 0 ? -1 : 0;
}

cJSON *trust_saved_rules(const char *dir)
{
	cJSON *d = store_snapshot();
	cJSON *e = d ? store_entry(d, dir) : NULL;
	cJSON *rules = e ? cJSON_DetachItemFromObject(e, "rules") : NULL;
	cJSON_Delete(d);
	if (rules && !cJSON_IsArray(rules)) {
		cJSON_Delete(rules);
		rules = NULL;
	}
	return rules;
}
