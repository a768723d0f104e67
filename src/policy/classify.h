/* classify.h: what the files of the shell classifier share (private to
 * src/policy/classify*.c): the analysers of commands and the tables that
 * pick them by name, helpers over a command's words, and the checks of
 * the paths it uses. Everything here has the cls_ prefix. */
#ifndef ASSAY_POLICY_CLASSIFY_H
#define ASSAY_POLICY_CLASSIFY_H

#include "internal.h"

#include <stddef.h>

/* What feeds a command's stdin. */
struct cls_input {
	int fed;                    /* a pipe, or an enclosing redirection */
	const struct sh_redir *doc; /* a here-document or here-string */
};

/* An analyser of one command, w[0] its name: adds what it finds to c.
 * level counts the wrappers around it. The analysers are cls_cmd_NAME,
 * declared below with the file they live in and picked by
 * cls_handler(). */
typedef void (*cls_handler_fn)(struct cls *c, struct sh_word **w, size_t n,
                               struct cls_input in, int level);

/* Classify the words of one command: the analyser its name picks, and
 * the paths in its words (classify.c). A wrapper's command comes back
 * here at level + 1. */
void cls_argv(struct cls *c, struct sh_word **w, size_t n, struct cls_input in,
              int level);

/* --- the tables (classify_table.c) ------------------------------- */

/* Other interpreters and the options that give them inline code. */
struct cls_interp {
	const char *name;
	const char *shorts; /* option letters taking code */
	const char *const longs[3];
};

/* A command that runs the command after its options. */
struct cls_wrapper {
	const char *name;
	const char *argopts;         /* short options taking a value */
	const char *const *longargs; /* long options taking a value */
	int positional;              /* operands before the command */
	int kind;                    /* a reason of its own, or -1 */
	const char *why;
};

/* A package manager and the subcommands that download. */
struct cls_subcmds {
	const char *name;
	const char *const subs[12];
};

/* The analyser for a command's base name, or NULL. */
cls_handler_fn cls_handler(const char *b);
int cls_is_shell(const char *b);
int cls_is_python(const char *b);
const struct cls_interp *cls_find_interp(const char *b);
const struct cls_wrapper *cls_find_wrapper(const char *b);
const struct cls_subcmds *cls_find_pkg(const char *b);

/* --- words (classify_words.c) ------------------------------------ */

int cls_in_list(const char *s, const char *const *list);
/* What follows the last "/" (all of s without one). */
const char *cls_base_name(const char *s);
/* A known word starting with "-" (not "-" alone). */
int cls_is_opt(const struct sh_word *w);
/* Index of the which-th operand (not an option) from i, or -1. */
long cls_operand(struct sh_word **w, size_t n, size_t i, int which);
/* Whether an option before "--" has a letter of shorts or starts with
 * one of longs. */
int cls_has_opt(struct sh_word **w, size_t n, const char *shorts,
                const char *const *longs);
/* The words from i joined by spaces, in canonical form. Caller frees. */
char *cls_join_canon(struct sh_word **w, size_t n, size_t i);
/* The words from i as text, NULL if one is only known at run time.
 * Caller frees. */
char *cls_join_text(struct sh_word **w, size_t n, size_t i);
/* The command w[0..n) as another form rules can match. */
void cls_add_forms(struct cls *c, struct sh_word **w, size_t n);

/* --- paths and redirections (classify_paths.c) ------------------- */

/* Every path-looking word of the command cmd. */
void cls_check_paths(struct cls *c, const char *cmd, struct sh_word **w,
                     size_t n);
/* A file the command writes; truncate: its old content is lost. how
 * names what writes it in the reason. */
void cls_check_write(struct cls *c, const struct sh_word *w, int truncate,
                     const char *how);
/* A file who deletes or changes in place (verb says how). */
void cls_check_destroy(struct cls *c, const struct sh_word *w, const char *verb,
                       const char *who);
