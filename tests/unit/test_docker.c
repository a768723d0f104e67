/* test_docker.c: the docker sandbox against a real Docker daemon (the
 * one DOCKER_HOST names, or the default socket) and the image the
 * configuration names (assay-sandbox:latest). Commands, live output,
 * exit codes, stdin, the file tools and their confinement, staging and
 * fetching, a hostile archive, and the escape attempts of the local
 * backend's tests: host files, environment, network, writes outside
 * the workspace, outliving a timeout, process and memory bombs, CPU
 * and file-size limits. Exit 77 (skip) only when no daemon answers;
 * under CI=true that is a failure that says so (skip.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sandbox_harness.h"
#include "skip.h"
#include "assay/json.h"
#include "sandbox/docker_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char secret_value[64];

/* "sleep <prefix><digit>": the processes these tests start are host
 * processes (the daemon is local), and another run of the tests on
 * the same machine must not be mistaken for ours. */
static char *sleeps(const char *fmt)
{
	char prefix[32];
	snprintf(prefix, sizeof prefix, "7%06d", (int)(getpid() % 1000000));
	struct buf b;
	buf_init(&b, 0);
	for (const char *p = fmt; *p; p++) {
		if (*p == '@')
			buf_puts(&b, prefix);
		else
			buf_append(&b, p, 1);
	}
	return buf_detach(&b);
}

static int setup(void **state)
{
	struct harness *h = xcalloc(1, sizeof *h);
	harness_config(h);
	config_set(&h->cfg.sandbox, "docker");
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	struct harness *h = *state;
	harness_free(h);
	free(h);
	return 0;
}

static void start(struct harness *h)
{
	if (harness_start(h) < 0)
		fail_msg("docker sandbox start failed: %s", h->start_err);
}

static void must_fail(struct harness *h, const char *cmd)
{
	struct result r;
	harness_run(h, &r, cmd, 20);
	assert_true(r.done);
	if (r.ex.exit_code == 0)
		fail_msg("'%s' succeeded: %s", cmd, buf_str(&r.out));
	if (*secret_value && (strstr(buf_str(&r.out), secret_value) ||
	                      strstr(buf_str(&r.err), secret_value)))
		fail_msg("'%s' revealed the secret", cmd);
	result_free(&r);
}

static void must_not_show(struct harness *h, const char *cmd, const char *bad)
{
	struct result r;
	harness_run(h, &r, cmd, 20);
	assert_true(r.done);
	if (r.ex.exit_code != 0)
		fail_msg("'%s' failed (%d): %s", cmd, r.ex.exit_code,
		         buf_str(&r.err));
	if (strstr(buf_str(&r.out), bad) || strstr(buf_str(&r.err), bad))
		fail_msg("'%s' showed '%s'", cmd, bad);
	result_free(&r);
}

/* stdout of cmd, which must succeed; caller frees. */
static char *run_out(struct harness *h, const char *cmd)
{
	struct result r;
	harness_run(h, &r, cmd, 30);
	assert_true(r.done);
	if (r.ex.exit_code != 0)
		fail_msg("'%s' failed (%d): %s", cmd, r.ex.exit_code,
		         buf_str(&r.err));
	char *s = xstrdup(buf_str(&r.out));
	result_free(&r);
	return s;
}

/* ---- file tool results ---- */

/* The completion of the call just made, checked against the
 * contract (once, from the loop, never before the call returned). */
static void wait_done(struct harness *h, struct hdone *d)
{
	if (harness_settle(h->loop, d, 30000) < 0)
		fail_msg("the operation broke the completion contract");
}

static void done_free(struct hdone *d)
{
	hdone_free(d);
}

static void do_read(struct harness *h, const char *rel, size_t max,
                    struct hdone *d)
{
	memset(d, 0, sizeof *d);
	sbx_read_file(h->sbx, rel, max, hdone_fn, d);
	wait_done(h, d);
}

static void do_write(struct harness *h, const char *rel, const char *data,
                     struct hdone *d)
{
	memset(d, 0, sizeof *d);
	sbx_write_file(h->sbx, rel, data, strlen(data), hdone_fn, d);
	wait_done(h, d);
}

static void do_list(struct harness *h, const char *rel, int rec, size_t max,
                    struct hdone *d)
{
	memset(d, 0, sizeof *d);
	sbx_list(h->sbx, rel, rec, max, hdone_fn, d);
	wait_done(h, d);
}

/* ---- commands ---- */

static void test_exec_basics(void **state)
{
	struct harness *h = *state;
	start(h);
	assert_true(!strncmp(sbx_image_id(h->sbx), "sha256:", 7));
	/* the image's repo digests, from the same inspect: there, even
	 * when empty (an image built here); only docker has them */
	assert_non_null(sbx_repo_digests(h->sbx));
	assert_null(sbx_image_reported(h->sbx));
	struct result r;
	harness_run(h, &r, "echo out; echo err >&2; pwd; exit 3", 10);
	assert_true(r.done);
	assert_int_equal(r.ex.exit_code, 3);
	assert_string_equal(buf_str(&r.out), "out\n/workspace\n");
	assert_string_equal(buf_str(&r.err), "err\n");
	result_free(&r);
	/* A lot of output, byte-exact, on both streams. */
	harness_run(h, &r,
	            "head -c 5000000 /dev/zero | tr '\\0' x; "
	            "head -c 300000 /dev/zero | tr '\\0' y >&2",
	            30);
	assert_int_equal(r.ex.exit_code, 0);
	assert_int_equal(r.out_bytes, 5000000);
	assert_int_equal(r.err_bytes, 300000);
	result_free(&r);
	/* Missing program: 127 from bash, with its message. */
	harness_run(h, &r, "no-such-program-xyz", 10);
	assert_int_equal(r.ex.exit_code, 127);
	assert_non_null(strstr(buf_str(&r.err), "not found"));
	result_free(&r);
	/* Killed by a signal: reported as one. */
	harness_run(h, &r, "kill -TERM $$", 10);
	assert_int_equal(r.ex.signal, SIGTERM);
	result_free(&r);
	/* The python stack of the image. */
	char *o = run_out(h, "python3 -c 'import numpy, pandas, scipy, "
	                     "matplotlib; print(matplotlib.get_backend())'");
	assert_string_equal(o, "agg\n");
	free(o);
}

/* Output arrives while the command still runs. */
static void test_live_output(void **state)
{
	struct harness *h = *state;
	start(h);
	struct result r;
	assert_non_null(
	    harness_spawn(h, &r, "echo first; sleep 3; echo second", 20));
	int64_t end = now_ms() + 10000;
	while (!r.out.len && !r.done && now_ms() < end)
		loop_once(h->loop, 50);
	assert_false(r.done); /* "first" came before the end */
	assert_string_equal(buf_str(&r.out), "first\n");
	harness_wait(h, &r, 20000);
	assert_string_equal(buf_str(&r.out), "first\nsecond\n");
	result_free(&r);
}

struct kernel {
	struct result r;
	struct sbx_exec *e;
};

