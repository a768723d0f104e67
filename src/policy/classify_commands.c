/* classify_commands.c: the analysers of commands that delete, overwrite
 * or move files, change permissions, use the network or packages, run
 * git, signal processes or change the system. */
#include "classify.h"

#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

/* --- files -------------------------------------------------------- */

/* rm, unlink, shred, truncate...: every operand is deleted or cut. */
void cls_cmd_rm(struct cls *c, struct sh_word **w, size_t n,
                struct cls_input in, int level)
{
	(void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	int recursive =
	    cls_has_opt(w, n, "rR", (const char *const[]){"--recursive", NULL});
	char *who = xasprintf("%s%s", name, recursive ? " -r" : "");
	int any = 0;
	for (size_t i = 1; i < n; i++) {
		if (cls_is_opt(w[i]))
			continue;
		any = 1;
		cls_check_destroy(c, w[i],
		                  !strcmp(name, "shred")      ? "destroys"
		                  : !strcmp(name, "truncate") ? "cuts"
		                                              : "deletes",
		                  who);
	}
	if (!any)
		reasons_add(c->r, POLICY_DELETION, "%s deletes files", who);
	free(who);
}

/* dd of=FILE writes raw data over the file. */
void cls_cmd_dd(struct cls *c, struct sh_word **w, size_t n,
                struct cls_input in, int level)
{
	(void)in, (void)level;
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t || strncmp(t, "of=", 3))
			continue;
		reasons_add(c->r, POLICY_DELETION, "dd writes raw data over %s",
		            t + 3);
		struct sh_word tmp = *w[i];
		tmp.text = (char *)t + 3;
		cls_check_write(c, &tmp, 1, "dd");
	}
}

/* The last operand of cp, mv and ln, and whether -t was used. */
static long dest_operand(struct sh_word **w, size_t n)
{
	long last = -1;
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (t && (!strcmp(t, "-t") || !strcmp(t, "-S") ||
		          !strcmp(t, "--target-directory") ||
		          !strcmp(t, "--suffix"))) {
			i++;
			continue;
		}
		if (t && !strncmp(t, "--target-directory=", 19))
			return -1;
		if (!cls_is_opt(w[i]))
			last = (long)i;
	}
	return last;
}

/* The operand after -t / --target-directory (or in =), or NULL. */
static const struct sh_word *target_dir(struct sh_word **w, size_t n,
                                        struct sh_word *tmp)
{
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t)
			continue;
		if ((!strcmp(t, "-t") || !strcmp(t, "--target-directory")) &&
		    i + 1 < n)
			return w[i + 1];
		if (!strncmp(t, "--target-directory=", 19)) {
			*tmp = *w[i];
			tmp->text = (char *)t + 19;
			return tmp;
		}
	}
	return NULL;
}

/* mv's sources (operands but dest, or all with -t): a staged input
 * moved is deleted data; a workspace file moved to a place outside it
 * (the scratch space, /dev/null, anywhere else) is gone from it. */
static void mv_sources(struct cls *c, struct sh_word **w, size_t n, long d,
                       const struct sh_word *dest)
{
	char rel[POLICY_REL_MAX], drel[POLICY_REL_MAX];
	const char *dt = dest ? sh_known(dest) : NULL;
	enum path_kind dk = dt ? policy_path(c, dt, drel) : PATH_UNKNOWN;
	for (long i = 1; i < d; i++) {
		const char *t = sh_known(w[i]);
		if (cls_is_opt(w[i]) || !t || w[i] == dest)
			continue;
		if (policy_path(c, t, rel) != PATH_INSIDE)
			continue;
		if (policy_input_of(c->pol, rel))
			reasons_add(c->r, POLICY_DELETION,
			            "mv moves away the staged input %s (your "
			            "data)",
			            rel);
		else if (dk == PATH_SCRATCH || dk == PATH_OUTSIDE ||
		         dk == PATH_NETWORK) {
			char *sn = policy_snip(dt, 60);
			reasons_add(
			    c->r, POLICY_DELETION,
			    "mv moves files out of the workspace (%s to "
			    "%s)",
			    rel, sn);
			free(sn);
		}
	}
}

/* cp, mv, ln: the destination may be overwritten; mv moves staged inputs
 * and workspace files away. */
