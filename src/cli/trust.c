/* trust.c: project trust on the command line: the report of the
 * project settings a headless run did not apply, and `assay trust`
 * (the current directory's status, --list, --revoke DIR). The rule
 * itself is src/core/project.c; the store src/core/trust.c. The JSON it
 * reads (the trust report and store) is not an event. */
#include "cli.h"

#include "assay/config.h"
#include "assay/json.h"
#include "assay/termtext.h"
#include "assay/trust.h"
#include "assay/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* FILE: "KEY": VALUE, cleaned for the terminal. */
static char *setting_text(const cJSON *it)
{
	char *raw =
	    xasprintf("%s: \"%s\": %s", json_str(it, "file", "?"),
	              json_str(it, "key", "?"), json_str(it, "value", "?"));
	char *t = term_clean(raw, strlen(raw), 0);
	free(raw);
	return t;
}

void trust_say_refused(const char *prog, const cJSON *it, const char *needs,
                       const char *how)
{
	char *s = setting_text(it);
	const char *w = json_str(it, "why", "");
	char *why = term_clean(w, strlen(w), 0);
	int req = json_bool(it, "required", 0) && needs;
	if (json_bool(it, "user_only", 0))
		fprintf(stderr, "%s: not applied: %s (%s)\n", prog, s, why);
	else
		fprintf(stderr,
		        "%s: untrusted project: not applied: %s (%s%s%s%s%s)\n",
		        prog, s, why, req ? "; " : "", req ? needs : "",
		        how ? "; " : "", how ? how : "");
	free(why);
	free(s);
}

int trust_report(const struct config *c)
{
	const cJSON *refused = config_project_refused(c);
	if (!refused)
		return 0;
	const cJSON *it;
	int required = 0;
	cJSON_ArrayForEach(it, refused)
	{
		trust_say_refused("assay", it, "the run needs it", NULL);
		required |= json_bool(it, "required", 0);
	}
	if (required) {
		fprintf(stderr,
		        "assay: not started: the run needs what was not "
		        "applied (an input, workspace or script outside the "
		        "project): "
		        "read the project files, then pass --trust-project, "
		        "or give the paths yourself (--input, --workspace, "
		        "--script)\n");
		return EXIT_USAGE;
	}
	fprintf(stderr,
	        "assay: until you trust this project its files may only "
	        "tighten security; the run goes on without those settings "
	        "(--trust-project applies them; `assay trust` shows the "
	        "project's status)\n");
	return 0;
}

/* The digest and dir of the project in the current directory, as the
 * trust store keys it; -1 + *err without project files. */
static int here(struct config *c, char **err)
{
	config_defaults(c);
	char *user = config_user_file();
	int rc = config_load(c, user, NULL, err);
	free(user);
	if (rc < 0)
		return -1;
	if (!c->project)
		return set_err(err, "no project files here (./assay.json, "
		                    "./.assay/config.json): nothing to trust");
	return 0;
}

static void print_items(const cJSON *items, const char *title)
{
	if (!cJSON_GetArraySize(items))
		return;
	printf("%s:\n", title);
	const cJSON *it;
	cJSON_ArrayForEach(it, items)
	{
		char *s = setting_text(it);
		printf("  %s\n", s);
		free(s);
	}
}

static int trust_status(void)
{
	struct config c;
	char *err = NULL;
	if (here(&c, &err) < 0) {
		fprintf(stderr, "assay: %s\n", err);
		free(err);
		config_free(&c);
		return 1;
	}
	const cJSON *p = c.project;
	char *dir = term_clean(json_str(p, "dir", ""),
	                       strlen(json_str(p, "dir", "")), 0);
	const char *how = json_str(p, "trust", "untrusted");
	printf("project %s: %s\n", dir,
	       !strcmp(how, "remembered")
	           ? "trusted (its settings apply)"
	           : "not trusted: its files may only tighten security");
	print_items(cJSON_GetObjectItem(p, "refused"),
	            "settings not applied until you trust it");
	print_items(cJSON_GetObjectItem(p, "trusted"),
	            "settings that loosen security, applied because you "
	            "trust it");
	if (!strcmp(how, "remembered"))
		printf("assay trust --revoke %s forgets it\n", dir);
	else if (config_project_refused(&c))
		printf("open assay on a terminal here to trust it, or pass "
		       "--trust-project\n");
	free(dir);
	config_free(&c);
	return 0;
}

static int trust_list_all(void)
{
	char *err = NULL;
	cJSON *list = trust_list(&err);
	if (!list) {
		fprintf(stderr, "assay: %s\n", err);
		free(err);
		return 1;
	}
	const cJSON *e;
	int n = 0;
	cJSON_ArrayForEach(e, list)
	{
		char *dir = term_clean(json_str(e, "dir", "?"),
		                       strlen(json_str(e, "dir", "?")), 0);
		int rules = cJSON_GetArraySize(cJSON_GetObjectItem(e, "rules"));
		printf("%s  %s  %s", json_str(e, "date", "-"), dir,
		       json_str(e, "hash", NULL) ? "trusted" : "not trusted");
		if (rules)
			printf(", %d rule%s you saved", rules,
			       rules == 1 ? "" : "s");
		printf("\n");
		free(dir);
		n++;
	}
	if (!n)
		printf("no trusted projects\n");
	cJSON_Delete(list);
	return 0;
}

static int trust_revoke_dir(const char *arg)
{
	char *err = NULL;
	char *dir = realpath(arg, NULL);
	int rc = trust_revoke(dir ? dir : arg, &err);
	if (rc < 0)
		fprintf(stderr, "assay: %s\n", err);
	else if (rc == 0)
		fprintf(stderr,
		        "assay: %s is not in the trust store (assay trust "
		        "--list shows what is)\n",
		        dir ? dir : arg);
	else
		printf("%s: no longer trusted\n", dir ? dir : arg);
	free(err);
	free(dir);
	return rc == 1 ? 0 : 1;
}

int cmd_trust(int argc, char **argv)
{
	if (argc == 1)
		return trust_status();
	if (argc == 2 && !strcmp(argv[1], "--list"))
		return trust_list_all();
	if (argc == 3 && !strcmp(argv[1], "--revoke"))
		return trust_revoke_dir(argv[2]);
	if (argc == 2 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: assay trust              this directory's "
		       "project files: trusted or not, what they ask\n"
		       "       assay trust --list       the projects you "
		       "trusted\n"
		       "       assay trust --revoke DIR forget one\n");
		return 0;
	}
	fprintf(stderr, "assay: usage: assay trust [--list | --revoke DIR]\n");
	return EXIT_USAGE;
}
