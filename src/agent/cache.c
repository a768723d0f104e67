/* cache.c: the run's model answers, cache/<request-hash>.json, written
 * as each answer arrives (the checkpoint resume trusts first) and read
 * back by resume and re-execute instead of asking the provider again.
 * The JSON it reads (the cache's entries) is not an event. */
#include "agent_internal.h"

#include "assay/json.h"
#include "assay/llm.h"
#include "assay/log.h"
#include "assay/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MAX (64u << 20) /* the largest answer file read back */

void cache_save(const char *run_dir, const char *hash,
                const struct llm_result *r)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "request_hash", hash);
	cJSON_AddStringToObject(c, "text", r->text ? r->text : "");
	cJSON_AddItemToObject(c, "tool_calls",
	                      cJSON_Duplicate(r->tool_calls, 1));
	cJSON_AddStringToObject(c, "finish_reason",
	                        r->finish_reason ? r->finish_reason : "");
	cJSON *u = cJSON_AddObjectToObject(c, "usage");
	cJSON_AddNumberToObject(u, "input_tokens", r->usage.input_tokens);
	cJSON_AddNumberToObject(u, "output_tokens", r->usage.output_tokens);
	cJSON_AddNumberToObject(u, "cached_tokens", r->usage.cached_tokens);
	if (r->usage.cache_write_tokens)
		cJSON_AddNumberToObject(u, "cache_write_tokens",
		                        r->usage.cache_write_tokens);
	if (r->usage.reasoning_tokens)
		cJSON_AddNumberToObject(u, "reasoning_tokens",
		                        r->usage.reasoning_tokens);
	if (r->items)
		cJSON_AddItemToObject(c, "provider_items",
		                      cJSON_Duplicate(r->items, 1));
	char *text = json_print(c);
	char *path = xasprintf("%s/cache/%s.json", run_dir, hash);
	char *err = NULL;
	if (write_file_replace(path, text, strlen(text), &err) < 0) {
		log_warn("cache: %s", err);
		free(err);
	}
	free(path);
	free(text);
	cJSON_Delete(c);
}

cJSON *cache_load(const char *run_dir, const char *hash)
{
	if (!hash || strspn(hash, "0123456789abcdef") != 64 || hash[64])
		return NULL;
	char *path = xasprintf("%s/cache/%s.json", run_dir, hash);
	/* a copied run dir's file: never through a link, never a FIFO */
	char *err = NULL;
	size_t len = 0;
	char *text = read_file_flags(path, O_NOFOLLOW, CACHE_MAX, &len, &err);
	if (!text && errno != ENOENT)
		log_warn("cache: %s", err);
	cJSON *c = text ? cJSON_ParseWithLength(text, len) : NULL;
	free(text);
	free(err);
	free(path);
	if (c && (!cJSON_IsArray(cJSON_GetObjectItem(c, "tool_calls")) ||
	          strcmp(json_str(c, "request_hash", ""), hash))) {
		cJSON_Delete(c);
		c = NULL;
	}
	return c;
}

struct llm_result *cache_result(const cJSON *c)
{
	struct llm_result *r = xcalloc(1, sizeof *r);
	r->ok = 1;
	r->text = xstrdup(json_str(c, "text", ""));
	r->tool_calls =
	    cJSON_Duplicate(cJSON_GetObjectItem(c, "tool_calls"), 1);
	const char *fr = json_str(c, "finish_reason", "");
	r->finish_reason = *fr ? xstrdup(fr) : NULL;
	const cJSON *u = cJSON_GetObjectItem(c, "usage");
	r->usage.input_tokens = json_long(u, "input_tokens", 0);
	r->usage.output_tokens = json_long(u, "output_tokens", 0);
	r->usage.known = 1;
	const cJSON *items = cJSON_GetObjectItem(c, "provider_items");
	if (cJSON_IsObject(items))
		r->items = cJSON_Duplicate(items, 1);
	return r;
}
