/* http_spec.c: an HTTP MCP server's spec checked before anything is
 * sent: the URL, the headers (no line breaks, nothing assay sets
 * itself) and the bearer token read from the variable it names. */
#include "mcp/http_internal.h"
#include "assay/strv.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SPEC_MAX_NAME 256
#define SPEC_MAX_VALUE 8192
#define SPEC_MAX_TOKEN 16384
#define SPEC_MAX_URL 8192

/* Header names the transport writes itself: a spec may not set them. */
static const char *const spec_reserved[] = {
    "Accept",        "Content-Type",         "Content-Length",
    "Host",          "Transfer-Encoding",    "Mcp-Session-Id",
    "Last-Event-ID", "MCP-Protocol-Version", NULL,
};

int mcp_http_ascii_ok(const char *s, size_t n, size_t max, int visible)
{
	if (n == 0 || n > max)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c > 0x7e || c < (visible ? 0x21 : 0x20))
			return 0;
	}
	return 1;
}

/* One of the spec's headers: a visible name without ':', a printable
 * string value (empty allowed). */
static int spec_header(const char *server, const cJSON *item,
                       struct strv *headers, char **err)
{
	const char *name = item->string;

	if (!mcp_http_ascii_ok(name, strlen(name), SPEC_MAX_NAME, 1) ||
	    strchr(name, ':'))
		return set_err(
		    err,
		    "MCP server %s: a name in \"headers\" is empty, "
		    "has a ':', a space, a line break or a byte that "
		    "is not printable ASCII",
		    server);
	for (size_t i = 0; spec_reserved[i]; i++)
		if (strcasecmp(name, spec_reserved[i]) == 0)
			return set_err(err,
			               "MCP server %s: header %s is assay's to "
			               "set: remove it from \"headers\"",
			               server, name);
	if (!cJSON_IsString(item))
		return set_err(err,
		               "MCP server %s: header %s: the value must be a "
		               "string",
		               server, name);
	const char *v = item->valuestring;
	if (*v && !mcp_http_ascii_ok(v, strlen(v), SPEC_MAX_VALUE, 0))
		return set_err(err,
		               "MCP server %s: header %s: the value has a line "
		               "break or a byte that is not printable ASCII",
		               server, name);
	strv_take(headers, xasprintf("%s: %s", name, v));
	return 0;
}

/* Authorization from the variable bearer_token_env names. */
static int spec_bearer(const char *server, const cJSON *env,
                       struct strv *headers, char **err)
{
	if (!cJSON_IsString(env) || !*env->valuestring)
		return set_err(err,
		               "MCP server %s: \"bearer_token_env\" must name "
		               "an environment variable",
		               server);
	const char *var = env->valuestring;
	const char *tok = getenv(var);
	if (!tok || !*tok)
		return set_err(
		    err,
		    "MCP server %s: bearer_token_env names %s, which "
		    "is not set: export it, or remove the setting",
		    server, var);
	if (!mcp_http_ascii_ok(tok, strlen(tok), SPEC_MAX_TOKEN, 1))
		return set_err(
		    err,
		    "MCP server %s: the token in $%s has a space, a "
		    "line break or a byte that is not printable ASCII",
		    server, var);
	strv_take(headers, xasprintf("Authorization: Bearer %s", tok));
	return 0;
}

/* The spec's headers, then its bearer token (not both Authorization). */
static int spec_headers(const char *server, const cJSON *spec,
                        struct strv *headers, char **err)
{
	const cJSON *hs = cJSON_GetObjectItemCaseSensitive(spec, "headers");
	const cJSON *env =
	    cJSON_GetObjectItemCaseSensitive(spec, "bearer_token_env");
	const cJSON *item;
	int have_auth = 0;

	if (hs && !cJSON_IsNull(hs) && !cJSON_IsObject(hs))
		return set_err(
		    err,
		    "MCP server %s: \"headers\" must be an object of "
		    "name -> value strings",
		    server);
	if (!cJSON_IsObject(hs))
		hs = NULL;
	cJSON_ArrayForEach(item, hs)
	{
		if (spec_header(server, item, headers, err) < 0)
			return -1;
		if (strcasecmp(item->string, "Authorization") == 0)
			have_auth = 1;
	}
	if (!env || cJSON_IsNull(env))
		return 0;
	if (have_auth)
		return set_err(
		    err,
		    "MCP server %s: both an Authorization header and "
		    "\"bearer_token_env\": keep one",
		    server);
	return spec_bearer(server, env, headers, err);
}

/* The URL: http:// or https://, a host, nothing but visible ASCII. */
static int spec_url(const char *server, const cJSON *spec, char **err)
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(spec, "url");
	size_t skip;

	if (!cJSON_IsString(u))
		return set_err(err, "MCP server %s: no \"url\" string", server);
	const char *url = u->valuestring;
	if (strncasecmp(url, "http://", 7) == 0)
		skip = 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		skip = 8;
	else
		return set_err(err,
		               "MCP server %s: the url must start with http:// "
		               "or https://",
		               server);
	if (!url[skip] || url[skip] == '/' ||
	    !mcp_http_ascii_ok(url, strlen(url), SPEC_MAX_URL, 1))
		return set_err(
		    err,
		    "MCP server %s: the url has no host, or a space, "
		    "a line break or a byte that is not visible ASCII",
		    server);
	return 0;
}

int mcp_http_spec(const char *name, const cJSON *spec, char **url,
                  struct strv *headers, char **err)
{
	if (spec_url(name, spec, err) < 0 ||
	    spec_headers(name, spec, headers, err) < 0)
		return -1;
	*url =
	    xstrdup(cJSON_GetObjectItemCaseSensitive(spec, "url")->valuestring);
	return 0;
}
