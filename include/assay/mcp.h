/* mcp.h: the Model Context Protocol client (protocols.md G): one
 * connection to one server, over stdio (a child of its own) or
 * Streamable HTTP, on the loop. It initializes, lists the server's tools
 * (paginated, again on list_changed), calls them with progress, timeouts
 * and cancellation, answers the server's requests (ping; elicitation
 * through a hook, declined without one; sampling and roots are not
 * offered) and ends the server with the connection. */
#ifndef ASSAY_MCP_H
#define ASSAY_MCP_H

#include <stdint.h>
#include <cjson/cJSON.h>

struct loop;
struct http;
struct mcp;

enum mcp_state {
	MCP_STARTING, /* the transport and initialize under way */
	MCP_READY,    /* initialized, tools listed */
	MCP_FAILED,   /* gone for good: mcp_why says why */
	MCP_CLOSED,   /* mcp_close has finished */
};

struct mcp_hooks {
	/* The state or the tool list changed. */
	void (*changed)(struct mcp *m, void *arg);
	/* A line for the run's log: the server's stderr ("stderr"), its
	 * notifications/message (their level), the client's notes
	 * ("info"). Not sanitized. */
	void (*log)(struct mcp *m, const char *level, const char *text,
	            void *arg);
	/* elicitation/create: answer with mcp_elicit_reply(m, token, ...)
	 * now or later. NULL: elicitation is not declared to the server,
	 * and a request for it is declined. */
	void (*elicit)(struct mcp *m, uint64_t token, const cJSON *params,
	               void *arg);
	void *arg;
};

/* The protocol version assay asks for, and the ones it accepts. */
#define MCP_VERSION "2025-11-25"
int mcp_version_ok(const char *v);

/* A connection to the server name as spec says ({"command", "args",
 * "env", "cwd"} or {"url", "headers", "bearer_token_env"}; spec is
 * copied). http may be NULL (an HTTP server then gets a libcurl multi
 * of its own). NULL and *err when the spec is not usable. */
struct mcp *mcp_new(struct loop *l, struct http *h, const char *name,
                    const cJSON *spec, const struct mcp_hooks *hooks,
                    char **err);
/* Start it: the transport, then initialize and tools/list; the changed
 * hook says when it is READY or FAILED. 0, or -1 (state FAILED, mcp_why
 * set). */
int mcp_start(struct mcp *m);
enum mcp_state mcp_state(const struct mcp *m);
const char *mcp_name(const struct mcp *m);
const char *mcp_transport_name(const struct mcp *m); /* "stdio", "http" */
const char *mcp_why(const struct mcp *m); /* FAILED: why; else NULL */
/* After READY: the negotiated version, the serverInfo object, the
 * tools as listed (an array of {name, description, inputSchema,
 * annotations, ...}: the server's words, not sanitized). */
const char *mcp_version(const struct mcp *m);
const cJSON *mcp_server_info(const struct mcp *m);
const cJSON *mcp_tools(const struct mcp *m);
const cJSON *mcp_tool(const struct mcp *m, const char *name);

/* A tool call's end: result is tools/call's result ({content,
 * structuredContent?, isError?}) or NULL, and then err says why
 * (a protocol error, a timeout, the server gone). Called once, from
 * the loop, never after mcp_cancel. */
typedef void (*mcp_done_fn)(struct mcp *m, const cJSON *result, const char *err,
                            void *arg);
/* notifications/progress for the call (total < 0: unknown; message
 * may be NULL). */
typedef void (*mcp_progress_fn)(struct mcp *m, double progress, double total,
                                const char *message, void *arg);
/* Call tool with args (an object; copied). timeout_ms > 0: the call
 * fails after it (notifications/cancelled sent). Returns the call's
 * id (> 0); done comes later, even for a call that cannot be sent. */
uint64_t mcp_call(struct mcp *m, const char *tool, const cJSON *args,
                  int timeout_ms, mcp_done_fn done, mcp_progress_fn progress,
                  void *arg);
/* Stop waiting for call: notifications/cancelled with reason; its done
 * is not called. */
void mcp_cancel(struct mcp *m, uint64_t call, const char *reason);

/* Hold call's timeout (hold 1: a person is answering its server's
 * question), or start it again in full (hold 0) once it was held: a
 * release of a call not held leaves its time running. */
void mcp_call_hold(struct mcp *m, uint64_t call, int hold);
/* Whether an answer to the elicitation token would still reach the
 * server that asked (not restarted, failed or closing since). */
int mcp_elicit_live(const struct mcp *m, uint64_t token);
/* The answer to an elicitation the hook got: result is taken
 * ({"action": "accept", "content": {...}} | decline | cancel); NULL
 * declines. Omitted fields with a default in the request's schema are
 * filled (SEP-1034). */
void mcp_elicit_reply(struct mcp *m, uint64_t token, cJSON *result);
/* content (may be NULL) with every property of schema that has a
 * default and is missing from it filled in; a new object. */
cJSON *mcp_elicit_defaults(const cJSON *schema, const cJSON *content);

/* Whether content answers schema (elicitation/create's
 * requestedSchema): 0, or -1 and *why (a line naming the field).
 * Names are matched exactly (case-sensitive). */
int mcp_elicit_check(const cJSON *schema, const cJSON *content, char **why);
/* The values a property offers to choose from (enum, oneOf/anyOf's
 * consts; an array's items'), a new array; NULL when it offers none. */
cJSON *mcp_elicit_choices(const cJSON *prop);

/* End the connection (stdio: stdin closed, then SIGTERM, SIGKILL; HTTP:
 * DELETE). Calls in flight fail. The state becomes CLOSED (changed
 * hook) when it has. */
void mcp_close(struct mcp *m);
void mcp_free(struct mcp *m);

#endif