void cls_check_redir(struct cls *c, const struct sh_redir *r);

/* --- interpreters (classify_interp.c) ---------------------------- */

/* The interpreter name reads its program from stdin; lang is 's'
 * (shell), 'p' (python) or 0 (a language not checked). */
void cls_stdin_code(struct cls *c, const char *name, struct cls_input in,
                    int lang);
/* name opt (-c, -S...) runs code only known at run time. */
void cls_dynamic_code(struct cls *c, const char *name, const char *opt);
/* The script operand w of name: 1 if it is not a visible file (a
 * substitution or stdin), with its reasons added. */
int cls_script_operand(struct cls *c, const char *name, const struct sh_word *w,
                       struct cls_input in, int lang);
/* Analysers: shells, python, other interpreters, awk. */
void cls_cmd_shell(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level);
void cls_cmd_python(struct cls *c, struct sh_word **w, size_t n,
                    struct cls_input in, int level);
void cls_cmd_interp(struct cls *c, struct sh_word **w, size_t n,
                    struct cls_input in, int level);
void cls_cmd_awk(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level);

/* --- wrappers (classify_wrappers.c) ------------------------------ */

/* The command w[from..n) that a wrapper runs: classified in turn. */
void cls_wrapped(struct cls *c, struct sh_word **w, size_t n, size_t from,
                 struct cls_input in, int level);
/* Analysers: the wrappers of the table, then the wrappers that need
 * their own reading of options. */
void cls_cmd_wrapper(struct cls *c, struct sh_word **w, size_t n,
                     struct cls_input in, int level);
void cls_cmd_env(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level);
void cls_cmd_command(struct cls *c, struct sh_word **w, size_t n,
                     struct cls_input in, int level);
void cls_cmd_find(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level);
void cls_cmd_flock(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level);
void cls_cmd_su(struct cls *c, struct sh_word **w, size_t n,
                struct cls_input in, int level);
void cls_cmd_watch(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level);
void cls_cmd_parallel(struct cls *c, struct sh_word **w, size_t n,
                      struct cls_input in, int level);
void cls_cmd_script(struct cls *c, struct sh_word **w, size_t n,
                    struct cls_input in, int level);
void cls_cmd_busybox(struct cls *c, struct sh_word **w, size_t n,
                     struct cls_input in, int level);

/* --- files, processes, the system, the network
 *     (classify_commands.c) ------------------------------------------ */

void cls_cmd_rm(struct cls *c, struct sh_word **w, size_t n,
                struct cls_input in, int level);
void cls_cmd_dd(struct cls *c, struct sh_word **w, size_t n,
                struct cls_input in, int level);
void cls_cmd_copy(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level);
void cls_cmd_tee(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level);
void cls_cmd_sed(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level);
void cls_cmd_chmod(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level);
void cls_cmd_net(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level);
void cls_cmd_pkg(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level);
void cls_cmd_git(struct cls *c, struct sh_word **w, size_t n,
                 struct cls_input in, int level);
void cls_cmd_rsync(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level);
void cls_cmd_priv(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level);
void cls_cmd_mkfs(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level);
void cls_cmd_kill(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level);
void cls_cmd_systemctl(struct cls *c, struct sh_word **w, size_t n,
                       struct cls_input in, int level);
void cls_cmd_persist(struct cls *c, struct sh_word **w, size_t n,
                     struct cls_input in, int level);

/* --- the shell's own commands (classify_builtins.c) -------------- */

void cls_cmd_eval(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level);
void cls_cmd_source(struct cls *c, struct sh_word **w, size_t n,
                    struct cls_input in, int level);
void cls_cmd_alias(struct cls *c, struct sh_word **w, size_t n,
                   struct cls_input in, int level);
void cls_cmd_trap(struct cls *c, struct sh_word **w, size_t n,
                  struct cls_input in, int level);
void cls_cmd_cd(struct cls *c, struct sh_word **w, size_t n,
                struct cls_input in, int level);

#endif
