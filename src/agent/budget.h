/* budget.h: the budget part of a session: usage so far against the
 * limits, and the Budget dialog's wait (budget.c, its only writer). */
#ifndef ASSAY_AGENT_BUDGET_H
#define ASSAY_AGENT_BUDGET_H

#include <stddef.h>
#include <cjson/cJSON.h>

struct session;
struct config;
struct llm_usage;
struct model_table;
struct model_info;

/* Usage so far (budget.c). */
/* part: budget, owner: src/agent/budget.c */
struct budget {
	long in_tokens, out_tokens, cached_tokens;
	double cost;      /* of the priced turns */
	double last_cost; /* the last turn's; -1 unknown */
	int unpriced;     /* turns whose cost is unknown (no price) */
	struct model_table *models;
	const struct model_info *price; /* the run's model; NULL: none */
};

/* budget.c: usage and limits. */
/* 1 while another request is allowed; else 0 and *why (caller frees). */
/* Which budget a check found spent. */
struct budget_hit {
	const char *kind; /* cost, tokens, turns */
	double spent, limit;
};
int budget_left(const struct budget *b, const struct config *c, int turn,
                char **why, struct budget_hit *hit);
/* A budget is spent (why taken): interactive, the session waits (IDLE
 * "budget") for session_budget_decide; headless, the run ends, exit 5. */
void session_budget_spent(struct session *s, char *why,
                          const struct budget_hit *hit);

/* A budget the user raised in the Budget dialog: c's limit of kind
 * becomes limit; -1 when limit makes no sense for kind. */
int budget_raise(struct config *c, const char *kind, double limit);
/* The model table and the price of model (session_prepare); -1 + *err
 * when the configuration's "models" is malformed. */
int budget_prices(struct budget *b, const struct config *c, const char *model,
                  char **err);
void budget_free(struct budget *b);
/* Whether a request of about req_bytes (its canonical JSON, images by
 * their hash) and image_tokens may be sent under --max-cost: its input
 * alone, the text estimated at 4 bytes a token, must not cross the
 * budget; 0 + *why when it would. */
int budget_request_fits(const struct budget *b, const struct config *c,
                        size_t req_bytes, long image_tokens, char **why,
                        struct budget_hit *hit);
/* Add a turn's usage to the totals; its usage event. */
cJSON *budget_usage(struct budget *b, int turn, const struct llm_usage *u,
                    int replayed);
/* The same for a compaction's summary request (the usage event's
 * "of"), which is not a turn of its own. */
cJSON *budget_usage_of(struct budget *b, int turn, const struct llm_usage *u,
                       int replayed, int compaction);
/* The counts of src (a resume's walk of the record) into dst, whose
 * model table and price stay. */
void budget_take_totals(struct budget *dst, const struct budget *src);
/* The totals as a recorded usage event's totals gives them. */
void budget_restore(struct budget *b, const cJSON *totals);

#endif
