/* budget.c: the run's usage totals (tokens, cost) and its limits
 * (--max-turns, --max-tokens, --max-cost), checked before every model
 * request (DESIGN.md section 2). */
#include "agent_internal.h"

#include "assay/config.h"
#include "assay/events.h"
#include "assay/json.h"
#include "assay/llm.h"
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

cJSON *budget_usage(struct budget *b, int turn, const struct llm_usage *u,
                    int replayed)
{
	b->in_tokens += u->input_tokens;
	b->out_tokens += u->output_tokens;
	b->cached_tokens += u->cached_tokens;
	struct ev_usage e = {
	    .turn = turn,
	    .input_tokens = u->input_tokens,
	    .output_tokens = u->output_tokens,
	    .cached_tokens = u->cached_tokens,
	    .cost_usd = 0,
	    .known = u->known,
	    .replayed = replayed,
	    .totals = {b->in_tokens, b->out_tokens, b->cached_tokens, b->cost},
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
}
