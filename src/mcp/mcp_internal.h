/* mcp_internal.h: what the MCP client's files share (private to
 * src/mcp/): the transport seam. A transport moves whole JSON-RPC
 * messages between client.c and one server: stdio.c (a child,
 * newline-delimited JSON) or http.c (Streamable HTTP: POST per message,
 * JSON or SSE answers, the GET stream, resumption after the server's
 * retry with Last-Event-ID, DELETE at the end). Everything runs on the
 * loop; nothing here blocks. */
#ifndef ASSAY_MCP_INTERNAL_H
#define ASSAY_MCP_INTERNAL_H

#include <stddef.h>
#include <cjson/cJSON.h>

struct loop;
struct http;
struct mcp_transport;

/* What a message sent is: a request (an answer with its id is awaited),
 * a notification, or our answer to the server's request. */
enum mcp_msg {
	MCP_MSG_REQUEST,
	MCP_MSG_NOTIFY,
	MCP_MSG_RESPONSE,
};

/* What a transport tells the client; arg is the client's. */
struct mcp_transport_cb {
	/* One message from the server, parsed (a JSON object; the callee
	 * does not keep it). */
	void (*message)(void *arg, const cJSON *msg);
	/* The transport is gone for good (the child died, the session
	 * ended, a fatal HTTP status): why, one line. Called at most once,
	 * never from inside send or close. */
	void (*failed)(void *arg, const char *why);
	/* A line of the server's log (stdio: its stderr; HTTP: a status
	 * worth knowing), already one line, not sanitized. */
	void (*log)(void *arg, const char *line);
	/* close has finished (the child reaped, the DELETE answered or
	 * given up): the transport may be freed now. */
	void (*closed)(void *arg);
	void *arg;
};

struct mcp_transport_ops {
	const char *name; /* "stdio", "http" */
	/* Queue one message (JSON text, no newline). 0, or -1 and *err
	 * (the transport is not usable). Never blocks, never calls back
	 * before it returns. */
	int (*send)(struct mcp_transport *t, const char *json, size_t n,
	            enum mcp_msg kind, char **err);
	/* After initialize's answer: the negotiated protocol version (HTTP
	 * sends it as MCP-Protocol-Version from now on and opens the GET
	 * stream); called once, before notifications/initialized is sent. */
	void (*initialized)(struct mcp_transport *t, const char *version);
	/* End it (stdio: close stdin, SIGTERM after 2 s, SIGKILL after 5;
	 * HTTP: cancel the transfers, DELETE the session): closed is called
	 * when done (from the loop, never from inside close). */
	void (*close)(struct mcp_transport *t);
	/* Free it at once (after closed, or to give up: kills what is left). */
	void (*free)(struct mcp_transport *t);
};

struct mcp_transport {
	const struct mcp_transport_ops *ops;
};

/* The largest message accepted from a server (a line on stdio, an SSE
 * event or a JSON body on HTTP): past it the message is dropped with a
 * log line and the transport goes on when it can (stdio: skips to the
 * next newline). */
#define MCP_MAX_MESSAGE (64u << 20)

/* A server's spec, as the configuration holds it:
 * stdio: {"command": "...", "args": [...], "env": {...}, "cwd": "..."}
 * http:  {"url": "...", "headers": {...}, "bearer_token_env": "VAR"}.
 * name is the server's (for log lines). A stdio server's stderr comes
 * back line by line through cb->log. NULL and *err when it cannot
 * start. */
struct mcp_transport *mcp_stdio_new(struct loop *l, const char *name,
                                    const cJSON *spec,
                                    const struct mcp_transport_cb *cb,
                                    char **err);
struct mcp_transport *mcp_http_new(struct loop *l, struct http *h,
                                   const char *name, const cJSON *spec,
                                   const struct mcp_transport_cb *cb,
                                   char **err);

#endif
