/* retry.c: the retry policy every provider shares (protocols.md A.5,
 * C.4): which failures are worth another try, how long to wait, and
 * the one-line message that names an HTTP error's cause and its fix. */
#include "llm/llm_internal.h"
#include "assay/json.h"
#include "assay/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define RETRY_MAX_SERVER_MS 120000L
#define RETRY_BASE_MS 500.0
#define RETRY_CAP_MS 8000.0

/* The code of an error body: error.code / error.type as a string, or
 * an integer code (flat vLLM bodies, some proxies). */
static void body_code(const cJSON *j, const char **scode, long *icode)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const cJSON *src = cJSON_IsObject(e) ? e : j;
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(src, "code");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(src, "type");

	*scode = NULL;
	*icode = 0;
	if (cJSON_IsString(code))
		*scode = code->valuestring;
	else if (cJSON_IsString(type))
		*scode = type->valuestring;
	if (cJSON_IsNumber(code))
		*icode = json_num_long(code->valuedouble, 0);
	if (cJSON_IsString(code) && cJSON_IsString(type) &&
	    strcmp(type->valuestring, "insufficient_quota") == 0)
		*scode = type->valuestring;
}

static int status_retryable(long status)
{
	return status == 408 || status == 409 || status == 429 || status >= 500;
}

int llm_retry_should(long status, const char *body, const char *should_retry)
{
	if (should_retry && strcasecmp(should_retry, "true") == 0)
		return 1;
	if (should_retry && strcasecmp(should_retry, "false") == 0)
		return 0;
	cJSON *j = body ? cJSON_Parse(body) : NULL;
	const char *scode = NULL;
	long icode = 0;
	if (cJSON_IsObject(j))
		body_code(j, &scode, &icode);
	int quota = scode && strcmp(scode, "insufficient_quota") == 0;
	cJSON_Delete(j);
	if (quota)
		return 0;
	if (icode >= 400 && icode < 500 && !status_retryable(icode))
		return 0;
	return status == 0 || status_retryable(status);
}

int64_t llm_parse_http_date(const char *s)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	char wday[8], mon[8];
	int day, year, hh, mm, ss;
	struct tm tm;

	/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT". Parsed by hand:
	 * strptime's %b follows the locale the TUI sets. */
	if (sscanf(s, "%7[A-Za-z], %d %3s %d %d:%d:%d", wday, &day, mon, &year,
	           &hh, &mm, &ss) != 7)
		return -1;
	const char *p = strlen(mon) == 3 ? strstr(months, mon) : NULL;
	if (!p || (p - months) % 3 != 0)
		return -1;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = year - 1900;
	tm.tm_mon = (int)((p - months) / 3);
	tm.tm_mday = day;
	tm.tm_hour = hh;
	tm.tm_min = mm;
	tm.tm_sec = ss;
	return (int64_t)timegm(&tm);
}

/* A number of the whole string, or -1. */
static double parse_number(const char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -1;
	double v = strtod(s, &end);
	while (isspace((unsigned char)*end))
		end++;
	return *end || v != v ? -1 : v;
}

long llm_retry_delay(int retries, const char *retry_after_ms,
                     const char *retry_after, int64_t now_wall_ms,
                     double jitter)
{
	double ms = -1;

	if (retry_after_ms)
		ms = parse_number(retry_after_ms);
	if (ms < 0 && retry_after) {
		double sec = parse_number(retry_after);
		if (sec >= 0) {
			ms = sec * 1000.0;
		} else {
			int64_t t = llm_parse_http_date(retry_after);
			if (t >= 0)
				ms = (double)(t * 1000 - now_wall_ms);
		}
	}
	if (ms >= 0 && ms <= RETRY_MAX_SERVER_MS)
		return (long)ms;

	double backoff = RETRY_BASE_MS;
	for (int i = 0; i < retries && backoff < RETRY_CAP_MS; i++)
		backoff *= 2;
	if (backoff > RETRY_CAP_MS)
		backoff = RETRY_CAP_MS;
	if (jitter < 0 || jitter >= 1)
		jitter = 0;
	return (long)(backoff * (1.0 - 0.25 * jitter));
}

double llm_retry_jitter(void)
{
	static uint64_t state;

	if (!state)
		state = (uint64_t)wall_ms() * 6364136223846793005ULL + 1;
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (double)(state >> 11) / 9007199254740992.0; /* 2^53 */
}

