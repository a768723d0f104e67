/* test_policy_shell.c: the shell tokenizer and parser of the policy
 * layer: how a command line splits into simple commands, what each
 * word and redirection holds, here-documents, substitutions, and the
 * inputs it must refuse rather than guess. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assay/util.h"
#include "policy/shell.h"

#include <stdlib.h>
#include <string.h>

static struct sh_parse *parse(const char *s)
{
	return sh_parse(s, strlen(s), 0);
}

static struct sh_parse *parse_ok(const char *s)
{
	struct sh_parse *p = parse(s);
	if (p->error)
		fail_msg("`%s`: %s", s, p->error);
	return p;
}

/* The first word of every command, space-separated. */
static char *heads(const struct sh_parse *p)
{
	char buf[512] = "";
	for (size_t k = 0; k < p->ncmds; k++) {
		const struct sh_cmd *c = p->cmds[k];
		strcat(buf, k ? " " : "");
		strcat(buf, c->argc ? c->argv[0]->text : "-");
	}
	return xstrdup(buf);
}

static void expect_heads(const char *src, const char *want)
{
	struct sh_parse *p = parse_ok(src);
	char *got = heads(p);
	if (strcmp(got, want))
		fail_msg("`%s`: commands [%s], want [%s]", src, got, want);
	free(got);
	sh_parse_free(p);
}

static void test_lists(void **state)
{
	(void)state;
	expect_heads("a; b && c || d | e & f", "a b c d e f");
	expect_heads("a\nb\n\nc", "a b c");
	expect_heads("a |\n b", "a b");
	expect_heads("! a | b", "a b");
	expect_heads("time -p a", "a");
	expect_heads("a |& b", "a b");
	struct sh_parse *p = parse_ok("x | y | z; w");
	assert_int_equal(p->cmds[0]->pipe_pos, 0);
	assert_int_equal(p->cmds[0]->stdin_fed, 0);
	assert_int_equal(p->cmds[2]->pipe_pos, 2);
	assert_int_equal(p->cmds[2]->stdin_fed, 1);
	assert_int_equal(p->cmds[1]->pipeline, p->cmds[0]->pipeline);
	assert_int_not_equal(p->cmds[3]->pipeline, p->cmds[0]->pipeline);
	assert_int_equal(p->cmds[3]->stdin_fed, 0);
	sh_parse_free(p);
}

static void test_compound(void **state)
{
	(void)state;
	expect_heads("if a; then b; elif c; then d; else e; fi", "a b c d e");
	expect_heads("while a; do b; done; until c; do d; done", "a b c d");
	expect_heads("for x in $(a) b; do c; done", "a c");
	expect_heads("for ((i=0; i<3; i++)); do a; done", "a");
	expect_heads("select x in a b; do c; done", "c");
	expect_heads("case $x in a|b) c;; (d) e;& *) f;;& esac", "c e f");
	expect_heads("case x in esac", "");
	expect_heads("{ a; b; }", "a b");
	expect_heads("(a; (b))", "a b");
	expect_heads("f() { a; }; function g { b; }; function h() (c)",
	             "a b c");
	expect_heads("[[ -f x && $y < 3 ]] && a", "[[ a");
	expect_heads("(( x++ )) && a", "a");
	expect_heads("coproc a", "a");
	expect_heads("echo done fi then", "echo");
	struct sh_parse *p = parse_ok("{ a; b; } > out < in");
	assert_int_equal(p->nxredirs, 2);
	assert_string_equal(p->xredirs[0]->op, ">");
	/* an input redirection feeds every command inside */
	assert_int_equal(p->cmds[0]->stdin_fed, 1);
	assert_int_equal(p->cmds[1]->stdin_fed, 1);
	sh_parse_free(p);
	p = parse_ok("x | while read l; do sh; done");
	assert_int_equal(p->cmds[2]->stdin_fed, 1);
	sh_parse_free(p);
}

