/* assay_archive.c: the `assay-archive` helper process. Archive work
 * runs here, not in assay: it keeps libarchive (and the ICU and XML
 * libraries it drags in) out of the main process's memory and start-up,
 * and a slow or hostile tree cannot stall the event loop.
 *
 *   assay-archive create OUT.tar.gz DIR
 *       writes DIR (symlinks stored, never followed) to OUT atomically;
 *       exit 3 when written without entries beyond the walk's limits.
 *       Progress lines {"progress","done","total"} on stdout, at most
 *       two a second.
 *   assay-archive list DIR REL RECURSIVE MAX
 *       the entries under REL (confined to DIR) as one JSON object a
 *       line on stdout, as the local sandbox's list reports them; exit
 *       3 when cut at MAX entries.
 *   assay-archive sortlist PREFIX MAX FULL
 *       the docker fileop's NUL-separated find records on stdin (FULL 1:
 *       they were cut) as list does, sorted; PREFIX is what they lie
 *       under ("" for the workspace).
 *   assay-archive fetch DIR REL DEST
 *       copies REL (confined to DIR, never through a link) to DEST.
 *   assay-archive hash CACHE SRC...
 *       the SHA-256 of each input, cached (archive_hash.c).
 *   create, list, fetch, hash and repack may take `--mounts JSON`
 *   before their arguments (after the command): the mounted inputs of
 *   the workspace (assay/path.h), left out of the archive (create,
 *   repack: their mount points), read from their sources by list and
 *   fetch as the sandbox sees them, and their hidden paths left out of
 *   a directory's hash.
 *   assay-archive stage WORKSPACE OUTDIR SRC DEST...
 *       copies the inputs SRC (to DEST; "" for input/<name>) into
 *       WORKSPACE, leaving OUTDIR ("" for none) out.
 *   assay-archive http [--unix SOCK] [--ca F --cert F --key F]
 *                      [--insecure] [--progress SUBJECT [--total N]]
 *                      [--headers FILE] [--multipart PATH]
 *                      GET|PUT|POST URL
 *       one request to the Docker daemon: GET writes the body to
 *       stdout, PUT sends stdin as a tar (with --progress, PUT prints
 *       progress lines on stdout as create's: the bytes sent, of N, 0
 *       when not known, and the whole at the end). Exit 3 when the daemon
 *       answered with an error (its message on stderr), 4 when no
 *       answer came, 5 when stdout was closed (the reader gave up), 6
 *       when the transfer broke after a good answer. --headers: more
 *       request headers, one "Name: value" a line of FILE (an
 *       OpenSandbox endpoint's, kept out of argv); --multipart: the
 *       body is execd's upload form for sandbox path PATH, stdin its
 *       file part (sent chunked).
 *   assay-archive pack [--skip DIR] SRC DEST...
 *       the inputs as a tar on stdout (the docker backend's staging).
 *   assay-archive extract [--progress SUBJECT] DEST NAME
 *       a tar on stdin whose entries all lie under NAME into DEST,
 *       refusing absolute paths, "..", and links out (docker fetch);
 *       with --progress, progress lines on stdout naming SUBJECT.
 *   assay-archive repack OUT.tar.gz STRIP
 *       a tar on stdin to OUT without the leading STRIP/ (docker
 *       persist), without the mounted inputs' places (--mounts);
 *       progress lines on stdout as create's (total 0 until the end).
 *   assay-archive delta --tar RECORDS OUT.tar.gz
 *       the same, the records read from the file RECORDS and the files
 *       from the tar on stdin (an OpenSandbox sandbox's, made with
 *       `tar --null --no-recursion -T`: one entry each, in order).
 *   assay-archive delta [http options] PREFIX ROOT OUT.tar.gz
 *       what one call changed, as a delta over the whole archive
 *       (archive_delta.c): stdin holds NUL-ended records, a kind byte
 *       and a workspace path (f: a file or link, read with a GET of
 *       PREFIX + ROOT/path; d: a directory made; x: gone). Progress
 *       lines as repack's.
 *   assay-archive members ARCHIVE.tar.gz DIR MAX NAME...
 *       the regular files NAME... of a persisted workspace, each of at
 *       most MAX bytes, into the empty directory DIR (export); a name
 *       not written is reported on stdout as "NAME<TAB>reason".
 *   assay-archive spare ROOM
 *       waits for one of the commands above on stdin (its arguments,
 *       each NUL-ended, then EOF) and runs it, shown in ps as if
 *       started with it (sandbox/child.c starts one ahead of need).
 *   assay-archive restore ARCHIVE.tar.gz
 *       a persisted workspace (maybe changed since: it lies in a run dir)
 *       as a clean tar on stdout, for PUT .../archive (docker resume).
 *       Every entry is checked before a byte is written: relative names
 *       without "..", no entry under a symbolic link of the archive,
 *       hard links only to earlier files, no device node, no setuid or
 *       setgid file. Headers are rewritten (no owners, xattrs or ACLs).
 *       Deltas beside it (workspace.d/, layers.c) are folded into it
 *       first; members folds them into a private copy.
 *
 * Exit 0 on success; else a one-line reason on stderr and exit 1. The
 * stream commands run under resource limits: they read what a
 * container made. */
