/* elicit.c: an MCP server's questions to the person (elicitation/create)
 * in a run: put to the frontend's approver when it can ask (the
 * workbench's dialog), else declined at once ("nobody to ask": headless,
 * a terminal prompt); answered through session_elicit, checked against
 * the server's schema, recorded as mcp_elicit. Part of the session's mcp
 * part (mcptool.h). The requests, schemas and answers it reads are MCP's
 * JSON: not an event. */
#include "agent_internal.h"

#include "assay/events.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/mcp.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

#define ASK_MESSAGE_MAX 4096 /* bytes of a message kept (shown, recorded) */
#define ASK_FIELDS_MAX 64    /* properties a form may have */
#define ASK_CHOICES_MAX 500  /* choices a field may offer */
#define ASK_SCHEMA_MAX (64 << 10) /* the schema, printed */
#define ASK_WAITING_MAX 4         /* questions of one server waiting at once */
#define ASK_REFUSED_LOGGED 10     /* refusals logged, then counted */

/* One question waiting for the person. */
struct mcp_ask {
	struct mcp_ask *next;
	struct session_elicitation pub;
	struct mcp *m;
	uint64_t token;
	char *id, *server, *call, *message;
	cJSON *schema;
};

/* Why a schema is too big to put to a person (NULL: it is not). */
static const char *schema_too_big(const cJSON *schema)
{
	const cJSON *props = cJSON_GetObjectItem(schema, "properties"), *p;
	if (cJSON_GetArraySize(props) > ASK_FIELDS_MAX)
		return "more than 64 fields";
	cJSON_ArrayForEach(p, props)
	{
		cJSON *c = mcp_elicit_choices(p);
		int n = cJSON_GetArraySize(c);
		cJSON_Delete(c);
		if (n > ASK_CHOICES_MAX)
			return "a field with more than 500 choices";
	}
	char *j = cJSON_PrintUnformatted(schema);
	size_t n = j ? strlen(j) : 0;
	free(j);
	return n > ASK_SCHEMA_MAX ? "a schema over 64 KiB" : NULL;
}

/* The questions of server m waiting. */
static int asks_of(const struct session *s, const struct mcp *m)
{
	int n = 0;
	for (const struct mcp_ask *a = s->mcp.asks; a; a = a->next)
		n += a->m == m;
	return n;
}

static void ask_free(struct mcp_ask *a)
{
	free(a->id);
	free(a->server);
	free(a->call);
	free(a->message);
	cJSON_Delete(a->schema);
	free(a);
}

/* Record the answer and send it (result taken; content is what it
 * holds, for the record). */
static void ask_answer(struct session *s, struct mcp_ask *a, cJSON *result,
                       const char *by)
{
	struct ev_mcp_elicit e = {
	    .id = a->id,
	    .server = a->server,
	    .call = a->call,
	    .message = a->message,
	    .schema = a->schema,
	    .action = json_str(result, "action", "decline"),
	    .content = cJSON_GetObjectItem(result, "content"),
	    .by = by,
	};
	if (!s->freeing)
		session_emit(s, ev_mcp_elicit(&e));
	log_info("mcp %s: elicitation %s: %s (%s)", a->server, a->id, e.action,
	         by);
	mcp_elicit_reply(a->m, a->token, result);
	if (a->call && !s->freeing)
		mcptool_hold(s, a->m, a->call, 0);
}

/* The answer that declines. */
static cJSON *ask_decline(void)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "action", "decline");
	return r;
}

/* A question declined without the person: why, in the log, the first
 * few times. */
static void ask_log_refused(struct session *s, const char *server,
                            const char *why)
{
	if (s->mcp.nrefused++ < ASK_REFUSED_LOGGED)
		log_info("mcp %s: a question declined: %s", server, why);
}

/* Decline without a word to the person: too many, too late. */
static void ask_refuse(struct session *s, struct mcp *m, uint64_t token,
                       const char *why)
{
	ask_log_refused(s, mcp_name(m), why);
	mcp_elicit_reply(m, token, ask_decline());
}

/* The question of that id, unlinked from the queue when take. */
static struct mcp_ask *ask_find(struct session *s, const char *id, int take)
{
	for (struct mcp_ask **p = &s->mcp.asks; *p; p = &(*p)->next) {
		struct mcp_ask *a = *p;
		if (strcmp(a->id, id))
			continue;
		if (take)
			*p = a->next;
		return a;
	}
	return NULL;
}

