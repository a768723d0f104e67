/* mcptool.h: the MCP part of a session (mcptool.c): the servers of
 * "mcp_servers" started with the run, their tools offered to the model
 * as SERVER__TOOL (recorded in mcp_tools, which a resume offers again
 * without starting anything), and each call of one: through the policy
 * like any call, then to its server, its result rendered for the model;
 * a table or a large result lands in the workspace as a file
 * (mcp/SERVER/TOOL-N.csv, .json or .txt) the sandbox's code can load. */
#ifndef ASSAY_AGENT_MCPTOOL_H
#define ASSAY_AGENT_MCPTOOL_H

#include <stdint.h>
#include <cjson/cJSON.h>

struct session;
struct mcp;
struct mcp_job; /* the call in flight (mcptool.c) */
struct mcp_ask; /* a question to the person (elicit.c) */

/* part: mcp, owner: src/agent/mcptool.c, src/agent/elicit.c */
struct mcps {
	struct mcp **servers;
	int n;
	cJSON *offered;    /* [{name, server, tool, [description], parameters,
	                      [annotations]}], as mcp_tools recorded them */
	int started;       /* the servers were started (this process) */
	int settled;       /* the tools are known (started and settled, or
	                      restored from the record) */
	int restored;      /* ... from the record: a later start offers
	                      nothing new */
	uint64_t deadline; /* the servers' start, at most */
	void (*ready)(struct session *s); /* waiting for them */
	struct mcp_job *job;              /* the call in flight */
	int ncalls;                       /* MCP calls so far (file names) */
	struct mcp_ask *asks; /* elicitations waiting, oldest first */
	int nasks;            /* asked so far (their ids) */
	int nrefused;         /* declined unasked (too many, too late) */
};

/* Start the configured servers (none: settled at once); ready is called
 * once every one is ready or failed, the mcp_tools event emitted and
 * the tools offered. */
void mcptool_start(struct session *s, void (*ready)(struct session *s));
/* The servers are starting: the first request waits. */
int mcptool_busy(const struct session *s);
/* Resume: the tools a recorded mcp_tools event offered are offered again
 * (nothing is started until a call must really run). */
void mcptool_restore(struct session *s, const cJSON *tools);
/* Whether name is an MCP tool offered in this run. */
int mcptool_is(const struct session *s, const char *name);
/* What the policy judges of a call of name: {server, tool, arguments,
 * annotations} (a new object). */
cJSON *mcptool_policy_args(const struct session *s, const char *name,
                           const cJSON *args);
/* Call name with args; tools_finished when it has ended. */
void mcptool_run(struct session *s, const char *id, const char *name,
                 const cJSON *args);
/* Stop the call in flight (notifications/cancelled; its result says
 * so). */
void mcptool_cancel(struct session *s);
/* The id of the tool call in flight on server m, or NULL. */
const char *mcptool_call_of(const struct session *s, const struct mcp *m);
/* elicit.c: the mcp hook for elicitation/create (arg: the session). */
void mcptool_on_elicit(struct mcp *m, uint64_t token, const cJSON *params,
                       void *arg);
/* Cancel the questions waiting for call (NULL: every one): the server
 * gets "cancel", the frontend its elicit_cancel. */
void mcptool_elicit_drop(struct session *s, const char *call);
/* ... those of server m (it restarted, failed or closed). */
void mcptool_elicit_drop_server(struct session *s, const struct mcp *m);
/* Hold the timeout of call (the tool call's id) on server m while a
 * person answers its question (hold 1), or start it again (0). */
void mcptool_hold(struct session *s, struct mcp *m, const char *call,
                  int hold);
/* End the servers (the run ends). */
void mcptool_close(struct session *s);
void mcptool_free(struct session *s);

/* The result of an MCP call for the model (not an event): its text
 * parts, what its other parts are, its structured content when no text
 * says it; *is_error from isError. A table among it (rows of flat
 * objects: structuredContent, or JSON in a text part such as
 * {"data": {"rows": [...]}}) comes back as CSV in *csv with its
 * *rows and *cols (else *csv NULL). */
char *mcptool_render(const cJSON *result, int *is_error, char **csv, long *rows,
                     long *cols);

#endif
