/* etc.c: the /etc the local sandbox sees. Once per run a small copy is
 * made of the files programs need (symlinks kept as symlinks) plus
 * synthetic passwd, group and hosts; every command binds that one
 * directory read-only, and the two big directories over it, which
 * costs three mounts instead of twenty. Nothing else of the host's
 * /etc is there: no shadow, ssh, sudoers, account or network
 * configuration. */
#include "assay/log.h"
#include "assay/buf.h"
#include "assay/util.h"
#include "sandbox/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ETC_MAX_FILE (8u << 20) /* a larger file is left out */
#define ETC_MAX_ENTRIES 20000
#define ETC_MAX_DEPTH 8

/* Copied: the dynamic loader's cache and config, matplotlibrc, the
 * timezone and a few harmless tables; entries named python3* (Debian's
 * sitecustomize) too. */
static const char *const etc_entries[] = {
    "ld.so.cache",   "ld.so.conf", "ld.so.conf.d",  "matplotlibrc",
    "localtime",     "timezone",   "locale.alias",  "mime.types",
    "magic",         "magic.mime", "nsswitch.conf", "os-release",
    "debian_version"};

/* Only with network access: name resolution. */
static const char *const etc_net_entries[] = {"resolv.conf", "gai.conf"};

/* Bound from the host instead of copied (hundreds of links: a copy
 * would cost more than a mount): the alternatives links (libblas.so.3
 * points through them, numpy needs it) and fontconfig. */
const char *const sbx_etc_binds[] = {"alternatives", "fonts", NULL};
const char *const sbx_etc_net_binds[] = {"ssl", "ca-certificates", NULL};

struct snap {
	size_t entries;
	char **err;
};

static int etc_copy_entry(struct snap *sn, int sdir, int ddir, const char *name,
                          int depth);

/* Copy a directory of /etc, entry by entry, a few levels deep. */
static int copy_dir(struct snap *sn, int sdir, int ddir, const char *name,
                    int depth)
{
	if (depth >= ETC_MAX_DEPTH)
		return 0;
	if (mkdirat(ddir, name, 0755) < 0 && errno != EEXIST)
		return set_err(sn->err, "sandbox /etc: mkdir %s: %s", name,
		               strerror(errno));
	int s =
	    openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0)
		return 0; /* unreadable: left out */
	int d =
	    openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dir = d >= 0 ? fdopendir(s) : NULL;
	if (!dir) {
		close(s);
		if (d >= 0)
			close(d);
		return set_err(sn->err, "sandbox /etc: %s: %s", name,
		               strerror(errno));
	}
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = etc_copy_entry(sn, dirfd(dir), d, de->d_name,
			                    depth + 1);
	closedir(dir);
	close(d);
	return rc;
}