/* A long-lived command fed through stdin (the python tool's kernel). */
static void test_stdin(void **state)
{
	struct harness *h = *state;
	start(h);
	struct result r;
	result_init(&r);
	const char *argv[] = {"python3", "-u", "-c",
	                      "import sys\n"
	                      "ns = {}\n"
	                      "for line in sys.stdin:\n"
	                      "    exec(line, ns)\n"
	                      "    print('--done--', flush=True)\n"
	                      "print('eof', flush=True)\n",
	                      NULL};
	struct sbx_exec_req req = {
	    .argv = argv, .keep_stdin = 1, .timeout_s = 60};
	struct sbx_exec_obs obs = {result_output, result_exit, &r};
	char *err = NULL;
	struct sbx_exec *e = sbx_exec(h->sbx, &req, &obs, &err);
	assert_non_null(e);
	const char *l1 = "x = 40\n";
	assert_int_equal(sbx_exec_write(e, l1, strlen(l1)), 0);
	const char *l2 = "print(x + 2)\n";
	assert_int_equal(sbx_exec_write(e, l2, strlen(l2)), 0);
	int64_t end = now_ms() + 20000;
	while (!strstr(buf_str(&r.out), "42\n--done--\n") && now_ms() < end)
		loop_once(h->loop, 50);
	if (!strstr(buf_str(&r.out), "--done--\n42\n--done--\n"))
		fail_msg("kernel said: [%s] [%s] done %d", buf_str(&r.out),
		         buf_str(&r.err), r.done);
	assert_false(r.done); /* state survives between writes */
	/* A large write goes through whole. */
	struct buf big;
	buf_init(&big, 0);
	buf_puts(&big, "s = '");
	for (int i = 0; i < 300000; i++)
		buf_puts(&big, "z");
	buf_puts(&big, "'; print(len(s))\n");
	assert_int_equal(sbx_exec_write(e, big.data, big.len), 0);
	buf_free(&big);
	end = now_ms() + 20000;
	while (!strstr(buf_str(&r.out), "300000\n--done--") && now_ms() < end)
		loop_once(h->loop, 50);
	if (!strstr(buf_str(&r.out), "300000\n--done--"))
		fail_msg("kernel said: [%s] [%.300s] done %d", buf_str(&r.out),
		         buf_str(&r.err), r.done);
	/* End of input: the kernel sees EOF and exits by itself. */
	assert_int_equal(sbx_exec_write(e, "", 0), 0);
	harness_wait(h, &r, 20000);
	assert_true(r.done);
	assert_int_equal(r.ex.exit_code, 0);
	assert_non_null(strstr(buf_str(&r.out), "eof\n"));
	result_free(&r);
}

static void test_cancel(void **state)
{
	struct harness *h = *state;
	start(h);
	struct result r;
	char *cmd = sleeps("sleep @1 & sleep @2");
	char *mark = sleeps("sleep @");
	struct sbx_exec *e = harness_spawn(h, &r, cmd, 60);
	assert_non_null(e);
	int64_t end = now_ms() + 10000;
	while (count_procs(mark) < 2 && now_ms() < end)
		loop_once(h->loop, 50);
	assert_true(count_procs(mark) >= 2);
	sbx_exec_cancel(e);
	harness_wait(h, &r, 10000);
	assert_true(r.done);
	assert_true(r.ex.cancelled);
	assert_int_equal(wait_no_procs(mark, 3000), 0);
	result_free(&r);
	free(cmd);
	free(mark);
	/* The sandbox still works. */
	char *o = run_out(h, "echo alive");
	assert_string_equal(o, "alive\n");
	free(o);
}

/* ---- files ---- */

static void test_files(void **state)
{
	struct harness *h = *state;
	start(h);
	struct hdone d;
	do_write(h, "notes/deep/a.txt", "line1\nline2\nline3\n", &d);
	assert_int_equal(d.rc, 0);
	done_free(&d);
	char *o =
	    run_out(h, "cat notes/deep/a.txt; stat -c %s notes/deep/a.txt");
	assert_string_equal(o, "line1\nline2\nline3\n18\n");
	free(o);
	do_read(h, "notes/deep/a.txt", 1 << 20, &d);
	assert_int_equal(d.rc, 0);
	assert_string_equal(d.data, "line1\nline2\nline3\n");
	done_free(&d);
	/* cut at max, and said so */
	do_read(h, "notes/deep/a.txt", 5, &d);
	assert_int_equal(d.rc, 1);
	assert_string_equal(d.data, "line1");
	assert_non_null(strstr(d.err, "18 bytes"));
	done_free(&d);
	/* binary content round trip, a long name */
	char name[200];
	memset(name, 'n', 150);
	strcpy(name + 150, ".bin");
	char bin[] = "a\0b\x01\xff\n";
	memset(&d, 0, sizeof d);
	sbx_write_file(h->sbx, name, bin, sizeof bin, hdone_fn, &d);
	wait_done(h, &d);
	assert_int_equal(d.rc, 0);
	done_free(&d);
	do_read(h, name, 100, &d);
	assert_int_equal(d.rc, 0);
	assert_int_equal(d.len, sizeof bin);
	assert_memory_equal(d.data, bin, sizeof bin);
	done_free(&d);
	/* replace */
	do_write(h, "notes/deep/a.txt", "new", &d);
	assert_int_equal(d.rc, 0);
	done_free(&d);
	do_read(h, "notes/deep/a.txt", 100, &d);
	assert_string_equal(d.data, "new");
	done_free(&d);
	/* errors */
	do_read(h, "nope.txt", 100, &d);
	assert_int_equal(d.rc, -1);
	assert_non_null(d.err);
	done_free(&d);
	do_read(h, "notes", 100, &d);
	assert_int_equal(d.rc, -1);
	assert_non_null(strstr(d.err, "directory"));
	done_free(&d);
	do_write(h, "notes", "x", &d); /* never replaces a directory */
	assert_int_equal(d.rc, -1);
	done_free(&d);
	o = run_out(h, "test -d notes/deep && echo kept");
	assert_string_equal(o, "kept\n");
	free(o);
	/* listing: pre-order, siblings sorted, workspace-relative */
	free(run_out(h, "mkdir -p b/c && echo 12345 > b/c/f && echo x > a.txt"
	                " && ln -s a.txt lnk && mkfifo fifo"));
	do_list(h, ".", 1, 1000, &d);
	assert_int_equal(d.rc, 0);
	char *paths = NULL;
	{
		struct buf b;
		buf_init(&b, 0);
		const cJSON *it;
		cJSON_ArrayForEach(it, d.list)
		{
			buf_printf(&b, "%s:%s ", json_str(it, "path", "?"),
			           json_str(it, "type", "?"));
			if (!strcmp(json_str(it, "path", ""), "b/c/f"))
				assert_int_equal(json_num(it, "size", 0), 6);
			assert_true(json_num(it, "mtime", 0) > 1e9);
		}
		paths = buf_detach(&b);
	}
	assert_non_null(strstr(paths, "a.txt:file b:dir b/c:dir b/c/f:file "
	                              "fifo:other lnk:link "));
	free(paths);
	done_free(&d);
	do_list(h, "b", 0, 1000, &d);
	assert_int_equal(cJSON_GetArraySize(d.list), 1);
	assert_string_equal(json_str(cJSON_GetArrayItem(d.list, 0), "path", ""),
	                    "b/c");
	done_free(&d);
	do_list(h, ".", 1, 3, &d);
	assert_int_equal(d.rc, 1); /* truncated */
	assert_int_equal(cJSON_GetArraySize(d.list), 3);
	assert_non_null(d.err);
	done_free(&d);
}