void cls_cmd_copy(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level)
{
	(void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	struct sh_word tmp;
	const struct sh_word *tdir = target_dir(w, n, &tmp);
	if (tdir) {
		if (!strcmp(name, "mv"))
			mv_sources(c, w, n, (long)n, tdir);
		return;
	}
	long d = dest_operand(w, n);
	if (d < 2 && strcmp(name, "ln"))
		return;
	if (!strcmp(name, "mv"))
		mv_sources(c, w, n, d, w[d]);
	if (d < 1)
		return;
	if (!strcmp(name, "ln") &&
	    !cls_has_opt(w, n, "f", (const char *const[]){"--force", NULL}))
		return;
	if (cls_has_opt(w, n, "n", (const char *const[]){"--no-clobber", NULL}))
		return;
	cls_check_write(c, w[d], 1, name);
}

/* tee: every file operand is written (truncated unless -a). */
void cls_cmd_tee(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level)
{
	(void)in, (void)level;
	int append =
	    cls_has_opt(w, n, "a", (const char *const[]){"--append", NULL});
	for (size_t i = 1; i < n; i++)
		if (!cls_is_opt(w[i]))
			cls_check_write(c, w[i], !append, "tee");
}

/* sed -i: every file operand is edited in place. */
void cls_cmd_sed(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level)
{
	(void)in, (void)level;
	int inplace = 0;
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t || t[0] != '-' || t[1] == '-') {
			if (t && !strncmp(t, "--in-place", 10))
				inplace = 1;
			continue;
		}
		size_t k = strcspn(t + 1, "efl");
		if (memchr(t + 1, 'i', k))
			inplace = 1;
	}
	if (!inplace)
		return;
	int any = 0;
	int script = !cls_has_opt(
	    w, n, "ef", (const char *const[]){"--expression", "--file", NULL});
	for (size_t i = 1; i < n; i++) {
		if (cls_is_opt(w[i]))
			continue;
		if (script) {
			script = 0;
			continue;
		}
		any = 1;
		cls_check_destroy(c, w[i], "edits in place", "sed -i");
	}
	if (!any)
		reasons_add(c->r, POLICY_DELETION,
		            "sed -i edits files in place");
}

/* Whether a chmod mode sets a set-user-ID or set-group-ID bit. */
static int setuid_mode(const char *m)
{
	if (strchr(m, 's') && (strchr(m, '+') || strchr(m, '=')))
		return 1;
	size_t len = strlen(m);
	return len == 4 && m[0] >= '2' && m[0] <= '7' &&
	       strspn(m, "01234567") == 4;
}

/* chmod, chown, chgrp: set-ID bits and system paths. */
void cls_cmd_chmod(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level)
{
	(void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	char rel[POLICY_REL_MAX];
	long mode = cls_operand(w, n, 1, 0);
	if (!strcmp(name, "chmod") && mode > 0 && sh_known(w[mode]) &&
	    setuid_mode(sh_known(w[mode])))
		reasons_add(c->r, POLICY_PRIVILEGE,
		            "chmod %s sets a set-user-ID or set-group-ID bit",
		            sh_known(w[mode]));
	for (size_t i = mode > 0 ? (size_t)mode + 1 : n; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t || cls_is_opt(w[i]))
			continue;
		enum path_kind k = policy_path(c, t, rel);
		if (k == PATH_OUTSIDE) {
			char *s = policy_snip(t, 60);
			reasons_add(c->r, POLICY_PRIVILEGE,
			            "%s changes %s, a system path", name, s);
			free(s);
		}
	}
}

/* --- the network, packages, git ---------------------------------- */