#include "assay/config.h"
#include "assay/http.h"
#include "assay/util.h"
#include "helpers/archive_delta.h"
#include "helpers/archive_hash.h"
#include "helpers/archive_restore.h"
#include "sandbox/tar.h"
#include "sandbox/internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define HELPER_MEM (1024L << 20)
#define HELPER_CPU_S 3600
#define HELPER_FILE (64LL << 30)
#define MEMBERS_MAX 256           /* names asked for at once */
#define MEMBERS_ENTRIES 1000000   /* archive entries read at most */
#define MEMBERS_CHUNK (64u << 10) /* read block */

/* Lower a resource limit to v (never raise it). */
static void limit(int res, rlim_t v)
{
	struct rlimit rl;
	if (getrlimit(res, &rl) == 0 &&
	    (rl.rlim_max == RLIM_INFINITY || v < rl.rlim_max)) {
		rl.rlim_cur = rl.rlim_max = v;
		setrlimit(res, &rl);
	}
}

/* The command line this helper takes. */
int archive_usage(void)
{
	fprintf(stderr, "usage: assay-archive create OUT.tar.gz DIR\n"
	                "       assay-archive list DIR REL RECURSIVE MAX\n"
	                "       assay-archive sortlist PREFIX MAX FULL\n"
	                "       assay-archive fetch DIR REL DEST\n"
	                "       assay-archive stage WORKSPACE OUTDIR SRC "
	                "DEST...\n"
	                "       assay-archive http [--unix SOCK] [--ca F "
	                "--cert F --key F] [--insecure] [--progress SUBJECT "
	                "[--total N]] [--headers FILE] [--multipart PATH] "
	                "GET|PUT|POST URL\n"
	                "       assay-archive pack [--skip DIR] SRC DEST...\n"
	                "       assay-archive extract [--progress SUBJECT] "
	                "DEST NAME < TAR\n"
	                "       assay-archive repack OUT.tar.gz STRIP < TAR\n"
	                "       assay-archive members ARCHIVE.tar.gz DIR MAX "
	                "NAME...\n"
	                "       assay-archive restore ARCHIVE.tar.gz > TAR\n"
	                "       assay-archive hash CACHE SRC...\n"
	                "       assay-archive delta [--unix SOCK] ... PREFIX "
	                "ROOT OUT.tar.gz\n");
	return 2;
}

static int done(int rc, char *err)
{
	if (rc < 0)
		fprintf(stderr, "%s\n", err ? err : "archive failed");
	free(err);
	return rc < 0 ? 1 : 0;
}

/* Exit status for rc: 0 whole, 3 cut at a limit (reason on stderr), 1
 * failed. */