static void test_file_tools_and_symlinks(void **state)
{
	struct harness *h = *state;
	start(h);
	free(run_out(h, "ln -s /etc/passwd pw && ln -s / root && "
	                "ln -s .. up && mkdir d && ln -s ../../.. d/up3 && "
	                "mkdir real && echo inside > real/f && "
	                "ln -s real alias && ln -s /etc/passwd sec"));
	const char *refused[] = {"pw", "root/etc/passwd", "up/etc/passwd",
	                         "d/up3/etc/passwd"};
	struct hdone d;
	for (size_t i = 0; i < 4; i++) {
		do_read(h, refused[i], 1 << 20, &d);
		if (d.rc >= 0)
			fail_msg("read_file(%s) worked: %.40s", refused[i],
			         d.data);
		assert_non_null(strstr(d.err, "outside the workspace"));
		done_free(&d);
	}
	/* a link that stays inside is followed */
	do_read(h, "alias/f", 100, &d);
	assert_int_equal(d.rc, 0);
	assert_string_equal(d.data, "inside\n");
	done_free(&d);
	do_write(h, "root/tmp/assay-escape-w", "x", &d);
	assert_int_equal(d.rc, -1);
	done_free(&d);
	do_write(h, "up/escape-w.txt", "x", &d);
	assert_int_equal(d.rc, -1);
	done_free(&d);
	do_write(h, "d/up3/tmp/new/escape.txt", "x", &d);
	assert_int_equal(d.rc, -1);
	done_free(&d);
	must_fail(h, "ls /tmp/assay-escape-w /escape-w.txt /tmp/new");
	do_list(h, "root", 1, 100, &d);
	assert_int_equal(d.rc, -1);
	done_free(&d);
	/* fetch through a link out: refused, nothing on the host */
	char *dest = xasprintf("%s/fetched", h->run_dir);
	char *err = NULL;
	assert_int_equal(harness_fetch(h, "pw", dest, &err), -1);
	assert_non_null(strstr(err, "outside the workspace"));
	free(err);
	assert_int_equal(access(dest, F_OK), -1);
	free(dest);
	/* write_file replaces a link, never writes through it */
	do_write(h, "sec", "mine", &d);
	assert_int_equal(d.rc, 0);
	done_free(&d);
	char *o = run_out(h, "test -L sec || cat sec; head -1 /etc/passwd");
	assert_string_equal(o, "mineroot:x:0:0:root:/root:/bin/bash\n");
	free(o);
}

/* Copied inputs go in with the staging rules of the local backend; declared
 * outputs come out (files and directories); the workspace persists as
 * a .tar.gz. */
static void test_stage_fetch_export(void **state)
{
	struct harness *h = *state;
	char *src = xasprintf("%s/src", h->run_dir);
	char *tree = xasprintf("%s/tree", src);
	char *cmd = xasprintf(
	    "mkdir -p %s/sub && printf 'a,b\\n1,2\\n' > %s/data.csv && "
	    "echo nested > %s/sub/n.txt && ln -s ../../data.csv %s/sub/lnk && "
	    "ln -s /etc %s/etcdir && ln -s missing %s/dangling && "
	    "head -c 3000000 /dev/urandom > %s/big.bin",
	    tree, src, tree, tree, tree, tree, src);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	char *csv = xasprintf("%s/data.csv", src);
	char *big = xasprintf("%s/big.bin", src);
	config_add_input(&h->cfg, csv, "input/data.csv");
	config_add_input(&h->cfg, tree, "input/tree");
	config_add_input(&h->cfg, big, "blobs/big.bin");
	/* copies (bound inputs: tests/e2e/mounted_inputs_docker.sh) */
	for (size_t i = 0; i < h->cfg.n_inputs; i++)
		h->cfg.inputs[i].copy = 1;
	start(h);
	char *o = run_out(h, "cat input/data.csv input/tree/sub/n.txt "
	                     "input/tree/sub/lnk; test -L input/tree/sub/lnk "
	                     "|| echo regular; ls input/tree; "
	                     "sha256sum < blobs/big.bin");
	char *sum = NULL;
	{
		char *c2 = xasprintf("sha256sum < %s", big);
		FILE *p = popen(c2, "r");
		char line[200] = "";
		assert_non_null(fgets(line, sizeof line, p));
		pclose(p);
		free(c2);
		sum = xstrdup(line);
	}
	char *want =
	    xasprintf("a,b\n1,2\nnested\na,b\n1,2\nregular\nsub\n%s", sum);
	assert_string_equal(o, want);
	free(want);
	free(o);
	free(sum);
	/* outputs */
	free(run_out(h, "mkdir -p output/figs && echo report > output/r.md && "
	                "echo png > output/figs/p.png && "
	                "ln -s /etc/passwd output/figs/evil && "
	                "ln -s r.md output/alias.md"));
	char *out = xasprintf("%s/out", h->run_dir);
	char *dest = xasprintf("%s/output/r.md", out);
	char *err = NULL;
	assert_int_equal(mkdir_p(out, NULL), 0);
	assert_int_equal(harness_fetch(h, "output/r.md", dest, &err), 0);
	char *got = read_file_max(dest, 100, NULL, NULL);
	assert_string_equal(got, "report\n");
	free(got);
	free(dest);
	/* a link to a file inside: its content */
	dest = xasprintf("%s/alias.md", out);
	assert_int_equal(harness_fetch(h, "output/alias.md", dest, &err), 0);
	got = read_file_max(dest, 100, NULL, NULL);
	assert_string_equal(got, "report\n");
	free(got);
	free(dest);
	/* a directory; its link out stays behind */
	dest = xasprintf("%s/figs", out);
	assert_int_equal(harness_fetch(h, "output/figs", dest, &err), 0);
	char *p = xasprintf("%s/p.png", dest);
	got = read_file_max(p, 100, NULL, NULL);
	assert_string_equal(got, "png\n");
	free(got);
	free(p);
	p = xasprintf("%s/evil", dest);
	struct stat st;
	assert_int_equal(lstat(p, &st), -1);
	free(p);
	/* again: merged into what is there */
	assert_int_equal(harness_fetch(h, "output/figs", dest, &err), 0);
	free(dest);
	/* missing */
	dest = xasprintf("%s/none", out);
	assert_int_equal(harness_fetch(h, "output/none", dest, &err), -1);
	assert_non_null(err);
	free(err);
	err = NULL;
	free(dest);
	/* persist */
	char *tgz = xasprintf("%s/workspace.tar.gz", h->run_dir);
	assert_int_equal(harness_export(h, tgz, &err), SBX_OK);
	char *list = xasprintf("tar -tzvf %s", tgz);
	FILE *f = popen(list, "r");
	struct buf b;
	buf_init(&b, 0);
	char line[512];
	while (fgets(line, sizeof line, f))
		buf_puts(&b, line);
	pclose(f);
	assert_non_null(strstr(buf_str(&b), " output/r.md\n"));
	assert_non_null(strstr(buf_str(&b), " input/tree/sub/n.txt\n"));
	assert_non_null(
	    strstr(buf_str(&b), " output/figs/evil -> /etc/passwd"));
	assert_null(strstr(buf_str(&b), "workspace/"));
	buf_free(&b);
	free(list);
	free(tgz);
	free(out);
	free(src);
	free(tree);
	free(csv);
	free(big);
}