int llm_context_exceeded(long status, const char *body)
{
	static const char *const says[] = {
	    "maximum context length", "context length",     "context window",
	    "context size",           "prompt is too long", "too many tokens"};
	if ((status != 0 && status != 400 && status != 413) || !body)
		return 0;
	cJSON *j = cJSON_Parse(body);
	const char *scode = NULL;
	long icode = 0;
	if (cJSON_IsObject(j))
		body_code(j, &scode, &icode);
	int yes = scode && (!strcmp(scode, "context_length_exceeded") ||
	                    !strcmp(scode, "exceed_context_size_error"));
	char *msg = yes ? NULL : llm_error_body_message(body);
	for (size_t i = 0; msg && !yes && i < sizeof says / sizeof *says; i++)
		yes = strcasestr(msg, says[i]) != NULL;
	free(msg);
	cJSON_Delete(j);
	return yes;
}

const char *llm_status_category(long status)
{
	if (status == 401 || status == 403 || status == 404)
		return LLM_ERR_AUTH;
	if (status == 429)
		return LLM_ERR_RATE;
	return LLM_ERR_SERVER;
}

/* Printable ASCII only, at most max bytes, for text from outside. */
static char *clean_text(const char *s, size_t max)
{
	struct buf b;

	buf_init(&b, 0);
	for (size_t i = 0; s[i] && b.len < max; i++) {
		unsigned char c = (unsigned char)s[i];
		char out = (char)(c < 0x20 || c == 0x7f ? ' ' : c);
		buf_append(&b, &out, 1);
	}
	if (strlen(s) > max)
		buf_puts(&b, "...");
	return buf_detach(&b);
}

char *llm_error_body_message(const char *body)
{
	if (!body || !*body)
		return xstrdup("(no error message)");
	cJSON *j = cJSON_Parse(body);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const char *msg = NULL;

	if (cJSON_IsObject(e))
		msg = json_str(e, "message", NULL);
	else if (cJSON_IsString(e))
		msg = e->valuestring;
	if (!msg)
		msg = json_str(j, "message", NULL);
	if (!msg)
		msg = json_str(j, "detail", NULL);
	char *out = clean_text(msg ? msg : body, 500);
	cJSON_Delete(j);
	return out;
}

static const char *reason_phrase(long status)
{
	static const struct {
		long status;
		const char *text;
	} tab[] = {
	    {400, "Bad Request"},       {401, "Unauthorized"},
	    {402, "Payment Required"},  {403, "Forbidden"},
	    {404, "Not Found"},         {405, "Method Not Allowed"},
	    {408, "Request Timeout"},   {409, "Conflict"},
	    {413, "Payload Too Large"}, {422, "Unprocessable Entity"},
	    {429, "Too Many Requests"}, {500, "Internal Server Error"},
	    {502, "Bad Gateway"},       {503, "Service Unavailable"},
	    {504, "Gateway Timeout"},   {529, "Overloaded"},
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (tab[i].status == status)
			return tab[i].text;
	return status >= 500 ? "Server Error" : "Error";
}

/* What the user can do about an HTTP error. */
static char *error_hint(const struct llm_http_fail *f, const char *msg,
                        const char *scode)
{
	const char *model = f->model ? f->model : "?";

	switch (f->status) {
	case 401:
		if (!f->key_set)
			return xasprintf("%s is not set: export it",
			                 f->key_env);
		return xasprintf("check %s", f->key_env);
	case 403:
		return xasprintf("the key in %s may lack access to model '%s' "
		                 "or this region",
		                 f->key_env, model);
	case 404:
		if (strcasestr(msg, "model"))
			return xasprintf("model '%s' not found: check --model",
			                 model);
		return xstrdup("check --base-url: it must include the version "
		               "path, e.g. http://host:port/v1");
	case 429:
		if (scode && strcmp(scode, "insufficient_quota") == 0)
			return xstrdup("insufficient_quota: add credit or use "
			               "another key");
		return xstrdup("rate limited: wait and try again");
	case 400:
		if (llm_context_exceeded(f->status, f->body))
			return xstrdup("the conversation is longer than the "
			               "model's context window");
		return xstrdup("the server rejected the request");
	case 413:
		return xstrdup("the request is too large for the server");
	default:
		if (f->status >= 500)
			return xstrdup("the server failed: try again later");
		return NULL;
	}
}

char *llm_http_error_message(const struct llm_http_fail *f)
{
	char *msg = llm_error_body_message(f->body);
	cJSON *j = f->body ? cJSON_Parse(f->body) : NULL;
	const char *scode = NULL;
	long icode;
	if (cJSON_IsObject(j))
		body_code(j, &scode, &icode);
	char *hint = error_hint(f, msg, scode);
	struct buf b;

	buf_init(&b, 0);
	buf_printf(&b, "%s: %ld %s from %s: %s", f->provider, f->status,
	           reason_phrase(f->status), f->url, msg);
	if (hint)
		buf_printf(&b, " (%s)", hint);
	if (f->request_id) {
		char *rid = clean_text(f->request_id, 100);
		buf_printf(&b, " [request id %s]", rid);
		free(rid);
	}
	char *out = buf_detach(&b);
	free(hint);
	free(msg);
	cJSON_Delete(j);
	return out;
}