/* Copy one world-readable file of moderate size. */
static int copy_file(struct snap *sn, int sdir, int ddir, const char *name,
                     const struct stat *st)
{
	if (st->st_size > (off_t)ETC_MAX_FILE)
		return 0;
	int in =
	    openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return 0; /* unreadable to us: not for the sandbox either */
	int out =
	    openat(ddir, name,
	           O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	int rc = 0;
	if (out < 0 || sbx_copy_data(in, out) < 0)
		rc = set_err(sn->err, "sandbox /etc: copy %s: %s", name,
		             strerror(errno));
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/* Copy one entry of /etc (a file, a link or a directory). */
static int etc_copy_entry(struct snap *sn, int sdir, int ddir, const char *name,
                          int depth)
{
	struct stat st;
	char target[PATH_MAX];
	if (++sn->entries > ETC_MAX_ENTRIES)
		return 0;
	if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(sdir, name, target, sizeof target - 1);
		if (n <= 0)
			return 0;
		target[n] = '\0';
		if (symlinkat(target, ddir, name) < 0 && errno != EEXIST)
			return set_err(sn->err, "sandbox /etc: link %s: %s",
			               name, strerror(errno));
		return 0;
	}
	if (S_ISDIR(st.st_mode))
		return copy_dir(sn, sdir, ddir, name, depth);
	if (S_ISREG(st.st_mode) && (st.st_mode & S_IROTH))
		return copy_file(sn, sdir, ddir, name, &st);
	return 0; /* not world-readable, or not a file: left out */
}

/* Write a synthetic file into the snapshot. */
static int put(int ddir, const char *name, const char *text, char **err)
{
	int fd =
	    openat(ddir, name,
	           O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	size_t n = strlen(text);
	if (fd < 0 || write(fd, text, n) != (ssize_t)n) {
		if (fd >= 0)
			close(fd);
		return set_err(err, "sandbox /etc: %s: %s", name,
		               strerror(errno));
	}
	close(fd);
	return 0;
}

/* Accounts and hosts: only what a program asking "who am I" needs. */
static int put_synthetic(int ddir, char **err)
{
	unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();
	char *passwd, *group;
	if (uid == 0)
		passwd = xstrdup("root:x:0:0:root:/workspace:/bin/bash\n"
		                 "nobody:x:65534:65534:nobody:/nonexistent:"
		                 "/usr/sbin/nologin\n");
	else
		passwd = xasprintf("root:x:0:0:root:/root:/bin/bash\n"
		                   "sandbox:x:%u:%u:sandbox:/workspace:"
		                   "/bin/bash\n",
		                   uid, gid);
	if (gid == 0)
		group = xstrdup("root:x:0:\nnogroup:x:65534:\n");
	else
		group = xasprintf("root:x:0:\nsandbox:x:%u:\n", gid);
	int rc = put(ddir, "passwd", passwd, err);
	if (rc == 0)
		rc = put(ddir, "group", group, err);
	if (rc == 0)
		rc = put(ddir, "hosts",
		         "127.0.0.1\tlocalhost\n127.0.1.1\tassay\n"
		         "::1\tlocalhost ip6-localhost ip6-loopback\n",
		         err);
	free(passwd);
	free(group);
	return rc;
}

/* An empty directory for a host directory bound over it. */
static int mount_point(int ddir, const char *name, char **err)
{
	if (mkdirat(ddir, name, 0755) < 0 && errno != EEXIST)
		return set_err(err, "sandbox /etc: mkdir %s: %s", name,
		               strerror(errno));
	return 0;
}

int sbx_etc_snapshot(const char *dir, int network, char **err)
{
	rm_rf(dir); /* a previous start of the same run */
	if (mkdir_p(dir, err) < 0)
		return -1;
	int ddir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int sdir = open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct snap sn = {0, err};
	int rc = 0;
	if (ddir < 0 || sdir < 0) {
		rc = set_err(err, "sandbox /etc: %s", strerror(errno));
		goto out;
	}
	for (size_t i = 0;
	     rc == 0 && i < sizeof etc_entries / sizeof *etc_entries; i++)
		rc = etc_copy_entry(&sn, sdir, ddir, etc_entries[i], 0);
	for (size_t i = 0; rc == 0 && network &&
	                   i < sizeof etc_net_entries / sizeof *etc_net_entries;
	     i++)
		rc = etc_copy_entry(&sn, sdir, ddir, etc_net_entries[i], 0);
	DIR *d = rc == 0 ? opendir("/etc") : NULL;
	struct dirent *de;
	while (d && rc == 0 && (de = readdir(d)))
		if (!strncmp(de->d_name, "python3", 7))
			rc = etc_copy_entry(&sn, sdir, ddir, de->d_name, 0);
	if (d)
		closedir(d);
	for (size_t i = 0; rc == 0 && sbx_etc_binds[i]; i++)
		rc = mount_point(ddir, sbx_etc_binds[i], err);
	for (size_t i = 0; rc == 0 && network && sbx_etc_net_binds[i]; i++)
		rc = mount_point(ddir, sbx_etc_net_binds[i], err);
	if (rc == 0)
		rc = put_synthetic(ddir, err);
	if (sn.entries > ETC_MAX_ENTRIES)
		log_warn("sandbox /etc: more than %d entries; some left out",
		         ETC_MAX_ENTRIES);
out:
	if (ddir >= 0)
		close(ddir);
	if (sdir >= 0)
		close(sdir);
	return rc;
}

/* What the snapshot depends on: the copied entries' identity and times,
 * /etc's own (it changes when entries come or go), the network flag and
 * this version of assay. Two runs with the same key can share one
 * snapshot. */
char *sbx_etc_key(int network)
{
	struct buf b;
	buf_init(&b, 0);
	buf_printf(&b, "assay %s net=%d", ASSAY_VERSION, network);
	const char *extra[] = {".", "resolv.conf", "gai.conf"};
	for (size_t i = 0; i < sizeof etc_entries / sizeof *etc_entries + 3;
	     i++) {
		size_t n = sizeof etc_entries / sizeof *etc_entries;
		const char *name = i < n ? etc_entries[i] : extra[i - n];
		struct stat st;
		char *path = xasprintf("/etc/%s", name);
		if (lstat(path, &st) == 0)
			buf_printf(&b, "|%s:%llu:%lld:%lld.%09ld", name,
			           (unsigned long long)st.st_ino,
			           (long long)st.st_size,
			           (long long)st.st_mtime, st.st_mtim.tv_nsec);
		free(path);
	}
	char hash[65];
	sha256_hex(b.data, b.len, hash);
	buf_free(&b);
	return xstrndup(hash, 24);
}
