/* budget.c: the run's usage totals (tokens, cost from the model table)
 * and its limits (--max-turns, --max-tokens, --max-cost), checked
 * before every model request (DESIGN.md section 2); in an interactive
 * run a spent budget waits for the user's decision (the Budget dialog). */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/models.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

int budget_left(const struct budget *b, const struct config *c, int turn,
                char **why, struct budget_hit *hit)
{
	if (turn >= c->max_turns) {
		*hit = (struct budget_hit){"turns", turn, c->max_turns};
		*why = xasprintf("turn limit reached (%d turns): raise "
		                 "--max-turns to go on",
		                 c->max_turns);
		return 0;
	}
	if (c->max_tokens > 0 &&
	    b->in_tokens + b->out_tokens >= c->max_tokens) {
		*hit = (struct budget_hit){
		    "tokens", (double)(b->in_tokens + b->out_tokens),
		    (double)c->max_tokens};
		*why = xasprintf("token budget reached (%ld of %ld): raise "
		                 "--max-tokens to go on",
		                 b->in_tokens + b->out_tokens, c->max_tokens);
		return 0;
	}
	if (c->max_cost > 0 && b->cost >= c->max_cost) {
		*hit = (struct budget_hit){"cost", b->cost, c->max_cost};
		*why = xasprintf("cost budget reached ($%.4f of $%.4f): raise "
		                 "--max-cost to go on",
		                 b->cost, c->max_cost);
		return 0;
	}
	return 1;
}

/* The price of a provider whose answers cost nothing (the scripted
 * model), whatever its model is called. */
static const struct model_info budget_free_price = {.name = "free",
                                                    .cached_input = -1,
                                                    .cache_write = -1,
                                                    .priced = 1,
                                                    .vision = -1};

int budget_prices(struct budget *b, const struct config *c, const char *model,
                  char **err)
{
	b->models = models_load(c, err);
	if (!b->models)
		return -1;
	b->price = llm_provider_free(c->provider)
	               ? &budget_free_price
	               : models_find(b->models, model);
	if (b->price && !b->price->priced)
		b->price = NULL;
	b->last_cost = -1;
	return 0;
}

int budget_raise(struct config *c, const char *kind, double limit)
{
	if (!strcmp(kind, "cost") && limit > 0)
		c->max_cost = limit;
	else if (!strcmp(kind, "tokens") && limit >= 1)
		c->max_tokens = (long)limit;
	else if (!strcmp(kind, "turns") && limit >= 1 && limit <= 1e9)
		c->max_turns = (int)limit;
	else
		return -1;
	return 0;
}

void budget_free(struct budget *b)
{
	models_free(b->models);
	b->models = NULL;
	b->price = NULL;
}

int budget_request_fits(const struct budget *b, const struct config *c,
                        size_t req_bytes, long image_tokens, char **why,
                        struct budget_hit *hit)
{
	if (c->max_cost <= 0 || !b->price)
		return 1;
	struct model_tokens t = {.input = (long)(req_bytes / 4) + image_tokens};
	double est = models_cost(b->price, &t);
	if (b->cost + est <= c->max_cost)
		return 1;
	*hit = (struct budget_hit){"cost", b->cost, c->max_cost};
	*why = xasprintf("cost budget: the next request (about %ld input "
	                 "tokens, about $%.4f) would cross it ($%.4f of "
	                 "$%.4f spent): raise --max-cost to go on",
	                 t.input, est, b->cost, c->max_cost);
	return 0;
}

cJSON *budget_usage(struct budget *b, int turn, const struct llm_usage *u,
                    int replayed)
{
	return budget_usage_of(b, turn, u, replayed, 0);
}