static void test_words(void **state)
{
	(void)state;
	struct sh_parse *p =
	    parse_ok("echo 'a b' \"c $d\" e\\ f $'\\x41\\101\\u00e9\\n' "
	             "~/x *.c {a,b} `g` $(h) $((1+2)) ${i:-j} <(k) r''m");
	const struct sh_cmd *c = p->cmds[p->ncmds - 1];
	assert_int_equal(c->argc, 14);
	assert_string_equal(c->argv[1]->text, "a b");
	assert_int_equal(c->argv[1]->flags, SH_W_QUOTED);
	assert_string_equal(c->argv[2]->text, "c $d");
	assert_true(c->argv[2]->flags & SH_W_PARAM);
	assert_string_equal(c->argv[3]->text, "e f");
	assert_string_equal(c->argv[4]->text, "AA\xc3\xa9\n");
	assert_true(c->argv[4]->flags & SH_W_ANSI);
	assert_true(c->argv[5]->flags & SH_W_TILDE);
	assert_true(c->argv[6]->flags & SH_W_GLOB);
	assert_true(c->argv[7]->flags & SH_W_BRACE);
	assert_true(c->argv[8]->flags & SH_W_CMDSUB);
	assert_true(c->argv[9]->flags & SH_W_CMDSUB);
	assert_true(c->argv[10]->flags & SH_W_ARITH);
	assert_true(c->argv[11]->flags & SH_W_PARAM);
	assert_true(c->argv[12]->flags & SH_W_PROCSUB);
	assert_string_equal(c->argv[13]->text, "rm");
	assert_string_equal(c->argv[13]->raw, "r''m");
	/* substitutions are commands too, listed before theirs */
	char *h = heads(p);
	assert_string_equal(h, "g h k echo");
	free(h);
	assert_int_equal(p->cmds[0]->subst, 1);
	assert_int_equal(c->subst, 0);
	sh_parse_free(p);
	/* [ is a command, [ab] a pattern */
	p = parse_ok("[ -f x ] && ls [ab]");
	assert_int_equal(p->cmds[0]->argv[0]->flags, 0);
	assert_true(p->cmds[1]->argv[1]->flags & SH_W_GLOB);
	sh_parse_free(p);
	expect_heads("ec\\\nho hi # comment; rm x\nls", "echo ls");
	expect_heads("echo a#b", "echo");
}

static void test_assignments_and_redirs(void **state)
{
	(void)state;
	struct sh_parse *p =
	    parse_ok("A=1 B=\"x y\" arr=(1 2 3) cmd arg 2>&1 >file 3<in "
	             "&>all >>log {fd}>x <>rw");
	const struct sh_cmd *c = p->cmds[0];
	assert_int_equal(c->nassigns, 3);
	assert_string_equal(c->assigns[1]->text, "B=x y");
	assert_int_equal(c->argc, 2);
	assert_int_equal(c->nredirs, 7);
	assert_int_equal(c->redirs[0]->fd, 2);
	assert_string_equal(c->redirs[0]->op, ">&");
	assert_string_equal(c->redirs[0]->arg->text, "1");
	assert_int_equal(c->redirs[1]->fd, -1);
	assert_int_equal(c->redirs[2]->fd, 3);
	assert_string_equal(c->redirs[3]->op, "&>");
	assert_string_equal(c->redirs[4]->op, ">>");
	assert_int_equal(c->redirs[5]->fd, 10);
	assert_string_equal(c->redirs[6]->op, "<>");
	sh_parse_free(p);
	/* assignments only after the command name are words */
	p = parse_ok("cmd A=1");
	assert_int_equal(p->cmds[0]->nassigns, 0);
	assert_int_equal(p->cmds[0]->argc, 2);
	sh_parse_free(p);
	p = parse_ok("> out");
	assert_int_equal(p->cmds[0]->argc, 0);
	assert_int_equal(p->cmds[0]->nredirs, 1);
	sh_parse_free(p);
}

static void test_heredocs(void **state)
{
	(void)state;
	struct sh_parse *p = parse_ok("cat <<EOF >out; cat <<'Q' <<-T\n"
	                              "line $x\n$(a)\nEOF\n"
	                              "$(not run)\nQ\n\t\ttabbed\n\tT\n"
	                              "echo next");
	char *h = heads(p);
	/* $(a) in an unquoted here-document runs (it is read after the
	 * line that opens it); in a quoted one it does not */
	assert_string_equal(h, "cat a cat echo");
	free(h);
	const struct sh_redir *r = p->cmds[0]->redirs[0];
	assert_string_equal(r->op, "<<");
	assert_string_equal(r->body, "line $x\n$(a)\n");
	assert_int_equal(r->body_live, 1);
	r = p->cmds[2]->redirs[0];
	assert_string_equal(r->body, "$(not run)\n");
	assert_int_equal(r->body_live, 0);
	r = p->cmds[2]->redirs[1];
	assert_string_equal(r->op, "<<-");
	assert_string_equal(r->body, "tabbed\n");
	sh_parse_free(p);
	/* a here-document inside a substitution */
	expect_heads("x=$(cat <<E\nhi\nE\n); echo", "cat - echo");
	/* a here-string */
	p = parse_ok("bash <<< 'rm x'");
	assert_string_equal(p->cmds[0]->redirs[0]->op, "<<<");
	assert_string_equal(p->cmds[0]->redirs[0]->arg->text, "rm x");
	sh_parse_free(p);
}

