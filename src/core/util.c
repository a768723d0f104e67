/* util.c: allocation wrappers, string formatting, clocks, hashing and
 * small file helpers shared by every layer. */
#include "assay/util.h"
#include "assay/termtext.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void oom(size_t n)
{
	fprintf(stderr, "assay: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t n)
{
	void *p = calloc(nmemb ? nmemb : 1, n ? n : 1);
	if (!p)
		oom(nmemb * n);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		n = 0;
	char *p = xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

int set_err(char **err, const char *fmt, ...)
{
	if (err && !*err) {
		va_list ap;
		va_start(ap, fmt);
		*err = xvasprintf(fmt, ap);
		va_end(ap);
	}
	return -1;
}

int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* SHA-256 (FIPS 180-4); small and dependency-free. */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 =
		    ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 =
		    ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3];
	e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +
		              ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +
		              ((a & b) ^ (a & c) ^ (b & c));
		hh = g, g = f, f = e, e = d + t1;
		d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d;
	h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void bytes_human(double n, char out[16])
{
	static const char *unit[] = {"B", "kB", "MB", "GB", "TB"};
	int u = 0;
	while (n >= 1000 && u < 4) {
		n /= 1000;
		u++;
	}
	snprintf(out, 16, u && n < 10 ? "%.1f %s" : "%.0f %s", n, unit[u]);
}

void sha256_hex(const void *data, size_t len, char out[65])
{
	uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	const unsigned char *p = data;
	size_t left = len;
	while (left >= 64) {
		sha256_block(h, p);
		p += 64;
		left -= 64;
	}
	unsigned char tail[128] = {0};
	memcpy(tail, p, left);
	tail[left] = 0x80;
	size_t tl = left < 56 ? 64 : 128;
	uint64_t bits = (uint64_t)len * 8;
	for (int i = 0; i < 8; i++)
		tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
	sha256_block(h, tail);
	if (tl == 128)
		sha256_block(h, tail + 64);
	for (int i = 0; i < 8; i++)
		snprintf(out + 8 * i, 9, "%08x", h[i]);
}

const char *file_type_name(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	default:
		return "a file of unknown type";
	}
}

/* Refuse st (the file shown) unless it is what flags ask for: -1, *err,
 * errno EINVAL. */
static int open_regular_refuse(const struct stat *st, int flags,
                               const char *shown, char **err)
{
	int dir = (flags & O_DIRECTORY) != 0;
	if (dir ? S_ISDIR(st->st_mode) : S_ISREG(st->st_mode))
		return 0;
	set_err(err,
	        "%s is %s, not %s: assay does not open it; remove it, or "
	        "put %s there if you trust where it came from",
	        shown, file_type_name(st->st_mode),
	        dir ? "a directory" : "a regular file",
	        dir ? "a directory" : "a regular file");
	errno = EINVAL;
	return -1;
}

int open_regular_at(int dirfd, const char *name, int flags, unsigned mode,
                    const char *shown, char **err)
{
	if (!shown)
		shown = name;
	int nofollow = (flags & O_NOFOLLOW) != 0;
	struct stat st;
	/* before opening: a device is refused without its open's effects */
	if (fstatat(dirfd, name, &st, nofollow ? AT_SYMLINK_NOFOLLOW : 0) ==
	        0 &&
	    open_regular_refuse(&st, flags, shown, err) < 0)
		return -1;
	int fd = openat(dirfd, name, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
	                (mode_t)mode);
	if (fd < 0) {
		int e = errno;
		set_err(err, "cannot open %s: %s", shown, strerror(e));
		errno = e;
		return -1;
	}
	int fl;
	if (fstat(fd, &st) < 0 || open_regular_refuse(&st, flags, shown, err) ||
	    (!(flags & O_NONBLOCK) &&
	     ((fl = fcntl(fd, F_GETFL)) < 0 ||
	      fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))) {
		int e = errno;
		set_err(err, "cannot open %s: %s", shown, strerror(e));
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int open_regular(const char *path, int flags, unsigned mode, char **err)
{
	return open_regular_at(AT_FDCWD, path, flags, mode, path, err);
}

FILE *fopen_regular(const char *path, int flags, unsigned mode, char **err)
{
	int fd = open_regular(path, flags, mode, err);
	if (fd < 0)
		return NULL;
	int acc = flags & O_ACCMODE;
	const char *how = acc == O_RDONLY    ? "r"
	                  : acc == O_WRONLY  ? (flags & O_APPEND ? "a" : "w")
	                  : flags & O_APPEND ? "a+"
	                                     : "r+";
	FILE *f = fdopen(fd, how);
	if (!f) {
		int e = errno;
		set_err(err, "cannot open %s: %s", path, strerror(e));
		close(fd);
		errno = e;
	}
	return f;
}

char *read_file_max(const char *path, size_t max, size_t *len, char **err)
{
	return read_file_flags(path, 0, max, len, err);
}

char *read_file_flags(const char *path, int flags, size_t max, size_t *len,
                      char **err)
{
	int fd = open_regular(path, O_RDONLY | flags, 0, err);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) == 0 && (size_t)st.st_size > max) {
		set_err(err, "%s: too large (%lld bytes, at most %zu)", path,
		        (long long)st.st_size, max);
		close(fd);
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *data = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap >= max) {
				set_err(err, "%s: larger than %zu bytes", path,
				        max);
				goto fail;
			}
			cap = cap * 2 > max ? max : cap * 2;
			data = xrealloc(data, cap + 1);
		}
		ssize_t r = read(fd, data + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			set_err(err, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	data[n] = '\0';
	if (len)
		*len = n;
	return data;
fail:
	close(fd);
	free(data);
	return NULL;
}

static int write_replace(const char *path, const void *data, size_t len,
                         int durable, char **err)
{
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	int rc = -1;
	/* a fresh file: whatever was left at the name (a link, a FIFO in
	 * a copied run dir) is neither written through nor waited on */
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	              0644);
	if (fd < 0) {
		set_err(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	const char *p = data;
	size_t left = len;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			set_err(err, "%s: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		p += w;
		left -= (size_t)w;
	}
	if ((durable && fsync(fd) < 0) || close(fd) < 0) {
		set_err(err, "%s: %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		set_err(err, "%s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	return rc;
}

int write_file_atomic(const char *path, const void *data, size_t len,
                      char **err)
{
	return write_replace(path, data, len, 1, err);
}

int write_file_replace(const char *path, const void *data, size_t len,
                       char **err)
{
	return write_replace(path, data, len, 0, err);
}

void fd_printf(int fd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	size_t n = strlen(s);
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, s + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(s);
}

/* The directory this binary is in (static), or NULL. */
static const char *self_dir(void)
{
	static char dir[PATH_MAX];
	if (!dir[0]) {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		if (n <= 0)
			return NULL;
		self[n] = '\0';
		snprintf(dir, sizeof dir, "%s", dirname(self));
	}
	return dir;
}

/* Beside the binary (a build tree), else in <prefix>/libexec/assay (an
 * installed one). */
char *helper_path(const char *env, const char *name)
{
	const char *over = getenv(env);
	if (over && *over)
		return xstrdup(over);
	const char *dir = self_dir();
	if (!dir)
		return NULL;
	char *p = xasprintf("%s/%s", dir, name);
	if (access(p, X_OK) == 0)
		return p;
	char *inst = xasprintf("%s/../libexec/assay/%s", dir, name);
	if (access(inst, X_OK) == 0) {
		free(p);
		return inst;
	}
	free(inst);
	return p;
}

const char *data_dir(void)
{
	static char found[PATH_MAX];
	const char *d = getenv("ASSAY_DATA_DIR");
	if (d && *d)
		return d;
	if (!found[0]) {
		const char *self = self_dir();
		char probe[PATH_MAX];
		snprintf(found, sizeof found, "%s", ASSAY_SOURCE_DIR);
		char real[PATH_MAX];
		if (self &&
		    snprintf(probe, sizeof probe, "%s/../share/assay", self) <
		        (int)sizeof probe &&
		    realpath(probe, real) && strlen(real) + 8 < sizeof probe) {
			snprintf(probe, sizeof probe, "%s/themes", real);
			if (access(probe, R_OK) == 0)
				snprintf(found, sizeof found, "%s", real);
		}
	}
	return found;
}

int mkdir_p(const char *path, char **err)
{
	char *p = xstrdup(path);
	int rc = 0;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			rc = set_err(err, "cannot create %s: %s", p,
			             strerror(errno));
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return rc;
}

static int rm_rf_at(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0);
	int fd = openat(dirfd, name,
	                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (rm_rf_at(fd, de->d_name) < 0)
			rc = -1;
	}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
		rc = -1;
	return rc;
}

int rm_rf(const char *path)
{
	return rm_rf_at(AT_FDCWD, path);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid,
 * -1 if valid so far but cut short. */
static int utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	int len;
	uint32_t min;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2, min = 0x80;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3, min = 0x800;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4, min = 0x10000;
	else
		return 0;
	uint32_t cp = c & (0x3F >> (len - 1));
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

int utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		if (p[i] < 0x80 && p[i]) {
			i++;
			continue;
		}
		int len = utf8_seq(p + i, n - i);
		if (len <= 0 || (len == 1 && !p[i]))
			return 0;
		i += (size_t)len;
	}
	return 1;
}

char *utf8_sanitize(const char *s, size_t n, size_t *out_len)
{
	char *out = xmalloc(n * 3 + 1);
	size_t o = 0;
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		int len = utf8_seq(p + i, n - i);
		if (len > 0 && !(len == 1 && p[i] == 0)) {
			memcpy(out + o, p + i, (size_t)len);
			o += (size_t)len;
			i += (size_t)len;
		} else {
			memcpy(out + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return out;
}

size_t utf8_complete_prefix(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		unsigned char c = p[n - back];
		if ((c & 0xC0) == 0x80)
			continue;
		if (c >= 0xC0 && utf8_seq(p + n - back, back) < 0)
			return n - back;
		break;
	}
	return n;
}

size_t utf8_decode(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	if (!n) {
		*cp = 0;
		return 0;
	}
	int len = utf8_seq(p, n);
	if (len <= 0) {
		*cp = 0xFFFD;
		return 1;
	}
	uint32_t c = len == 1 ? p[0] : p[0] & (0x3F >> (len - 1));
	for (int i = 1; i < len; i++)
		c = (c << 6) | (p[i] & 0x3F);
	*cp = c;
	return (size_t)len;
}