/* Network tools; sshpass also runs the command after it. */
void cls_cmd_net(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level)
{
	(void)n, (void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	reasons_add(c->r, POLICY_NETWORK, "%s talks to hosts on the network",
	            name);
	if (!strcmp(name, "sshpass"))
		cls_wrapped(c, w, n, 1, (struct cls_input){0}, level);
}

/* Package managers: the subcommands that download or upload. */
void cls_cmd_pkg(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level)
{
	(void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	const struct cls_subcmds *s = cls_find_pkg(name);
	if (!strcmp(name, "docker") || !strcmp(name, "podman"))
		reasons_add(c->r, POLICY_PRIVILEGE,
		            "%s controls the container engine", name);
	long k = cls_operand(w, n, 1, 0);
	if (!strcmp(name, "pacman"))
		k = 1 < n ? 1 : -1;
	const char *sub = k > 0 ? sh_known(w[k]) : NULL;
	if (!sub || !cls_in_list(sub, s->subs))
		return;
	if (!strcmp(name, "go") && !strcmp(sub, "mod")) {
		long m = cls_operand(w, n, (size_t)k + 1, 0);
		static const char *const fetch[] = {"download", "tidy",
		                                    "vendor", NULL};
		if (m < 0 || !sh_known(w[m]) ||
		    !cls_in_list(sh_known(w[m]), fetch))
			return;
	}
	reasons_add(c->r, POLICY_NETWORK,
	            "%s %s downloads or uploads "
	            "packages",
	            name, sub);
}

/* A git configuration key=value that makes git run a command. */
static void git_config(struct cls *c, const char *kv)
{
	static const char *const keys[] = {
	    "core.sshcommand",   "core.pager",
	    "core.editor",       "core.hookspath",
	    "core.fsmonitor",    "sequence.editor",
	    "credential.helper", "diff.external",
	    "core.gitproxy",     NULL};
	char key[64];
	size_t n = strcspn(kv, "=");
	if (n >= sizeof key)
		n = sizeof key - 1;
	for (size_t k = 0; k < n; k++)
		key[k] =
		    (char)(kv[k] >= 'A' && kv[k] <= 'Z' ? kv[k] + 32 : kv[k]);
	key[n] = '\0';
	const char *val = kv[n] ? kv + n + 1 : "";
	if (cls_in_list(key, keys) ||
	    (!strncmp(key, "alias.", 6) && *val == '!') ||
	    strstr(key, ".command") || strstr(key, ".textconv"))
		reasons_add(c->r, POLICY_HIDDEN,
		            "git configuration %s makes git run a command",
		            key);
}

/* git: subcommands that talk to remotes, delete or discard changes, and
 * configuration that runs commands. */
void cls_cmd_git(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level)
{
	(void)in, (void)level;
	static const char *const net[] = {
	    "clone",        "fetch",     "pull",    "push",
	    "ls-remote",    "submodule", "archive", "send-email",
	    "request-pull", "lfs",       NULL};
	static const char *const del[] = {"clean", "rm", NULL};
	size_t i = 1;
	for (; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t || t[0] != '-')
			break;
		if ((!strcmp(t, "-c") || !strcmp(t, "--config-env")) &&
		    i + 1 < n) {
			if (sh_known(w[i + 1]))
				git_config(c, sh_known(w[i + 1]));
			i++;
		} else if (!strcmp(t, "-C") || !strcmp(t, "--git-dir") ||
		           !strcmp(t, "--work-tree") ||
		           !strcmp(t, "--namespace")) {
			i++;
		}
	}
	const char *sub = i < n ? sh_known(w[i]) : NULL;
	if (!sub)
		return;
	if (cls_in_list(sub, net))
		reasons_add(c->r, POLICY_NETWORK, "git %s talks to a remote",
		            sub);
	else if (!strcmp(sub, "remote") && i + 1 < n && sh_known(w[i + 1]) &&
	         (!strcmp(sh_known(w[i + 1]), "update") ||
	          !strcmp(sh_known(w[i + 1]), "prune")))
		reasons_add(c->r, POLICY_NETWORK, "git remote %s fetches",
		            sh_known(w[i + 1]));
	else if (cls_in_list(sub, del))
		reasons_add(c->r, POLICY_DELETION, "git %s deletes files", sub);
	else if (!strcmp(sub, "reset") &&
	         cls_has_opt(w + i, n - i, NULL,
	                     (const char *const[]){"--hard", "--merge",
	                                           "--keep", NULL}))
		reasons_add(c->r, POLICY_DELETION,
		            "git reset --hard discards changes to files");
	else if (!strcmp(sub, "checkout") || !strcmp(sub, "restore")) {
		for (size_t k = i + 1; k < n; k++)
			if (sh_known(w[k]) && (!strcmp(sh_known(w[k]), "--") ||
			                       !strcmp(sh_known(w[k]), ".") ||
			                       !strcmp(sh_known(w[k]), "-f") ||
			                       !strcmp(sub, "restore"))) {
				reasons_add(c->r, POLICY_DELETION,
				            "git %s discards changes to files",
				            sub);
				break;
			}
	} else if (!strcmp(sub, "config") && i + 2 < n && sh_known(w[i + 1]) &&
	           sh_known(w[i + 2])) {
		char *kv =
		    xasprintf("%s=%s", sh_known(w[i + 1]), sh_known(w[i + 2]));
		git_config(c, kv);
		free(kv);
	}
}

/* rsync: deleting options and remote hosts. */
void cls_cmd_rsync(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level)
{
	(void)in, (void)level;
	for (size_t i = 1; i < n; i++) {
		const char *t = sh_known(w[i]);
		if (!t)
			continue;
		if (!strncmp(t, "--delete", 8) ||
		    !strcmp(t, "--remove-source-files"))
			reasons_add(c->r, POLICY_DELETION,
			            "rsync %s deletes files", t);
		if (t[0] == '-')
			continue;
		const char *colon = strchr(t, ':');
		const char *slash = strchr(t, '/');
		if (!strncmp(t, "rsync://", 8) ||
		    (colon && (!slash || colon < slash)))
			reasons_add(c->r, POLICY_NETWORK,
			            "rsync copies to or from another host (%s)",
			            t);
	}
}

/* --- privileges, processes, services, schedules ------------------ */

/* Commands that need or change privileges (sysctl reading one key is
 * fine). */
void cls_cmd_priv(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level)
{
	(void)n, (void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	if (!strcmp(name, "sysctl") && n == 2)
		return; /* reading one key */
	reasons_add(c->r, POLICY_PRIVILEGE, "%s needs or changes privileges",
	            name);
}

/* mkfs and wipefs: a file system is erased. */
void cls_cmd_mkfs(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level)
{
	(void)n, (void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	reasons_add(c->r, POLICY_DELETION, "%s erases a file system", name);
	reasons_add(c->r, POLICY_PRIVILEGE, "%s needs privileges", name);
}

/* kill, pkill, killall...: processes are signalled (kill -l is fine). */
void cls_cmd_kill(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level)
{
	(void)n, (void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	if (!strcmp(name, "kill") && n == 2 && sh_known(w[1]) &&
	    !strcmp(sh_known(w[1]), "-l"))
		return;
	reasons_add(c->r, POLICY_PROCESS, "%s stops or signals processes",
	            name);
}

/* systemctl: services started, stopped or enabled to start by
 * themselves. */
void cls_cmd_systemctl(struct cls *c, struct sh_word **w, size_t n,
                       struct cls_input in, int level)
{
	(void)in, (void)level;
	static const char *const persist[] = {
	    "enable", "link", "edit", "set-default", "mask", "preset", NULL};
	static const char *const proc[] = {
	    "start", "stop", "restart", "kill", "reload", "isolate", NULL};
	long k = cls_operand(w, n, 1, 0);
	const char *sub = k > 0 ? sh_known(w[k]) : NULL;
	if (sub && cls_in_list(sub, persist))
		reasons_add(c->r, POLICY_PERSISTENCE,
		            "systemctl %s makes a service start by itself",
		            sub);
	if (sub && cls_in_list(sub, proc))
		reasons_add(c->r, POLICY_PROCESS,
		            "systemctl %s starts or stops services", sub);
	if (sub && strncmp(sub, "status", 6) && strncmp(sub, "list", 4) &&
	    strncmp(sub, "is-", 3) && strcmp(sub, "show") && strcmp(sub, "cat"))
		reasons_add(c->r, POLICY_PRIVILEGE,
		            "systemctl %s changes the system's services", sub);
}

/* crontab, at, launchctl...: commands scheduled to run later
 * (crontab -l is fine). */
void cls_cmd_persist(struct cls *c, struct sh_word **w, size_t n,
                     struct cls_input in, int level)
{
	(void)in, (void)level;
	const char *name = cls_base_name(w[0]->text);
	if (!strcmp(name, "crontab") &&
	    (n == 2 && sh_known(w[1]) && !strcmp(sh_known(w[1]), "-l")))
		return;
	reasons_add(c->r, POLICY_PERSISTENCE,
	            "%s schedules commands to run later", name);
}
