/* fileop.c: the file operations the backends whose workspace lives
 * elsewhere (docker, opensandbox) run inside the sandbox: the fileop
 * script, which resolves every path there and refuses what lands
 * outside /workspace, the words each operation passes it, and what its
 * output means (a read's bytes, a listing's entries, a failure's
 * reason). How the script gets run (an exec, an execd command) is the
 * backend's. */
#include "assay/util.h"
#include "sandbox/fileop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* File operations, confined to /workspace: paths are resolved inside
 * the container (symlinks and all) and refused when they land outside.
 * Exit 3 with the reason on stderr when refused or missing.
 *   resolve REL          the absolute path REL leads to
 *   read REL MAX         "SIZE\n" then at most MAX bytes
 *   list REL RECURSIVE   "%y %s %T@ %C@ %P\0" per entry below REL
 *   prepare REL          mkdir -p the parents; print the directory */
const char fileop_script[] =
    "ws=/workspace\n"
    "inside() { case $1 in \"$ws\"|\"$ws\"/*) return 0 ;; esac; return 1; "
    "}\n"
    "fail() { printf '%s\\n' \"$1\" >&2; exit 3; }\n"
    "out=\"path '$2' leads outside the workspace (through a symlink): "
    "refused\"\n"
    "resolve() {\n"
    "  r=$(realpath -e -- \"$ws/$1\" 2>/dev/null) ||"
    " fail \"$1: No such file or directory\"\n"
    "  inside \"$r\" || fail \"$out\"\n"
    "}\n"
    "case $1 in\n"
    "resolve) resolve \"$2\"; printf '%s' \"$r\" ;;\n"
    "read)\n"
    "  resolve \"$2\"\n"
    "  [ -d \"$r\" ] && fail \"$2 is a directory\"\n"
    "  [ -f \"$r\" ] || fail \"$2 is not a regular file\"\n"
    "  s=$(stat -c %s -- \"$r\") || exit 1\n"
    "  printf '%s\\n' \"$s\"\n"
    "  exec head -c \"$3\" -- \"$r\" ;;\n"
    "list)\n"
    "  resolve \"$2\"\n"
    "  [ -d \"$r\" ] || fail \"$2: Not a directory\"\n"
    "  d=1; [ \"$3\" = 1 ] && d=64\n"
    "  cd -- \"$r\" || exit 1\n"
    "  find . -mindepth 1 -maxdepth \"$d\" -printf '%y %s %T@ %C@ %P\\0' "
    "2>/dev/null | head -z -n \"$4\"\n"
    "  exit 0 ;;\n"
    "prepare)\n"
    "  rel=$2 dir=${2%/*}\n"
    "  [ \"$dir\" = \"$rel\" ] && dir=.\n"
    "  a=$dir\n"
    "  while [ ! -e \"$ws/$a\" ] && [ ! -L \"$ws/$a\" ]; do\n"
    "    case $a in */*) a=${a%/*} ;; *) a=. ;; esac\n"
    "  done\n"
    "  resolve \"$a\"\n"
    "  [ -d \"$r\" ] || fail \"$a is not a directory\"\n"
    "  if [ \"$a\" != \"$dir\" ]; then\n"
    "    rest=${dir#\"$a\"/}; [ \"$a\" = . ] && rest=$dir\n"
    "    mkdir -p -- \"$r/$rest\" || exit 1\n"
    "  fi\n"
    "  resolve \"$dir\"\n"
    "  [ -d \"$r/${rel##*/}\" ] && [ ! -L \"$r/${rel##*/}\" ] &&"
    " fail \"$rel is a directory\"\n"
    "  printf '%s' \"$r\" ;;\n"
    "*) fail \"unknown operation $1\" ;;\n"
    "esac\n";

/* The listing's output bound: a generous one per entry (the count is
 * the real limit), 256 MiB at most. */
#define FILEOP_ENTRY_BYTES 512
#define FILEOP_LIST_MAX (256u << 20)

void fileop_read_args(struct fileop_args *a, const char *rel, size_t max)
{
	snprintf(a->num, sizeof a->num, "%zu", max);
	a->argv[0] = "read";
	a->argv[1] = rel;
	a->argv[2] = a->num;
	a->argv[3] = NULL;
	a->out_max = max + 64;
}

void fileop_list_args(struct fileop_args *a, const char *rel, int recursive,
                      size_t max)
{
	snprintf(a->num, sizeof a->num, "%zu", max + 1);
	a->argv[0] = "list";
	a->argv[1] = rel;
	a->argv[2] = recursive ? "1" : "0";
	a->argv[3] = a->num;
	a->argv[4] = NULL;
	size_t cap = (max + 1) * FILEOP_ENTRY_BYTES;
	a->out_max = cap < FILEOP_LIST_MAX ? cap : FILEOP_LIST_MAX;
}

char *fileop_error(const struct sbx_exit *ex, struct buf *err, const char *rel,
                   int last_line)
{
	if (ex->error)
		return xstrdup(ex->error);
	while (err->len && err->data[err->len - 1] == '\n')
		err->data[--err->len] = '\0';
	if (err->len && !last_line)
		return utf8_sanitize(err->data, err->len, NULL);
	if (err->len) {
		const char *last = err->data;
		for (const char *p = err->data; *p; p++)
			if (*p == '\n' && p[1])
				last = p + 1;
		return utf8_sanitize(last, strlen(last), NULL);
	}
	if (ex->timed_out)
		return xasprintf("%s: the sandbox took too long", rel);
	return xasprintf("%s: failed (exit code %d)", rel, ex->exit_code);
}

int fileop_read_result(const struct buf *out, const char *rel, size_t max,
                       struct buf *data, char **err)
{
	const char *nl = out->len ? memchr(out->data, '\n', out->len) : NULL;
	if (!nl)
		return SBX_FAILED;
	long long size = strtoll(out->data, NULL, 10);
	size_t start = (size_t)(nl + 1 - out->data);
	buf_append(data, out->data + start, out->len - start);
	if (size <= (long long)max)
		return SBX_OK;
	*err = xasprintf("%s is %lld bytes; only the first %zu were read", rel,
	                 size, max);
	return SBX_TRUNCATED;
}

const char *fileop_list_prefix(const char *rel)
{
	return strcmp(rel, ".") ? rel : "";
}

cJSON *fileop_list_result(const struct buf *out, const char *rel, size_t max,
                          int *rc, char **err)
{
	int truncated = 0;
	cJSON *list =
	    sbx_listing_sort(out->data ? out->data : "", out->len,
	                     out->max && out->len >= out->max,
	                     fileop_list_prefix(rel), max, &truncated);
	*rc = truncated ? SBX_TRUNCATED : SBX_OK;
	if (truncated)
		*err = fileop_list_cut(rel, max);
	return list;
}

char *fileop_list_cut(const char *rel, size_t max)
{
	return xasprintf("listing of %s stopped at %zu entries", rel, max);
}