void mcptool_on_elicit(struct mcp *m, uint64_t token, const cJSON *params,
                       void *arg)
{
	struct session *s = arg;
	if (s->freeing || session_state(s) >= SESSION_ENDING) {
		ask_refuse(s, m, token, "the run is ending");
		return;
	}
	if (asks_of(s, m) >= ASK_WAITING_MAX) {
		ask_refuse(s, m, token, "4 of its questions wait already");
		return;
	}
	const cJSON *schema = cJSON_GetObjectItem(params, "requestedSchema");
	const char *big = schema_too_big(schema);
	struct mcp_ask *a = xcalloc(1, sizeof *a);
	a->m = m;
	a->token = token;
	a->id = xasprintf("elicit-%d", ++s->mcp.nasks);
	a->server = xstrdup(mcp_name(m));
	const char *call = mcptool_call_of(s, m);
	a->call = call ? xstrdup(call) : NULL;
	const char *msg = json_str(params, "message", "");
	size_t n = strlen(msg);
	if (n > ASK_MESSAGE_MAX) {
		size_t keep = utf8_complete_prefix(msg, ASK_MESSAGE_MAX);
		a->message = xasprintf("%.*s [... %zu bytes more]", (int)keep,
		                       msg, n - keep);
	} else {
		a->message = xstrdup(msg);
	}
	a->schema = cJSON_IsObject(schema) && !big ? cJSON_Duplicate(schema, 1)
	                                           : cJSON_CreateObject();
	a->pub = (struct session_elicitation){a->id, a->server, a->call,
	                                      a->message, a->schema};
	if (big || !s->appr.approver.elicit) {
		/* recorded, with who declined (and why, if too big), but not
		 * put to anyone */
		if (big)
			ask_log_refused(s, a->server, big);
		ask_answer(s, a, ask_decline(), big ? "assay" : "nobody");
		ask_free(a);
		return;
	}
	struct mcp_ask **p = &s->mcp.asks;
	while (*p)
		p = &(*p)->next;
	*p = a;
	if (a->call) /* the call's timeout waits for the person */
		mcptool_hold(s, m, a->call, 1);
	s->appr.approver.elicit(s->appr.approver_arg, &a->pub);
}

int session_elicit(struct session *s, const char *id, const char *action,
                   const cJSON *content, char **err)
{
	struct mcp_ask *a = ask_find(s, id, 0);
	if (!a) {
		*err = xasprintf("%s: no such question waiting", id);
		return -1;
	}
	if (!mcp_elicit_live(a->m, a->token)) {
		*err = xasprintf("the server %s has restarted or stopped since "
		                 "it asked: the question is withdrawn",
		                 a->server);
		mcptool_elicit_drop_server(s, a->m);
		return -1;
	}
	int accept = !strcmp(action, "accept");
	if (!accept && strcmp(action, "decline") && strcmp(action, "cancel")) {
		*err = xasprintf("%s: accept, decline or cancel", action);
		return -1;
	}
	cJSON *result = cJSON_CreateObject();
	cJSON_AddStringToObject(result, "action", action);
	if (accept) {
		cJSON *filled = mcp_elicit_defaults(a->schema, content);
		if (mcp_elicit_check(a->schema, filled, err) < 0) {
			cJSON_Delete(filled);
			cJSON_Delete(result);
			return -1;
		}
		cJSON_AddItemToObject(result, "content", filled);
	}
	ask_find(s, id, 1);
	ask_answer(s, a, result, "person");
	ask_free(a);
	return 0;
}

/* Cancel the questions waiting that match (call, or server m; both
 * NULL: every one). */
static void drop_where(struct session *s, const char *call, const struct mcp *m)
{
	for (struct mcp_ask **p = &s->mcp.asks; *p;) {
		struct mcp_ask *a = *p;
		if ((call && (!a->call || strcmp(a->call, call))) ||
		    (m && a->m != m)) {
			p = &a->next;
			continue;
		}
		*p = a->next;
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "action", "cancel");
		ask_answer(s, a, r, "nobody");
		if (s->appr.approver.elicit_cancel && !s->freeing)
			s->appr.approver.elicit_cancel(s->appr.approver_arg,
			                               a->id);
		ask_free(a);
	}
}

void mcptool_elicit_drop(struct session *s, const char *call)
{
	drop_where(s, call, NULL);
}

void mcptool_elicit_drop_server(struct session *s, const struct mcp *m)
{
	drop_where(s, NULL, m);
}

cJSON *session_elicit_choices(const cJSON *prop)
{
	return mcp_elicit_choices(prop);
}

size_t session_elicitations_pending(const struct session *s)
{
	size_t n = 0;
	for (const struct mcp_ask *a = s->mcp.asks; a; a = a->next)
		n++;
	return n;
}

const struct session_elicitation *
session_elicitation_at(const struct session *s, size_t i)
{
	for (const struct mcp_ask *a = s->mcp.asks; a; a = a->next)
		if (i-- == 0)
			return &a->pub;
	return NULL;
}