cJSON *budget_usage_of(struct budget *b, int turn, const struct llm_usage *u,
                       int replayed, int compaction)
{
	b->in_tokens += u->input_tokens;
	b->out_tokens += u->output_tokens;
	b->cached_tokens += u->cached_tokens;
	struct model_tokens t = {u->input_tokens, u->cached_tokens,
	                         u->cache_write_tokens, u->output_tokens};
	double cost = replayed ? 0 : models_cost(b->price, &t);
	int priced = cost >= 0 && u->known;
	if (priced)
		b->cost += cost;
	else if (!replayed)
		b->unpriced++;
	b->last_cost = priced ? cost : -1;
	struct ev_usage e = {
	    .turn = turn,
	    .input_tokens = u->input_tokens,
	    .output_tokens = u->output_tokens,
	    .cached_tokens = u->cached_tokens,
	    .cache_write_tokens = u->cache_write_tokens,
	    .reasoning_tokens = u->reasoning_tokens,
	    .cost_usd = priced ? cost : 0,
	    .priced = priced || replayed,
	    .known = u->known,
	    .replayed = replayed,
	    .totals = {b->in_tokens, b->out_tokens, b->cached_tokens, b->cost,
	               b->unpriced},
	    .compaction = compaction,
	};
	return ev_usage(&e);
}

void budget_take_totals(struct budget *dst, const struct budget *src)
{
	dst->in_tokens = src->in_tokens;
	dst->out_tokens = src->out_tokens;
	dst->cached_tokens = src->cached_tokens;
	dst->cost = src->cost;
	dst->unpriced = src->unpriced;
}

void budget_restore(struct budget *b, const cJSON *totals)
{
	b->in_tokens = ev_long(totals, EVF_INPUT_TOKENS, b->in_tokens);
	b->out_tokens = ev_long(totals, EVF_OUTPUT_TOKENS, b->out_tokens);
	b->cached_tokens = ev_long(totals, EVF_CACHED_TOKENS, b->cached_tokens);
	b->cost = ev_num(totals, EVF_COST_USD, b->cost);
	b->unpriced = ev_int(totals, EVF_UNPRICED_TURNS, b->unpriced);
}

/* --- a spent budget in an interactive run (the Budget dialog) ------- */

/* A budget is spent (why taken): interactive, wait for the user's
 * decision (the Budget dialog); headless, the run ends with exit 5. */
void session_budget_spent(struct session *s, char *why,
                          const struct budget_hit *hit)
{
	if (!s->interactive) {
		session_emit(s, ev_error("budget", why, -1));
		free(why);
		session_wind_up(s, "budget_exhausted", EXIT_BUDGET);
		return;
	}
	free(s->budget_why);
	s->budget_why = why;
	s->budget_wait =
	    (struct session_budget){hit->kind, hit->spent, hit->limit, why};
	session_emit(s,
	             ev_budget_reached(hit->kind, hit->spent, hit->limit, why));
	if (s->state == SESSION_IDLE) { /* raised, and still not enough */
		session_set_idle_why(s, SESSION_IDLE_BUDGET);
		session_emit(s, ev_idle(session_idle_names[s->idle_why]));
	} else {
		session_idle(s, SESSION_IDLE_BUDGET);
	}
}

const struct session_budget *session_budget_pending(const struct session *s)
{
	return s->state == SESSION_IDLE && s->idle_why == SESSION_IDLE_BUDGET
	           ? &s->budget_wait
	           : NULL;
}

int session_budget_decide(struct session *s, double limit, char **err)
{
	const struct session_budget *b = session_budget_pending(s);
	if (!b)
		return set_err(err, "no budget is waiting for a decision");
	if (limit > 0 && limit <= b->spent)
		return set_err(err,
		               "the new limit (%g) must be above what was "
		               "spent (%g)",
		               limit, b->spent);
	const char *kind = b->kind;
	if (limit <= 0) {
		session_emit(s, ev_budget_decision(kind, "stop", b->limit));
		session_wind_up(s, "budget_exhausted", EXIT_BUDGET);
		return 0;
	}
	if (budget_raise(s->cfg, kind, limit) < 0)
		return set_err(err, "%g is not a %s limit", limit, kind);
	session_emit(s, ev_budget_decision(kind, "raise", limit));
	session_set_idle_why(s, SESSION_IDLE_READY);
	session_request_turn(s);
	return 0;
}