/* Tars a hostile container could hand back, made in the container
 * with python's tarfile: each must be refused (or its link left out)
 * without a byte written outside the destination. */
static void test_hostile_tar(void **state)
{
	struct harness *h = *state;
	start(h);
	char *victim = xasprintf("%s/victim", h->run_dir);
	assert_int_equal(mkdir_p(victim, NULL), 0);
	struct {
		const char *what;
		const char *py; /* adds members to tar t */
		int refused;
	} cases[] = {
	    {"dot-dot",
	     "add(t, 'out/ok.txt', b'fine'); add(t, 'out/../../escape.txt', "
	     "b'pwned')",
	     1},
	    {"absolute",
	     "add(t, 'out/ok.txt', b'fine'); add(t, VICTIM + "
	     "'/abs.txt', b'pwned')",
	     1},
	    {"outside the name", "add(t, 'other/x.txt', b'pwned')", 1},
	    {"hard link out",
	     "i = tarfile.TarInfo('out/hl'); i.type = tarfile.LNKTYPE; "
	     "i.linkname = VICTIM + '/target'; t.addfile(i)",
	     1},
	    {"symlink out, then through it",
	     "i = tarfile.TarInfo('out/link'); i.type = tarfile.SYMTYPE; "
	     "i.linkname = VICTIM; t.addfile(i); "
	     "add(t, 'out/link/pwned.txt', b'pwned')",
	     0},
	    {"symlink dot-dot",
	     "i = tarfile.TarInfo('out/up'); i.type = tarfile.SYMTYPE; "
	     "i.linkname = '../../..'; t.addfile(i); "
	     "add(t, 'out/up/pwned2.txt', b'pwned')",
	     0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *cmd = xasprintf(
		    "python3 -c \"import io, sys, tarfile\n"
		    "VICTIM = '%s'\n"
		    "def add(t, name, data):\n"
		    "    i = tarfile.TarInfo(name); i.size = len(data)\n"
		    "    t.addfile(i, io.BytesIO(data))\n"
		    "b = io.BytesIO()\n"
		    "t = tarfile.open(fileobj=b, mode='w', "
		    "format=tarfile.GNU_FORMAT)\n"
		    "%s\n"
		    "t.close(); sys.stdout.buffer.write(b.getvalue())\"",
		    victim, cases[i].py);
		struct result r;
		harness_run(h, &r, cmd, 30);
		free(cmd);
		assert_int_equal(r.ex.exit_code, 0);
		char *tarp = xasprintf("%s/hostile.tar", h->run_dir);
		assert_int_equal(
		    write_file_atomic(tarp, r.out.data, r.out.len, NULL), 0);
		result_free(&r);
		int fd = open(tarp, O_RDONLY | O_CLOEXEC);
		char *dest = xasprintf("%s/dest%zu/out", h->run_dir, i);
		char *err = NULL;
		int rc = dk_extract_fd(fd, "out", dest, &err);
		close(fd);
		fprintf(stderr, "hostile %s: rc %d (%s)\n", cases[i].what, rc,
		        err ? err : "no error");
		if (cases[i].refused) {
			assert_int_equal(rc, -1);
			assert_non_null(strstr(err, "refused"));
			/* nothing half-extracted either */
			assert_int_equal(access(dest, F_OK), -1);
		} else {
			assert_int_equal(rc, 0);
			struct stat st;
			char *l = xasprintf("%s/link", dest);
			assert_true(lstat(l, &st) < 0 || !S_ISLNK(st.st_mode));
			free(l);
		}
		free(err);
		free(dest);
		free(tarp);
		/* never anything outside */
		const char *bad[] = {"escape.txt", "abs.txt", "pwned.txt",
		                     "pwned2.txt", "other"};
		char *dir = xasprintf("%s/dest%zu", h->run_dir, i);
		for (size_t k = 0; k < 5; k++) {
			char *p1 = xasprintf("%s/%s", victim, bad[k]);
			char *p2 = xasprintf("%s/%s", h->run_dir, bad[k]);
			char *p3 = xasprintf("%s/%s", dir, bad[k]);
			assert_int_equal(access(p1, F_OK), -1);
			assert_int_equal(access(p2, F_OK), -1);
			assert_int_equal(access(p3, F_OK), -1);
			free(p1);
			free(p2);
			free(p3);
		}
		assert_int_equal(access("/escape.txt", F_OK), -1);
		free(dir);
	}
	free(victim);
}

/* ---- escapes ---- */

static char *plant_secret(struct harness *h)
{
	snprintf(secret_value, sizeof secret_value, "TOPSECRET-%d-%lld",
	         (int)getpid(), (long long)now_ms());
	char *path = xasprintf("%s/secret.txt", h->run_dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(secret_value, f);
	fclose(f);
	return path;
}

static void test_host_files(void **state)
{
	struct harness *h = *state;
	char *secret = plant_secret(h);
	start(h);
	char *cmd = xasprintf("cat %s", secret);
	must_fail(h, cmd);
	free(cmd);
	cmd = xasprintf("cat /proc/1/root%s", secret);
	must_fail(h, cmd);
	free(cmd);
	must_fail(h, "cat ../secret.txt");
	must_fail(h, "ls /work");
	must_fail(h, "cat /dev/sda /dev/vda /dev/mem");
	must_fail(h, "ls /var/run/docker.sock /run/docker.sock");
	/* The container's own users, not the host's. */
	char host[256] = "";
	gethostname(host, sizeof host);
	char *o = run_out(h, "hostname");
	assert_string_equal(o, "assay\n");
	free(o);
	free(secret);
}

static void test_environment(void **state)
{
	struct harness *h = *state;
	setenv("ASSAY_PLANTED_SECRET", "sk-planted-4f9a2c", 1);
	setenv("OPENAI_API_KEY", "sk-planted-4f9a2c", 1);
	start(h);
	must_not_show(h,
	              "env; cat /proc/1/environ /proc/self/environ | tr '\\0' "
	              "'\\n'",
	              "sk-planted");
	must_not_show(h, "env", "ASSAY_PLANTED_SECRET");
	must_not_show(h, "env", "OPENAI_API_KEY");
	char *o = run_out(h, "echo $HOME $MPLBACKEND $LANG");
	assert_string_equal(o, "/workspace Agg C.UTF-8\n");
	free(o);
	unsetenv("ASSAY_PLANTED_SECRET");
	unsetenv("OPENAI_API_KEY");
}

static int listen_tcp(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	socklen_t len = sizeof a;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static void test_network(void **state)
{
	struct harness *h = *state;
	start(h);
	int port;
	int tcp = listen_tcp(&port);
	char *cmd =
	    xasprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED", port);
	must_fail(h, cmd);
	free(cmd);
	cmd = xasprintf("python3 -c 'import socket; "
	                "socket.create_connection((\"172.17.0.1\", %d), 2)'",
	                port);
	must_fail(h, cmd);
	free(cmd);
	must_fail(h, "exec 3<>/dev/tcp/1.1.1.1/53");
	must_fail(h, "getent hosts example.com");
	must_fail(h, "python3 -c 'import urllib.request as u; "
	             "u.urlopen(\"http://example.com\", timeout=3)'");
	/* Only a loopback of its own. */
	must_not_show(h, "cat /proc/net/dev", "eth");
	assert_int_equal(accept(tcp, NULL, NULL), -1);
	close(tcp);
}

static void test_write_outside(void **state)
{
	struct harness *h = *state;
	start(h);
	must_fail(h, "touch /usr/assay-escape");
	must_fail(h, "touch /etc/assay-escape");
	must_fail(h, "touch /assay-escape");
	must_fail(h, "mount -t tmpfs none /mnt");
	must_fail(h, "unshare -U true");
	must_fail(h, "unshare -m true");
	must_not_show(h, "grep CapEff /proc/self/status", "CapEff:\t000001");
	char *o = run_out(h, "grep -E 'CapEff|NoNewPrivs' /proc/self/status");
	assert_non_null(strstr(o, "CapEff:\t0000000000000000"));
	assert_non_null(strstr(o, "NoNewPrivs:\t1"));
	free(o);
	o = run_out(h, "echo x > /tmp/t && cat /tmp/t && echo y > w && cat w");
	assert_string_equal(o, "x\ny\n");
	free(o);
}

static void test_outlive_timeout(void **state)
{
	struct harness *h = *state;
	start(h);
	struct result r;
	int64_t t0 = now_ms();
	char *mark = sleeps("sleep @");
	/* Detach every way a shell can, ignore signals, clear the
	 * environment, then block. */
	char *bomb =
	    sleeps("(trap '' TERM HUP INT; sleep @1) & "
	           "(setsid sleep @2 &) & "
	           "nohup sleep @3 >/dev/null 2>&1 & disown; "
	           "env -i setsid sleep @6 >/dev/null 2>&1 & "
	           "python3 -c 'import os, time\n"
	           "if os.fork() == 0:\n"
	           "    os.setsid()\n"
	           "    if os.fork() == 0:\n"
	           "        os.execvp(\"sleep\", [\"sleep\", \"@4\"])\n"
	           "' ; exec sleep @5");
	harness_run(h, &r, bomb, 1);
	free(bomb);
	assert_true(r.done);
	assert_true(r.ex.timed_out);
	fprintf(stderr, "timeout: on_exit after %lld ms\n",
	        (long long)(r.t_exit - t0));
	/* a hang guard (it sleeps for days); how soon the kill comes:
	 * tests/bench/sandbox_bench.sh */
	assert_true(r.t_exit - t0 < 30000);
	assert_int_equal(wait_no_procs(mark, 2000), 0);
	result_free(&r);
	/* A command that ends normally leaves nothing behind either. */
	char *rest = sleeps("sleep @7 & (setsid sleep @8 &); echo ok");
	harness_run(h, &r, rest, 10);
	free(rest);
	assert_int_equal(r.ex.exit_code, 0);
	assert_int_equal(wait_no_procs(mark, 2000), 0);
	result_free(&r);
	free(mark);
	char *cmd = xasprintf("kill -0 %d", (int)getpid());
	must_fail(h, cmd);
	free(cmd);
	harness_run(h, &r, "ls /proc | grep -c '^[0-9]'", 10);
	assert_true(atoi(buf_str(&r.out)) < 10);
	result_free(&r);
}

static void test_process_bomb(void **state)
{
	struct harness *h = *state;
	h->cfg.nproc = 64;
	start(h);
	char marker[64];
	snprintf(marker, sizeof marker, "assay-bomb-%d", (int)getpid());
	char *cmd = xasprintf("bash -c ':(){ :|:& };:' %s; sleep 100", marker);
	struct result r;
	assert_non_null(harness_spawn(h, &r, cmd, 4));
	int most = 0;
	int64_t end = now_ms() + 30000;
	while (!r.done && now_ms() < end) {
		loop_once(h->loop, 100);
		int n = count_procs(marker);
		most = n > most ? n : most;
	}
	fprintf(stderr, "bomb: at most %d processes (limit %ld)\n", most,
	        h->cfg.nproc);
	assert_true(r.done);
	assert_true(r.ex.timed_out);
	assert_true(most > 0);
	assert_true(most <= h->cfg.nproc);
	assert_non_null(strstr(buf_str(&r.err), "fork"));
	assert_int_equal(wait_no_procs(marker, 5000), 0);
	result_free(&r);
	free(cmd);
	/* and the sandbox works afterwards, workspace intact */
	free(run_out(h, "echo kept > k.txt"));
	char *o = run_out(h, "cat k.txt");
	assert_string_equal(o, "kept\n");
	free(o);
}

static void test_memory(void **state)
{
	struct harness *h = *state;
	h->cfg.mem_mb = 512;
	start(h);
	struct result r;
	harness_run(h, &r, "python3 -c 'x = bytearray(10**11)'", 30);
	assert_int_not_equal(r.ex.exit_code, 0);
	assert_non_null(strstr(buf_str(&r.err), "MemoryError"));
	result_free(&r);
	harness_run(h, &r,
	            "python3 -c 'x = []\n"
	            "while True: x.append(bytearray(10**7))'",
	            60);
	assert_false(r.ex.timed_out);
	assert_int_not_equal(r.ex.exit_code, 0);
	assert_non_null(strstr(buf_str(&r.err), "MemoryError"));
	result_free(&r);
	/* Together over the container's limit: the OOM killer, and the
	 * result says so. Two of the three are killed; once two have
	 * ended, the one left holding its memory is not waited for (its
	 * 30 s sleep): the shell kills it, then itself. */
	harness_run(h, &r,
	            "for i in 1 2 3; do python3 -c 'import time\n"
	            "x = bytearray(300 * 2**20)\n"
	            "x[::4096] = b\"x\" * len(x[::4096])\n"
	            "time.sleep(30)' & done; wait -n; wait -n; "
	            "kill -9 $(jobs -p) 2>/dev/null; wait; kill -9 $$",
	            60);
	fprintf(stderr, "oom: exit %d signal %d: %s\n", r.ex.exit_code,
	        r.ex.signal, buf_str(&r.err));
	assert_int_not_equal(r.ex.exit_code, 0);
	assert_non_null(strstr(buf_str(&r.err), "out-of-memory"));
	result_free(&r);
}

static void test_cpu_limit(void **state)
{
	struct harness *h = *state;
	h->cfg.cpu_s = 1;
	start(h);
	struct result r;
	harness_run(h, &r, "python3 -c 'while True: pass'", 30);
	assert_false(r.ex.timed_out);
	assert_true(r.ex.signal == SIGXCPU || r.ex.signal == SIGKILL);
	assert_true(r.ex.duration_ms < 10000); /* a hang guard: 10 x 1 s */
	result_free(&r);
}

static void test_file_size_limit(void **state)
{
	struct harness *h = *state;
	h->cfg.fsize_mb = 1;
	start(h);
	struct result r;
	harness_run(h, &r, "head -c 3000000 /dev/zero > big", 30);
	assert_int_not_equal(r.ex.exit_code, 0);
	result_free(&r);
	char *o = run_out(h, "stat -c %s big");
	assert_true(atol(o) <= (1 << 20));
	free(o);
}

/* The container and its volume go at stop; nothing is left. */
static void test_stop_removes(void **state)
{
	struct harness *h = *state;
	start(h);
	struct docker *d = h->sbx->priv;
	char *id = xstrdup(d->id);
	struct result r;
	char *cmd = sleeps("sleep @9");
	assert_non_null(harness_spawn(h, &r, cmd, 60));
	int64_t end = now_ms() + 10000;
	while (!count_procs(cmd) && now_ms() < end)
		loop_once(h->loop, 50);
	assert_int_equal(harness_stop(h), SBX_OK);
	assert_true(
	    r.done); /* on_exit came, cancelled, before the stop's end */
	assert_true(r.ex.cancelled);
	result_free(&r);
	assert_int_equal(wait_no_procs(cmd, 3000), 0);
	free(cmd);
	cmd = xasprintf("docker ps -aq --no-trunc | grep -c %s", id);
	assert_int_not_equal(WEXITSTATUS(system(cmd)), 0);
	free(cmd);
	free(id);
}

/* ---- the asynchronous contract ---- */

/* Containers and volumes labelled with h's run. */
static int left_of_run(struct harness *h)
{
	const char *run = strrchr(h->run_dir, '/') + 1;
	char *cmd = xasprintf("echo $(( $(docker ps -aq --filter "
	                      "label=assay.run=%s | wc -l) + $(docker volume "
	                      "ls -q --filter label=assay.run=%s | wc -l) ))",
	                      run, run);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	free(cmd);
	return n;
}

/* "NAME.tmp.*" beside path. */
static int tmp_files(const char *path)
{
	char *cmd = xasprintf("ls -d '%s'.tmp.* 2>/dev/null | wc -l", path);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	free(cmd);
	return n;
}

/* Persisting a workspace that takes a while: the bytes go between the
 * daemon and two helpers the loop waits on; timers keep firing. */
static void test_export_async(void **state)
{
	struct harness *h = *state;
	start(h);
	free(run_out(h, "head -c 67108864 /dev/urandom > noise.bin"));
	char *tgz = xasprintf("%s/workspace.tar.gz", h->run_dir);
	/* (the helper named by this run's own path: other tests run
	 * helpers too) */
	char *helper = xasprintf("assay-archive repack %s", tgz);
	struct ticker t;
	ticker_start(&t, h->loop);
	t.marker = helper;
	int64_t t0 = now_ms();
	struct hdone d = {0};
	sbx_export_tar(h->sbx, tgz, hdone_fn, &d);
	int64_t call_ms = now_ms() - t0;
	wait_done(h, &d);
	ticker_stop(&t);
	fprintf(stderr,
	        "export of 64 MB: the call returned in %lld ms, the archive "
	        "took %lld ms, %d ticks while the helper ran, longest gap "
	        "%lld ms\n",
	        (long long)call_ms, (long long)(d.t - t0), t.ticks_alive,
	        (long long)t.max_gap);
	assert_int_equal(d.rc, SBX_OK);
	assert_true(call_ms < 1000); /* a hang guard */
	/* the loop ran its timers while the helpers worked (the figures:
	 * tests/bench/sandbox_bench.sh) */
	assert_true(t.ticks_alive >= 2);
	free(helper);
	struct stat st;
	assert_int_equal(stat(tgz, &st), 0);
	assert_true(st.st_size > (60 << 20));
	assert_int_equal(tmp_files(tgz), 0);
	done_free(&d);
	free(tgz);
}

/* Whether the listing is in pre-order with siblings in strcmp order
 * (what the local walk gives). */
static int preorder(const cJSON *list)
{
	const char *prev = NULL;
	const cJSON *e;
	cJSON_ArrayForEach(e, list)
	{
		const char *p = cJSON_GetObjectItem(e, "path")->valuestring;
		if (prev) {
			/* compare component by component */
			const char *a = prev, *b = p;
			for (;;) {
				size_t la = strcspn(a, "/"),
				       lb = strcspn(b, "/");
				int c = memcmp(a, b, la < lb ? la : lb);
				if (!c && la != lb)
					c = la < lb ? -1 : 1;
				if (c > 0)
					return 0;
				if (c < 0 || !a[la] || !b[lb])
					break;
				a += la + 1;
				b += lb + 1;
			}
		}
		prev = p;
	}
	return 1;
}

/* A listing too big to sort in-process is sorted by the helper: the
 * same order and fields, whole or cut at max. */
static void test_list_large(void **state)
{
	struct harness *h = *state;
	start(h);
	free(run_out(h, "for d in $(seq -w 1 12); do mkdir -p dir-$d/sub && "
	                "(cd dir-$d && for f in $(seq -w 1 300); do : > "
	                "file-with-a-rather-long-name-$f.txt; done; "
	                "echo hi > sub/x); done"));
	struct ticker t;
	ticker_start(&t, h->loop);
	struct hdone d = {0};
	int64_t t0 = now_ms();
	do_list(h, ".", 1, 100000, &d);
	ticker_stop(&t);
	fprintf(stderr, "list of %d entries: %lld ms, longest gap %lld ms\n",
	        cJSON_GetArraySize(d.list), (long long)(d.t - t0),
	        (long long)t.max_gap);
	assert_int_equal(d.rc, SBX_OK);
	assert_int_equal(cJSON_GetArraySize(d.list), 12 * (1 + 1 + 1 + 300));
	assert_true(preorder(d.list));
	const cJSON *first = cJSON_GetArrayItem(d.list, 0);
	assert_string_equal(cJSON_GetObjectItem(first, "path")->valuestring,
	                    "dir-01");
	assert_string_equal(cJSON_GetObjectItem(first, "type")->valuestring,
	                    "dir");
	done_free(&d);
	do_list(h, ".", 1, 1000, &d);
	assert_int_equal(d.rc, SBX_TRUNCATED);
	assert_int_equal(cJSON_GetArraySize(d.list), 1000);
	assert_true(preorder(d.list));
	assert_non_null(strstr(d.err, "stopped at 1000"));
	done_free(&d);
}

/* A stop cuts a persist in flight short: helpers killed and reaped, no
 * temporary left, the container and its volume removed. */
static void test_stop_in_flight(void **state)
{
	struct harness *h = *state;
	start(h);
	free(run_out(h, "head -c 67108864 /dev/urandom > noise.bin"));
	char *tgz = xasprintf("%s/workspace.tar.gz", h->run_dir);
	char *repack = xasprintf("assay-archive repack %s", tgz);
	struct docker *dk = h->sbx->priv;
	char *http = xasprintf("/containers/%s/archive", dk->id);
	struct hdone ex = {0}, ls = {0};
	sbx_export_tar(h->sbx, tgz, hdone_fn, &ex);
	ex.waiting = 1;
	/* stopped once the archive is under way */
	assert_true(wait_procs(h->loop, repack, 1, 30000) > 0);
	sbx_list(h->sbx, ".", 1, 1000, hdone_fn, &ls);
	ls.waiting = 1;
	assert_int_equal(harness_stop(h), SBX_OK);
	assert_int_equal(ex.called, 1);
	assert_false(ex.early || ls.early);
	if (ex.rc == SBX_FAILED)
		assert_non_null(
		    strstr(ex.err, "stopped before the archive finished"));
	else
		fprintf(stderr, "the archive was quicker than the stop\n");
	assert_int_equal(ls.called, 1);
	assert_int_equal(ls.rc, SBX_OK); /* a file operation drains */
	assert_int_equal(tmp_files(tgz), 0);
	/* (this run's helpers: other tests run some too) */
	assert_int_equal(wait_no_procs(repack, 2000), 0);
	assert_int_equal(wait_no_procs(http, 2000), 0);
	free(repack);
	free(http);
	assert_int_equal(left_of_run(h), 0);
	done_free(&ex);
	done_free(&ls);
	free(tgz);
}

/* sbx_free while the start is under way, just after the container
 * create went out: its completion comes once, inside sbx_free, and
 * nothing of the run is left on the daemon. */
static void test_free_during_start(void **state)
{
	struct harness *h = *state;
	char *err = NULL;
	h->sbx = sbx_new(&h->cfg, h->loop, h->run_dir, &err);
	assert_non_null(h->sbx);
	struct hdone d = {0};
	sbx_start(h->sbx, 1, hdone_fn, &d);
	d.waiting = 1;
	int64_t end = now_ms() + 30000;
	struct docker *dk = h->sbx->priv;
	while (!d.called && !dk->created && now_ms() < end)
		loop_once(h->loop, 5);
	assert_false(d.called);
	assert_true(dk->created);
	sbx_free(h->sbx);
	h->sbx = NULL;
	assert_int_equal(d.called, 1);
	assert_int_equal(d.rc, SBX_FAILED);
	assert_non_null(strstr(d.err, "before the start finished"));
	for (int i = 0; i < 10; i++)
		loop_once(h->loop, 20);
	assert_int_equal(d.called, 1);
	assert_int_equal(left_of_run(h), 0);
	done_free(&d);
}

/* NULL when a daemon answers (other failures are the tests' to
 * report); else why there is none. */
static char *daemon_unavailable(void)
{
	struct harness h;
	harness_config(&h);
	config_set(&h.cfg.sandbox, "docker");
	char *why = NULL;
	const char *state = getenv("ASSAY_DOCKERD_STATE");
	if (harness_start(&h) < 0 &&
	    strstr(h.start_err, "cannot reach the daemon"))
		why = xasprintf("no Docker daemon: %s (scripts/setup-docker "
		                "starts one; its log: %s/dockerd.log)",
		                h.start_err,
		                state && *state ? state : "/run/assay-dockerd");
	harness_free(&h);
	return why;
}

/* ---- the command runner ---- */

struct err_result {
	struct result r;
	char *error;
};

static void err_exit(void *arg, const struct sbx_exit *ex)
{
	struct err_result *e = arg;
	free(e->error);
	e->error = ex->error ? xstrdup(ex->error) : NULL;
	result_exit(&e->r, ex);
}

/* A command kills the runner: that command fails and says why, what it
 * left running is swept, and the next command gets a new runner. */
static void test_runner_death(void **state)
{
	struct harness *h = *state;
	const char *mode = getenv("ASSAY_DOCKER_EXEC");
	if (mode && !strcmp(mode, "exec"))
		skip(); /* does not apply: no runner asked for */
	start(h);
	char *o = run_out(h, "echo warm");
	assert_string_equal(o, "warm\n");
	free(o);
	/* The runner's pipes and environment are out of a command's reach
	 * (it is not dumpable): no forged frames, no peeking at its stdin.
	 * (Each exits 0 when no runner is found: a failure then.) The
	 * runner is the top of its exec (parent 0); the shepherds of the
	 * commands are forks of it. */
	const char *find =
	    "n=assay-run; n=${n}ner; r=; for p in /proc/[0-9]*; "
	    "do { read -r l <$p/stat; } 2>/dev/null || continue; "
	    "set -- ${l##*) }; [ \"$2\" = 0 ] || continue; "
	    "case \"$(tr '\\0' ' ' <$p/cmdline 2>/dev/null)\" "
	    "in *\"$n\"*) r=$p ;; esac; done; test -n \"$r\" || "
	    "exit 0; ";
	char *c1 = xasprintf("%secho forged >$r/fd/1", find);
	char *c2 = xasprintf("%sexec 3<$r/fd/0", find);
	char *c3 = xasprintf("%scat $r/environ", find);
	must_fail(h, c1);
	must_fail(h, c2);
	must_fail(h, c3);
	free(c1);
	free(c2);
	free(c3);
	char *mark = sleeps("sleep @");
	/* (the name in two pieces: this command's own bash must not match) */
	char *cmd =
	    sleeps("sleep @1 & n=assay-run; n=${n}ner; "
	           "for p in /proc/[0-9]*; do "
	           "{ read -r l <$p/stat; } 2>/dev/null || continue; "
	           "set -- ${l##*) }; [ \"$2\" = 0 ] || continue; "
	           "case \"$(tr '\\0' ' ' <$p/cmdline 2>/dev/null)\" in "
	           "*\"$n\"*) kill -9 ${p#/proc/} ;; esac; done; "
	           "sleep @2");
	struct err_result e = {0};
	result_init(&e.r);
	struct sbx_exec_req req = {.command = cmd, .timeout_s = 30};
	struct sbx_exec_obs obs = {result_output, err_exit, &e};
	char *err = NULL;
	assert_non_null(sbx_exec(h->sbx, &req, &obs, &err));
	harness_wait(h, &e.r, 20000);
	assert_true(e.r.done);
	if (!e.error || !strstr(e.error, "runner") || !strstr(e.error, "died"))
		fail_msg("no word of the runner's death: %s",
		         e.error ? e.error : "(no error)");
	/* the sweep is an exec of its own, on the loop */
	int64_t end = now_ms() + 8000;
	while (count_procs(mark) > 0 && now_ms() < end)
		loop_once(h->loop, 50);
	assert_int_equal(count_procs(mark), 0);
	o = run_out(h, "echo again");
	assert_string_equal(o, "again\n");
	free(o);
	result_free(&e.r);
	free(e.error);
	free(cmd);
	free(mark);
}

/* What a running command started in a session of its own is its own
 * until it ends: another command ending meanwhile (its sweep) leaves
 * it alone; its own end takes it. */
static void test_concurrent_orphans(void **state)
{
	struct harness *h = *state;
	start(h);
	char *mark = sleeps("sleep @");
	char *orphan = sleeps("sleep @1");
	/* a goes on until b has ended: then a third command lets it look */
	char *a = sleeps("(setsid sleep @1 & echo $! >/tmp/orphan); "
	                 "for i in $(seq 1200); do [ -e b-ended ] && break; "
	                 "sleep 0.05; done; "
	                 "kill -0 \"$(cat /tmp/orphan)\" && echo alive");
	struct result ra, rb, rc;
	assert_non_null(harness_spawn(h, &ra, a, 90));
	assert_true(wait_procs(h->loop, orphan, 1, 30000) > 0);
	harness_run(h, &rb, "echo b", 10);
	assert_int_equal(rb.ex.exit_code, 0);
	assert_false(ra.done);
	harness_run(h, &rc, "touch b-ended", 10);
	assert_int_equal(rc.ex.exit_code, 0);
	harness_wait(h, &ra, 60000);
	assert_true(ra.done);
	assert_int_equal(ra.ex.exit_code, 0);
	assert_string_equal(buf_str(&ra.out), "alive\n");
	assert_int_equal(wait_no_procs(mark, 3000), 0);
	result_free(&ra);
	result_free(&rb);
	result_free(&rc);
	free(a);
	free(orphan);
	free(mark);
}

/* A command stops the runner (kill -STOP): the kill frame of its
 * cancel is never read, and after the grace period the container is
 * killed and started again. That restart runs on the loop: a timer
 * keeps firing while it is under way, and a command started meanwhile
 * waits for it and then runs; the workspace (a volume) is intact. */
struct restart_watch {
	struct harness *h;
	struct docker *d;
	int ticks, spawned;
	struct result queued;
	uint64_t timer;
};

static void restart_tick(void *arg)
{
	struct restart_watch *w = arg;
	if (w->d->restarting) {
		w->ticks++;
		if (!w->spawned &&
		    harness_spawn(w->h, &w->queued, "echo queued", 30))
			w->spawned = 1;
	}
	w->timer = loop_timer_add(w->h->loop, 20, restart_tick, w);
}

static void test_restart_async(void **state)
{
	struct harness *h = *state;
	const char *mode = getenv("ASSAY_DOCKER_EXEC");
	if (mode && !strcmp(mode, "exec"))
		skip(); /* does not apply: no runner to stop */
	setenv("ASSAY_LOG_STDERR", "1", 1); /* what the backend did, shown */
	start(h);
	free(run_out(h, "echo kept > k.txt"));
	/* The command stops the runner, then shows it has (a sleep the
	 * host sees); only then is it cancelled, so the kill frame always
	 * meets a stopped runner (a timeout raced the scan of /proc on a
	 * loaded machine: the runner read the frame, no restart). The
	 * sleep's argument is put together by the command: the command
	 * line of its own bash must not carry the mark, or the wait below
	 * ends before the runner is stopped. */
	char *mark = sleeps("sleep @3");
	char *cmd =
	    sleeps("n=assay-run; n=${n}ner; for p in /proc/[0-9]*; do "
	           "{ read -r l <$p/stat; } 2>/dev/null || continue; "
	           "set -- ${l##*) }; [ \"$2\" = 0 ] || continue; "
	           "case \"$(tr '\\0' ' ' <$p/cmdline 2>/dev/null)\" in "
	           "*\"$n\"*) kill -STOP ${p#/proc/} ;; esac; done; "
	           "m=@; sleep ${m}3");
	struct restart_watch w = {.h = h, .d = h->sbx->priv};
	w.timer = loop_timer_add(h->loop, 20, restart_tick, &w);
	struct result r;
	struct sbx_exec *e = harness_spawn(h, &r, cmd, 120);
	assert_non_null(e);
	assert_true(wait_procs(h->loop, mark, 1, 30000) > 0);
	assert_false(r.done);
	sbx_exec_cancel(e);
	/* the command's end can come before the restart is over (the
	 * container's kill ends it): wait for both */
	int64_t end = now_ms() + 60000;
	while ((!r.done || w.d->restarting || (w.spawned && !w.queued.done)) &&
	       now_ms() < end)
		loop_once(h->loop, 50);
	loop_timer_cancel(h->loop, w.timer);
	assert_true(r.done);
	assert_true(r.ex.cancelled);
	fprintf(stderr,
	        "restart: %d ticks of a 20 ms timer while it ran (exit %d, "
	        "signal %d, cancelled %d, error %s)\n",
	        w.ticks, r.ex.exit_code, r.ex.signal, r.ex.cancelled,
	        r.ex.error ? r.ex.error : "none");
	unsetenv("ASSAY_LOG_STDERR");
	/* the loop ran during the restart (how often its timer fired
	 * depends on how long the restart took: a figure, printed) */
	assert_true(w.ticks >= 1);
	assert_true(w.spawned);
	assert_true(w.queued.done);
	assert_int_equal(w.queued.ex.exit_code, 0);
	assert_string_equal(buf_str(&w.queued.out), "queued\n");
	assert_int_equal(wait_no_procs(mark, 3000), 0);
	char *o = run_out(h, "cat k.txt");
	assert_string_equal(o, "kept\n");
	free(o);
	result_free(&r);
	result_free(&w.queued);
	free(cmd);
	free(mark);
}

/* ASSAY_DOCKER_EXEC=exec: an exec per command, as before the runner. */
static void test_exec_per_command(void **state)
{
	struct harness *h = *state;
	setenv("ASSAY_DOCKER_EXEC", "exec", 1);
	start(h);
	struct result r;
	harness_run(h, &r, "echo out; echo err >&2; pwd; exit 3", 10);
	assert_int_equal(r.ex.exit_code, 3);
	assert_string_equal(buf_str(&r.out), "out\n/workspace\n");
	assert_string_equal(buf_str(&r.err), "err\n");
	result_free(&r);
	harness_run(h, &r, "kill -TERM $$", 10);
	assert_int_equal(r.ex.signal, SIGTERM);
	result_free(&r);
	char *mark = sleeps("sleep @");
	char *cmd = sleeps("(setsid sleep @1 &); sleep @2");
	harness_run(h, &r, cmd, 1);
	assert_true(r.ex.timed_out);
	assert_int_equal(wait_no_procs(mark, 3000), 0);
	result_free(&r);
	/* no runner was started: only the commands' own processes */
	char *o =
	    run_out(h, "n=assay-run; n=${n}ner; c=0; for p in /proc/[0-9]*; "
	               "do case \"$(tr '\\0' ' ' <$p/cmdline 2>/dev/null)\" "
	               "in python3*\"$n\"*) c=$((c + 1)) ;; esac; done; "
	               "echo $c");
	assert_string_equal(o, "0\n");
	free(o);
	free(cmd);
	free(mark);
}

static int teardown_env(void **state)
{
	unsetenv("ASSAY_DOCKER_EXEC");
	return teardown(state);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	char *why = daemon_unavailable();
	if (why) {
		int rc = test_skip_all(why);
		free(why);
		return rc;
	}
	const struct CMUnitTest tests[] = {
	    T(test_exec_basics),
	    T(test_live_output),
	    T(test_stdin),
	    T(test_cancel),
	    T(test_files),
	    T(test_file_tools_and_symlinks),
	    T(test_stage_fetch_export),
	    T(test_hostile_tar),
	    T(test_host_files),
	    T(test_environment),
	    T(test_network),
	    T(test_write_outside),
	    T(test_outlive_timeout),
	    T(test_process_bomb),
	    T(test_memory),
	    T(test_cpu_limit),
	    T(test_file_size_limit),
	    T(test_stop_removes),
	    T(test_runner_death),
	    T(test_concurrent_orphans),
	    T(test_restart_async),
	    T(test_export_async),
	    T(test_list_large),
	    T(test_stop_in_flight),
	    T(test_free_during_start),
	    cmocka_unit_test_setup_teardown(test_exec_per_command, setup,
	                                    teardown_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