static int done_rc(int rc, char *err)
{
	if (rc == SBX_OK) {
		free(err);
		return 0;
	}
	fprintf(stderr, "%s\n", err ? err : "archive failed");
	free(err);
	return rc == SBX_TRUNCATED ? 3 : 1;
}

/* The mounted inputs of the workspace (--mounts JSON before the
 * arguments of create, list, fetch, hash and repack): mapped or left out as the
 * sandbox does (hostfs.c). */
static struct path_mounts mounts;

/* Take `--mounts JSON` off the front of argv (*argc, *argv moved past
 * it). -1 when it is malformed. */
static int take_mounts(int *argc, char ***argv)
{
	if (*argc < 4 || strcmp((*argv)[2], "--mounts"))
		return 0;
	cJSON *j = cJSON_Parse((*argv)[3]);
	char *err = NULL;
	int rc = path_mounts_from_json(&mounts, j, &err);
	cJSON_Delete(j);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		free(err);
		return -1;
	}
	(*argv)[3] = (*argv)[1]; /* the command moves up two */
	*argv += 2;
	*argc -= 2;
	return 0;
}

static int open_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
	return fd;
}

/* extract's progress subject (--progress), one a process */
static const char *extract_subject;

/* A progress line on stdout (the sandbox relays it): subject, bytes
 * done of total (0: not known). */
void archive_progress_line(const char *subject, double done, double total)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "progress", subject);
	cJSON_AddNumberToObject(o, "done", done);
	cJSON_AddNumberToObject(o, "total", total);
	char *j = cJSON_PrintUnformatted(o);
	printf("%s\n", j);
	fflush(stdout);
	free(j);
	cJSON_Delete(o);
}

/* extract's progress. */
static void extract_progress(double done, double total)
{
	archive_progress_line(extract_subject, done, total);
}

/* create's progress: a JSON line on stdout (the sandbox relays it). */
static void create_progress(double done, double total)
{
	printf(
	    "{\"progress\":\"the workspace\",\"done\":%.0f,\"total\":%.0f}\n",
	    done, total);
	fflush(stdout);
}

/* create OUT DIR: see the top of the file. */
static int create(const char *out, const char *dir)
{
	int fd = open_dir(dir);
	if (fd < 0)
		return 1;
	char *err = NULL;
	int rc = sbx_host_export_tar(fd, &mounts, out, create_progress, &err);
	close(fd);
	return done_rc(rc, err);
}

/* ---- list, fetch, stage: the local sandbox's slow file work ---- */

struct list_out {
	int broken; /* stdout failed (the reader gave up) */
};

/* One listing entry as a line of JSON. */
static void list_print(void *arg, cJSON *entry)
{
	struct list_out *o = arg;
	char *text = cJSON_PrintUnformatted(entry);
	cJSON_Delete(entry);
	if (!o->broken && (fputs(text, stdout) < 0 || putchar('\n') < 0))
		o->broken = 1;
	free(text);
}

/* list DIR REL RECURSIVE MAX: see the top of the file. */
static int list(const char *dir, const char *rel, const char *recs,
                const char *maxs)
{
	char *end = NULL, *err = NULL;
	errno = 0;
	unsigned long long max = strtoull(maxs, &end, 10);
	if (errno || !*maxs || *end) {
		fprintf(stderr, "list: MAX must be a count, not '%s'\n", maxs);
		return 2;
	}
	int fd = open_dir(dir);
	if (fd < 0)
		return 1;
	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	struct list_out o = {0};
	int truncated = 0;
	cJSON *arr = sbx_host_list(fd, &mounts, rel, atoi(recs), (size_t)max,
	                           &truncated, list_print, &o, &err);
	close(fd);
	int rc = arr ? SBX_OK : SBX_FAILED;
	cJSON_Delete(arr);
	if (fflush(stdout) != 0 || o.broken) {
		free(err);
		return 5;
	}
	if (rc == SBX_OK && truncated) {
		rc = SBX_TRUNCATED;
		set_err(&err, "listing of %s stopped at %llu entries", rel,
		        max);
	}
	return done_rc(rc, err);
}

