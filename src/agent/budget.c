/* budget.c: the run's usage totals (tokens, cost) and its limits
 * (--max-turns, --max-tokens, --max-cost), checked before every model
 * request (DESIGN.md section 2). */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/llm.h"
#include "assay/models.h"
#include "assay/util.h"

int budget_left(const struct budget *b, const struct config *c, int turn,
                char **why)
{
	if (turn >= c->max_turns) {
		*why = xasprintf("turn limit reached (%d turns): raise "
		                 "--max-turns to go on",
		                 c->max_turns);
		return 0;
	}
	if (c->max_tokens > 0 &&
	    b->in_tokens + b->out_tokens >= c->max_tokens) {
		*why = xasprintf("token budget reached (%ld of %ld): raise "
		                 "--max-tokens to go on",
		                 b->in_tokens + b->out_tokens, c->max_tokens);
		return 0;
	}
	if (c->max_cost > 0 && b->cost >= c->max_cost) {
		*why = xasprintf("cost budget reached ($%.4f of $%.4f): raise "
		                 "--max-cost to go on",
		                 b->cost, c->max_cost);
		return 0;
	}
	return 1;
}

int budget_prices(struct budget *b, const struct config *c, const char *model,
                  char **err)
{
	b->models = models_load(c, err);
	if (!b->models)
		return -1;
	b->price = models_find(b->models, model);
	if (b->price && !b->price->priced)
		b->price = NULL;
	b->last_cost = -1;
	return 0;
}

void budget_free(struct budget *b)
{
	models_free(b->models);
	b->models = NULL;
	b->price = NULL;
}

int budget_request_fits(const struct budget *b, const struct config *c,
                        size_t req_bytes, char **why)
{
	if (c->max_cost <= 0 || !b->price)
		return 1;
	struct model_tokens t = {.input = (long)(req_bytes / 4)};
	double est = models_cost(b->price, &t);
	if (b->cost + est <= c->max_cost)
		return 1;
	*why = xasprintf("cost budget: the next request (about %ld input "
	                 "tokens, about $%.4f) would cross it ($%.4f of "
	                 "$%.4f spent): raise --max-cost to go on",
	                 t.input, est, b->cost, c->max_cost);
	return 0;
}

cJSON *budget_usage(struct budget *b, int turn, const struct llm_usage *u,
                    int replayed)
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
	    .cost_usd = priced ? cost : 0,
	    .priced = priced || replayed,
	    .known = u->known,
	    .replayed = replayed,
	    .totals = {b->in_tokens, b->out_tokens, b->cached_tokens, b->cost,
	               b->unpriced},
	};
	return ev_usage(&e);
}

void budget_restore(struct budget *b, const cJSON *totals)
{
	b->in_tokens =
	    (long)json_num(totals, "input_tokens", (double)b->in_tokens);
	b->out_tokens =
	    (long)json_num(totals, "output_tokens", (double)b->out_tokens);
	b->cached_tokens =
	    (long)json_num(totals, "cached_tokens", (double)b->cached_tokens);
	b->cost = json_num(totals, "cost_usd", b->cost);
	b->unpriced = (int)json_num(totals, "unpriced_turns", b->unpriced);
}