static void test_nesting(void **state)
{
	(void)state;
	expect_heads("echo $(a $(b) `c`)", "b c a echo");
	expect_heads("echo \"$(a \"$(b)\")\"", "b a echo");
	expect_heads("echo `a \\`b\\``", "b a echo");
	expect_heads("echo ${x:-$(a)} $(( $(b) + 1 ))", "a b echo");
	expect_heads("echo $(case x in a) b;; esac)", "b echo");
	expect_heads("echo $( (a) )", "a echo");
	expect_heads("diff <(a) >(b)", "a b diff");
	/* >(cmd) reads what the command writes */
	struct sh_parse *p = parse_ok("tee >(b)");
	assert_int_equal(p->cmds[0]->stdin_fed, 1);
	sh_parse_free(p);
	/* deep nesting is refused, not followed forever */
	char deep[1200] = "";
	for (int i = 0; i < 100; i++)
		strcat(deep, "$(");
	strcat(deep, "x");
	for (int i = 0; i < 100; i++)
		strcat(deep, ")");
	p = parse(deep);
	assert_non_null(p->error);
	assert_non_null(strstr(p->error, "nested too deeply"));
	sh_parse_free(p);
	char parens[300] = "";
	for (int i = 0; i < 120; i++)
		strcat(parens, "(");
	p = parse(parens);
	assert_non_null(p->error);
	sh_parse_free(p);
}

static void test_errors(void **state)
{
	(void)state;
	static const char *const bad[] = {"echo 'x",
	                                  "echo \"x",
	                                  "echo $(x",
	                                  "echo `x",
	                                  "echo ${x",
	                                  "echo $((1+",
	                                  "ls |",
	                                  "ls &&",
	                                  "| ls",
	                                  "&& ls",
	                                  ")",
	                                  ";;",
	                                  "if a; then b",
	                                  "while a; do b",
	                                  "for; do a; done",
	                                  "case x in a) b",
	                                  "{ a;",
	                                  "( a",
	                                  "a (",
	                                  "cat <<EOF\nx",
	                                  "cat <<",
	                                  "ls >",
	                                  "echo @(a|b)",
	                                  "done",
	                                  "fi",
	                                  "a && && b",
	                                  "f() ",
	                                  "$'x",
	                                  "[[ x",
	                                  "echo $(ls; )) )",
	                                  NULL};
	for (const char *const *b = bad; *b; b++) {
		struct sh_parse *p = parse(*b);
		if (!p->error)
			fail_msg("`%s` parsed without an error", *b);
		sh_parse_free(p);
	}
	/* outside input: NUL bytes and sizes */
	struct sh_parse *p = sh_parse("ls\0rm", 5, 0);
	assert_non_null(strstr(p->error, "NUL"));
	sh_parse_free(p);
	size_t n = SH_MAX_INPUT + 1;
	char *big = xmalloc(n);
	memset(big, 'a', n);
	p = sh_parse(big, n, 0);
	assert_non_null(strstr(p->error, "too long"));
	sh_parse_free(p);
	free(big);
}

static void test_quote(void **state)
{
	(void)state;
	char *q = sh_quote("plain-1.txt");
	assert_string_equal(q, "plain-1.txt");
	free(q);
	q = sh_quote("a b");
	assert_string_equal(q, "'a b'");
	free(q);
	q = sh_quote("it's");
	assert_string_equal(q, "'it'\\''s'");
	free(q);
	q = sh_quote("");
	assert_string_equal(q, "''");
	free(q);
	q = sh_quote("~x");
	assert_string_equal(q, "'~x'");
	free(q);
	/* the canonical word reads back as the same word */
	struct sh_parse *p = parse_ok("echo \"it's\" 'a\"b' *.c $x");
	const struct sh_cmd *c = p->cmds[0];
	char *w1 = sh_word_canon(c->argv[1]);
	char *w3 = sh_word_canon(c->argv[3]);
	char *w4 = sh_word_canon(c->argv[4]);
	assert_string_equal(w3, "*.c");
	assert_string_equal(w4, "$x");
	char *line = xasprintf("echo %s", w1);
	struct sh_parse *again = parse_ok(line);
	assert_string_equal(again->cmds[0]->argv[1]->text, "it's");
	sh_parse_free(again);
	free(line);
	free(w1);
	free(w3);
	free(w4);
	sh_parse_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lists),
	    cmocka_unit_test(test_compound),
	    cmocka_unit_test(test_words),
	    cmocka_unit_test(test_assignments_and_redirs),
	    cmocka_unit_test(test_heredocs),
	    cmocka_unit_test(test_nesting),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_quote),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