#define SORTLIST_IN_MAX (257u << 20) /* the fileop's output bound */

/* sortlist PREFIX MAX FULL: see the top of the file. */
static int sortlist(const char *prefix, const char *maxs, const char *full)
{
	char *end = NULL;
	errno = 0;
	unsigned long long max = strtoull(maxs, &end, 10);
	if (errno || !*maxs || *end)
		return archive_usage();
	struct buf in;
	buf_init(&in, SORTLIST_IN_MAX);
	char chunk[65536];
	for (;;) {
		ssize_t r = read(0, chunk, sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "sortlist: stdin: %s\n",
			        strerror(errno));
			buf_free(&in);
			return 1;
		}
		if (r == 0)
			break;
		if (buf_append(&in, chunk, (size_t)r) < 0) {
			fprintf(stderr,
			        "sortlist: more than %u bytes of "
			        "records\n",
			        SORTLIST_IN_MAX);
			buf_free(&in);
			return 1;
		}
	}
	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	int truncated = 0;
	cJSON *arr =
	    sbx_listing_sort(in.data ? in.data : "", in.len, atoi(full), prefix,
	                     (size_t)max, &truncated);
	buf_free(&in);
	struct list_out o = {0};
	cJSON *e;
	while ((e = cJSON_DetachItemFromArray(arr, 0)))
		list_print(&o, e);
	cJSON_Delete(arr);
	if (fflush(stdout) != 0 || o.broken)
		return 5;
	return truncated ? 3 : 0;
}

/* fetch DIR REL DEST: see the top of the file. */
static int fetch(const char *dir, const char *rel, const char *dest)
{
	int fd = open_dir(dir);
	if (fd < 0)
		return 1;
	char *err = NULL;
	int rc = sbx_host_fetch(fd, &mounts, rel, dest, &err);
	close(fd);
	return done(rc, err);
}

/* stage WORKSPACE OUTDIR SRC DEST...: see the top of the file. */
static int stage(const char *ws, const char *out_dir, char **pairs, int n)
{
	if (n % 2)
		return archive_usage();
	struct config_input *in = xcalloc((size_t)n / 2 + 1, sizeof *in);
	for (int i = 0; i < n / 2; i++) {
		in[i].src = pairs[2 * i];
		in[i].dest = *pairs[2 * i + 1] ? pairs[2 * i + 1] : NULL;
	}
	char *err = NULL;
	int rc = sbx_stage_inputs(in, (size_t)n / 2, *out_dir ? out_dir : NULL,
	                          ws, &err);
	free(in);
	return done(rc, err);
}

/* ---- members ---- */

static const char *bad_name(const char *p)
{
	return archive_bad_name(p, 0);
}

struct member {
	const char *name;
	const char *why; /* NULL once written */
	char *why_owned;
	int blocked; /* a parent is a link or a file in the archive */
};

static void member_why(struct member *m, char *why)
{
	free(m->why_owned);
	m->why = m->why_owned = why;
}

/* Copy the current entry's data into the file `name` on disk, at most
 * max bytes. 0 when written; 1 with *why when this member could not be
 * (what was begun is removed); -1 with *err when the archive cannot be
 * read on. */
