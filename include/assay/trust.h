/* trust.h: the user's trust decisions for projects. A project's files
 * (./.assay/config.json, ./assay.json) may only tighten security until
 * the user trusts them (config.c applies that rule); a "trust" answer is
 * remembered here for one directory and one content (the digest
 * config_project_digest computes), and the rules the user saved into a
 * project from an approval are remembered as the user's own. The store
 * is $XDG_STATE_HOME/assay/trust.json:
 *   {"version": 1, "projects": [{"dir": "/abs/dir", "hash": "<sha256>",
 *    "date": "2026-12-02T11:40:00Z", "rules": [<rules the user saved>]}]}
 * Each change is a locked read-modify-write, written atomically. */
#ifndef ASSAY_TRUST_H
#define ASSAY_TRUST_H

#include <cjson/cJSON.h>

/* The store's path (caller frees); NULL when no state dir is known. */
char *trust_store_path(void);
/* Whether dir (a realpath) is trusted with exactly this digest. */
int trust_is_remembered(const char *dir, const char *digest);
/* Remember dir as trusted with digest (replacing an older one). */
int trust_remember(const char *dir, const char *digest, char **err);
/* Forget dir: 1 when it was there, 0 when not, -1 + *err. */
int trust_revoke(const char *dir, char **err);
/* The entries, as stored (caller deletes); an empty array when none;
 * NULL + *err when the store cannot be read. */
cJSON *trust_list(char **err);
/* The user saved rules into dir's project config: remember them as the
 * user's own, and when dir was trusted with old_digest, move the trust
 * to new_digest (the files changed by the user's own hand). */
int trust_add_saved_rules(const char *dir, const cJSON *rules,
                          const char *old_digest, const char *new_digest,
                          char **err);
/* The rules the user saved into dir (caller deletes); NULL when none. */
cJSON *trust_saved_rules(const char *dir);

#endif