static int member_copy(struct archive *in, struct archive *out,
                       const char *name, la_int64_t max, char **why, char **err)
{
	struct archive_entry *d = archive_entry_new();
	archive_entry_set_pathname(d, name);
	archive_entry_set_filetype(d, AE_IFREG);
	archive_entry_set_perm(d, 0644);
	const void *buf;
	size_t size;
	la_int64_t off;
	int rc = 1, r, wrote = 0;
	if (archive_write_header(out, d) < ARCHIVE_WARN) {
		*why = xasprintf("cannot be written: %s",
		                 archive_error_string(out));
		goto out;
	}
	wrote = 1;
	while ((r = archive_read_data_block(in, &buf, &size, &off)) ==
	       ARCHIVE_OK) {
		if (off < 0 || off + (la_int64_t)size > max) {
			*why = xasprintf("over the limit of %lld bytes",
			                 (long long)max);
			goto out;
		}
		if (archive_write_data_block(out, buf, size, off) !=
		    ARCHIVE_OK) {
			*why = xasprintf("cannot be written: %s",
			                 archive_error_string(out));
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		rc = set_err(err, "members: %s", archive_error_string(in));
		goto out;
	}
	if (archive_write_finish_entry(out) != ARCHIVE_OK) {
		*why = xasprintf("cannot be written: %s",
		                 archive_error_string(out));
		goto out;
	}
	wrote = 0;
	rc = 0;
out:
	if (wrote) {
		archive_write_finish_entry(out);
		unlink(name);
	}
	archive_entry_free(d);
	return rc;
}

/* One archive entry against the names asked for (the last entry of a
 * name wins, as when a tar is extracted). */
static int member_entry(struct archive *in, struct archive *out,
                        struct archive_entry *e, struct member *ms, int n,
                        la_int64_t max, char **err)
{
	const char *path = archive_entry_pathname(e);
	if (!path)
		return 0;
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	mode_t type = archive_entry_filetype(e);
	size_t len = strlen(path);
	while (len && path[len - 1] == '/')
		len--; /* "out/" as a link is still out */
	struct member *m = NULL;
	for (int i = 0; i < n; i++) {
		if (!strcmp(ms[i].name, path))
			m = &ms[i];
		else if (type != AE_IFDIR && !ms[i].blocked && len &&
		         !strncmp(ms[i].name, path, len) &&
		         ms[i].name[len] == '/') {
			/* whatever the order, a tar extracted would put the
			 * member through this link (or fail on this file) */
			ms[i].blocked = 1;
			member_why(
			    &ms[i],
			    xasprintf("lies under %.*s, %s in the archive",
			              (int)len, path,
			              type == AE_IFLNK ? "a symbolic link"
			                               : "not a directory"));
			unlink(ms[i].name);
		}
	}
	if (!m || m->blocked)
		return 0;
	const char *kind = NULL;
	if (archive_entry_hardlink(e))
		kind = "a hard link";
	else if (type == AE_IFLNK)
		kind = "a symbolic link";
	else if (type == AE_IFDIR)
		kind = "a directory";
	else if (type != AE_IFREG)
		kind = "a special file";
	if (!kind && archive_entry_size(e) > max) {
		member_why(m, xasprintf("%lld bytes, over the limit of %lld",
		                        (long long)archive_entry_size(e),
		                        (long long)max));
		unlink(m->name); /* an earlier entry of that name */
		return 0;
	}
	if (kind) {
		member_why(m, xasprintf("%s in the archive, not a file", kind));
		unlink(m->name);
		return 0;
	}
	char *why = NULL;
	int r = member_copy(in, out, m->name, max, &why, err);
	if (r < 0)
		return -1;
	member_why(m, why);
	if (why)
		unlink(m->name); /* an earlier entry of that name */
	return 0;
}

/* members ARCHIVE DIR MAX NAME...: see the top of the file. Files are
 * written below DIR by libarchive with its secure options (and only
 * under names checked above), never as links. */
static int members(const char *archive, const char *dir, const char *maxs,
                   char **names, int n)
{
	char *err = NULL, *end = NULL;
	struct member ms[MEMBERS_MAX] = {0};
	struct archive *in = NULL, *out = NULL;
	int rc = -1, r, fd = -1;
	errno = 0;
	long long max = strtoll(maxs, &end, 10);
	if (errno || !*maxs || *end || max < 0) {
		set_err(&err, "members: MAX must be a byte count, not '%s'",
		        maxs);
		goto out;
	}
	if (n < 1 || n > MEMBERS_MAX) {
		set_err(&err, "members: between 1 and %d names, not %d",
		        MEMBERS_MAX, n);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const char *why = bad_name(names[i]);
		if (why) {
			set_err(&err,
			        "members: name '%s' refused: %s (names are "
			        "relative paths inside the archive)",
			        names[i], why);
			goto out;
		}
		ms[i].name = names[i];
		ms[i].why = "not in the archive";
	}
	in = archive_read_new();
	out = archive_write_disk_new();
	archive_read_support_format_tar(in);
	archive_read_support_filter_gzip(in);
	archive_read_support_filter_zstd(in);
	archive_read_support_filter_none(in);
	archive_write_disk_set_options(
	    out, ARCHIVE_EXTRACT_SECURE_NODOTDOT |
	             ARCHIVE_EXTRACT_SECURE_SYMLINKS |
	             ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
	/* a killed docker run's deltas are folded into a private copy
	 * (the run may be someone else's to write) */
	char *folded = xasprintf("%s/.assay-fold%s", dir,
	                         sbx_archive_zstd() ? ".tar.zst" : ".tar.gz");
	int nf = archive_fold(archive, folded, &err);
	fd = nf < 0 ? -1
	            : open_regular(nf ? folded : archive, O_RDONLY | O_NOFOLLOW,
	                           0, &err);
	if (nf > 0)
		unlink(folded);
	free(folded);
	if (nf < 0)
		goto out;
	if (fd < 0 ||
	    archive_read_open_fd(in, fd, MEMBERS_CHUNK) != ARCHIVE_OK) {
		set_err(&err, "members: %s: %s", archive,
		        fd < 0 ? strerror(errno) : archive_error_string(in));
		goto out;
	}
	if (chdir(dir) < 0) {
		set_err(&err, "members: %s: %s", dir, strerror(errno));
		goto out;
	}
	struct archive_entry *e;
	size_t count = 0;
	while ((r = tar_next_header(in, &e)) == ARCHIVE_OK) {
		if (++count > MEMBERS_ENTRIES) {
			set_err(&err, "members: %s has more than %d entries",
			        archive, MEMBERS_ENTRIES);
			goto out;
		}
		if (member_entry(in, out, e, ms, n, max, &err) < 0)
			goto out;
	}
	if (r != ARCHIVE_EOF) {
		set_err(&err, "members: %s: %s", archive,
		        archive_error_string(in));
		goto out;
	}
	if (archive_write_close(out) != ARCHIVE_OK) {
		set_err(&err, "members: %s", archive_error_string(out));
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (ms[i].why)
			printf("%s\t%s\n", ms[i].name, ms[i].why);
	if (fflush(stdout) != 0) {
		set_err(&err, "members: stdout: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	for (int i = 0; i < n && i < MEMBERS_MAX; i++)
		free(ms[i].why_owned);
	archive_read_free(in);
	archive_write_free(out);
	if (fd >= 0)
		close(fd);
	return done(rc, err);
}

/* `assay-archive spare ROOM`: started ahead of need (the spare of
 * sandbox/child.c). Its command's arguments come on stdin, each
 * NUL-ended, up to EOF (none: assay is gone, exit 0); *argc and *argv
 * become them, and they replace "spare ROOM" in the command line ps
 * and /proc show (cut to ROOM's length), as if it was started so. */
static void spare_command(int *argc, char ***argv)
{
	/* static, and one object whose address is taken: the new argv
	 * and the bytes it points into live to the exit (and stay
	 * reachable for the leak checker) */
	static struct {
		struct buf b;
		char **v;
	} sp;
	struct buf *b = &sp.b;
	buf_init(b, 64u << 20);
	char chunk[8192];
	for (;;) {
		ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (buf_append(b, chunk, (size_t)n) < 0)
			exit(archive_usage());
	}
	if (!b->len)
		exit(0);
	if (b->data[b->len - 1] != '\0')
		exit(archive_usage());
	size_t n = 0;
	for (size_t i = 0; i < b->len; i++)
		n += !b->data[i];
	char **v = sp.v = xcalloc(n + 2, sizeof *v);
	v[0] = (*argv)[0];
	char *p = b->data;
	for (size_t i = 1; i <= n; i++, p += strlen(p) + 1)
		v[i] = p;
	/* the shown command line: argv[1] up to the end of the last */
	char *start = (*argv)[1], *last = (*argv)[*argc - 1];
	size_t room = (size_t)(last + strlen(last) - start);
	size_t k = b->len < room ? b->len : room;
	memcpy(start, b->data, k);
	memset(start + k, '\0', room + 1 - k);
	*argc = (int)n + 1;
	*argv = v;
}

int main(int argc, char **argv)
{
	char *err = NULL;
	/* names are bytes, read and written as UTF-8 whatever the
	 * environment says: libarchive converts a pax or GNU tar's names
	 * through the locale, and the C locale's ASCII refuses "é" (a
	 * docker workspace with such a name could not be persisted) */
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		setlocale(LC_CTYPE, "C.utf8");
	if (argc == 3 && !strcmp(argv[1], "spare"))
		spare_command(&argc, &argv);
	if (argc < 2 || take_mounts(&argc, &argv) < 0)
		return archive_usage();
	const char *cmd = argv[1];
	/* the host workspace's own work: no limits (trees can be big) */
	if (!strcmp(cmd, "create"))
		return argc == 4 ? create(argv[2], argv[3]) : archive_usage();
	if (!strcmp(cmd, "list"))
		return argc == 6 ? list(argv[2], argv[3], argv[4], argv[5])
		                 : archive_usage();
	if (!strcmp(cmd, "sortlist"))
		return argc == 5 ? sortlist(argv[2], argv[3], argv[4])
		                 : archive_usage();
	if (!strcmp(cmd, "fetch"))
		return argc == 5 ? fetch(argv[2], argv[3], argv[4])
		                 : archive_usage();
	if (!strcmp(cmd, "stage"))
		return argc >= 4 ? stage(argv[2], argv[3], argv + 4, argc - 4)
		                 : archive_usage();
	signal(SIGPIPE, SIG_IGN); /* a reader that gives up: EPIPE */
	limit(RLIMIT_CORE, 0);
#ifndef __SANITIZE_ADDRESS__ /* ASan reserves terabytes of shadow */
	limit(RLIMIT_AS, HELPER_MEM);
#endif
	limit(RLIMIT_CPU, HELPER_CPU_S);
	limit(RLIMIT_FSIZE, (rlim_t)HELPER_FILE);
	umask(022);
	int rc;
	if (!strcmp(cmd, "pack"))
		rc = tar_pack(1, argv + 2, argc - 2, &err);
	else if (!strcmp(cmd, "extract") && argc == 6 &&
	         !strcmp(argv[2], "--progress")) {
		extract_subject = argv[3];
		rc = tar_extract(0, argv[5], argv[4], extract_progress, &err);
	} else if (!strcmp(cmd, "extract") && argc == 4)
		rc = tar_extract(0, argv[3], argv[2], NULL, &err);
	else if (!strcmp(cmd, "repack") && argc == 4)
		rc = tar_repack(0, argv[3], argv[2], &mounts, create_progress,
		                &err);
	else if (!strcmp(cmd, "restore") && argc == 3)
		return archive_restore(argv[2], &mounts);
	else if (!strcmp(cmd, "members") && argc >= 6)
		return members(argv[2], argv[3], argv[4], argv + 5, argc - 5);
	else if (!strcmp(cmd, "http"))
		return archive_http(argc - 2, argv + 2);
	else if (!strcmp(cmd, "delta"))
		return archive_delta(argc - 2, argv + 2, &mounts,
		                     create_progress);
	else if (!strcmp(cmd, "hash") && argc >= 3)
		return archive_hash(argv[2], argv + 3, argc - 3, &mounts);
	else
		return archive_usage();
	return done(rc, err);
}
