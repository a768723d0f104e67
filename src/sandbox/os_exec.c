/* os_exec.c: commands in an OpenSandbox sandbox, through execd's
 * POST /command. Its answer is an event stream of bare JSON objects
 * (one a line, blank lines between, maybe a "data:" prefix), parsed as
 * it comes on the loop: init (the command's id), ping, stdout/stderr
 * (one line each, its terminator stripped: put back), then
 * execution_complete (exit 0) or error (exit atoi(evalue), -1 when a
 * signal or execd's timeout ended it). The command is finished on that
 * last event, not on the connection's close (execd keeps it open about
 * a second longer). Closing the connection does not stop a command:
 * a timeout or Ctrl-C sends DELETE /command?id=, which kills its
 * process group.
 *
 * Every command runs under a short bash prelude with the per-process
 * limits (address space, CPU time, file size, no core files); the
 * sandbox's own limits (memory, CPU, processes) are the server's,
 * from the create's resourceLimits.
 *
 * execd gives a command no stdin. A command that wants one (the python
 * kernel) gets it from a feeder in its pipeline that waits for files in
 * /tmp/.assay-io/TAG: in.N and then an empty in.N.ok, in order; the
 * feeder copies in.N to the kernel once in.N.ok is there and removes
 * both. Its stdout goes through a relay that base64s every read on a
 * line of its own, after the offset of its first byte in the stream,
 * so binary frames survive execd's line-based text stream.
 *
 * A framed exec (the kernel: reply_end) takes each write as a request
 * in ONE command, the cell command, a shell script that forks nothing
 * until its last line: it opens the FIFO tap.N (the feeder makes it
 * ahead), writes in.N itself (the bytes are in its text), and sed
 * copies to its stdout what the relay sends into tap.N: the feeder
 * names N to the relay (the ctl FIFO) as it feeds in.N, and the relay
 * sends there every line from then to the end of the reply (a frame
 * of a reply_end type), putting before that frame's last lines a
 * listing of the workspace made in its own process, as the listing
 * after the call will ask for it (os_list answers from it once), then
 * "@D", and the command ends. execd sends a command's last lines at
 * its exit, not at its next 100 ms tick, so a short cell's reply comes
 * back at once, with its listing. A write while a reply is open (an
 * interrupt) or too big for a command line is an upload (POST
 * /files/upload) of in.N and in.N.ok. The relay's own stdout carries
 * what is not part of a reply (the hello); its lines and the cell
 * command's go out in the stream's order by their offsets, whichever
 * comes first. A cell command that dies hands the relay back its
 * stdout; one whose kernel dies is ended with the kernel's exec. */
#include "assay/config.h"
#include "assay/http.h"
#include "assay/json.h"
#include "assay/log.h"
#include "assay/loop.h"
#include "assay/util.h"
#include "sandbox/fileop.h"
#include "sandbox/os_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OS_KILL_GRACE_MS 8000     /* from the DELETE to giving up */
#define OS_WRITE_CHUNK (4u << 20) /* stdin bytes per upload */
#define OS_STDIN_MAX (64u << 20)
#define OS_LINE_MAX (16u << 20)
#define OS_HELD_MAX (64u << 20)    /* stdout bytes held out of order */
#define OS_CELL_INLINE (96u << 10) /* a write in its command's text */

struct os_cell;

/* Bytes of a framed exec's stdout that came before the ones ahead of
 * them (by the other stream). */
struct os_held {
	struct os_held *next;
	uint64_t off;
	size_t n;
	char data[];
};

struct os_exec {
	struct sbx_exec base;
	struct os_exec *next;
	struct sbx *s;
	char tag[32];
	struct http_xfer *x;
	struct buf line; /* the stream's line being read */
	struct buf err;  /* an error answer's body */
	long status;
	char *cmd_id;
	struct sbx_exec_obs obs;
	int internal, keep_stdin;
	int timed_out, cancelled, kill_sent, finished, have_code;
	int exit_code;
	uint64_t timer, grace, fin;
	int64_t t0;
	char *error;
	/* stdin: the bytes not yet written, the write command running */
	struct buf pending;
	struct http_xfer *up; /* the upload of in.N */
	struct buf up_err;
	long up_status;
	unsigned up_n;
	int stdin_closed;
	/* framed (reply_end): stdout in order by the lines' offsets, and
	 * the cell command carrying the reply to the last write */
	char *reply_end;
	uint64_t next_off;
	struct os_held *held;
	size_t held_n;
	struct os_cell *cell;
};

/* ---- base64 and quoting ---- */

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *os_b64_encode(const void *data, size_t n)
{
	const unsigned char *p = data;
	char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		*o++ = b64[(v >> 18) & 63];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		*o++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

void os_b64_feed(struct os_b64 *b, const char *data, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = data[i];
		const char *k = c ? strchr(b64, c) : NULL;
		if (c == '=' || c == '\n') { /* the end of one encoded block */
			b->acc = 0;
			b->bits = 0;
			continue;
		}
		if (!k) {
			if (c != '\r' && c != ' ')
				b->bad = 1;
			continue;
		}
		b->acc = (b->acc << 6) | (unsigned)(k - b64);
		b->bits += 6;
		if (b->bits >= 8) {
			b->bits -= 8;
			char byte = (char)((b->acc >> b->bits) & 0xff);
			if (buf_append(&b->out, &byte, 1) < 0)
				b->bad = 1;
		}
	}
}

char *os_quote(const char *s)
{
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "'");
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			buf_puts(&b, "'\\''");
		else
			buf_append(&b, p, 1);
	}
	buf_puts(&b, "'");
	return buf_detach(&b);
}

/* ---- the command line ---- */

/* stdin from the files in.N (written, then in.N.ok), in order; it
 * ends when the command it feeds is gone (its pipe's POLLERR). A cell
 * command wakes it through the wake FIFO (uploads are seen within
 * 10 ms). For a framed exec (ctl is there) it makes the FIFO tap.N
 * for the next N ahead, and names N to the relay (ctl) before it
 * feeds in.N. A pair is removed once the next is in: execd may still
 * be setting the mode of an uploaded in.N.ok when it appears, and a
 * file gone under it fails the upload. */
static const char feeder_py[] =
    "import os,select,sys\n"
    "d=sys.argv[1];n=0;c=-1;p=select.poll();p.register(1,0)\n"
    "w=os.open(d+'/wake',os.O_RDWR|os.O_NONBLOCK);p.register(w,1)\n"
    "F=os.path.exists(d+'/ctl')\n"
    "def tap(n):\n"
    " try:os.mkfifo('%s/tap.%d'%(d,n),0o600)\n"
    " except OSError:pass\n"
    "if F:tap(0)\n"
    "while 1:\n"
    " if any(f==1 for f,_ in p.poll(10)):break\n"
    " try:os.read(w,512)\n"
    " except OSError:pass\n"
    " f='%s/in.%d'%(d,n)\n"
    " while os.path.exists(f+'.ok'):\n"
    "  b=open(f,'rb').read()\n"
    "  if n:\n"
    "   for x in('','.ok'):os.unlink('%s/in.%d%s'%(d,n-1,x))\n"
    "  if F:\n"
    "   tap(n+1)\n"
    "   try:\n"
    "    if c<0:c=os.open(d+'/ctl',os.O_WRONLY|os.O_NONBLOCK)\n"
    "    os.write(c,b'%d\\n'%n)\n"
    "   except OSError:pass\n"
    "  n+=1;f='%s/in.%d'%(d,n)\n"
    "  while b:b=b[os.write(1,b):]\n";

/* python3 -u: each read goes out at once as lines "OFFSET BASE64" (at
 * most 6144 bytes a line), OFFSET the place of its first byte in the
 * stream. With frame types to end a reply (argv[2]) it follows the
 * frames: once the feeder names N (ctl) and a cell command has tap.N
 * open, its lines go into that FIFO, to the end of the next frame of
 * such a type. Before that frame's last lines it lists the workspace
 * (at most the count in ls.N; as fileop's list does it: /workspace
 * resolved and inside, entries below it to depth 64 as "%y %s %T@
 * %C@ %P\0", links not followed), again 15 ms later when something in it
 * is that recent (so that the next delta need not take it again: see
 * snapshot_delta), and sends "@L TIME", the records base64'd, "@E";
 * after those lines "@D", and the FIFO is closed. A FIFO whose reader
 * is gone gives the lines back to stdout. */
static const char relay_py[] =
    "import os,sys,binascii,stat,time\n"
    "d,E=sys.argv[1],sys.argv[2].encode()\n"
    "c=os.open(d+'/ctl',os.O_RDWR|os.O_NONBLOCK) if E else -1\n"
    "o=r=z=M=0;h=b'';t=-1\n"
    "Y=((stat.S_ISDIR,b'd'),(stat.S_ISREG,b'f'),(stat.S_ISLNK,b'l'),"
    "(stat.S_ISFIFO,b'p'),(stat.S_ISSOCK,b's'),(stat.S_ISCHR,b'c'))\n"
    "def put(f,b):\n"
    " while b:b=b[os.write(f,b):]\n"
    "def b64(b,n):\n"
    " return [binascii.b2a_base64(b[q:q+n]) for q in range(0,len(b),n)]\n"
    "def lines(b):\n"
    " global o\n"
    " l=b''.join(b'%d %s'%(o+q*6144,x) for q,x in enumerate(b64(b,6144)))\n"
    " o+=len(b);return l\n"
    "def out(l):\n"
    " global t\n"
    " if t>=0:\n"
    "  try:put(t,l);return\n"
    "  except OSError:os.close(t);t=-1\n"
    " put(1,l)\n"
    "def attach():\n"
    " global t,M\n"
    " try:m=os.read(c,4096).split()\n"
    " except OSError:return\n"
    " for n in m:\n"
    "  p='%s/%%s.%s'%(d,n.decode())\n"
    "  try:f=os.open(p%'tap',os.O_WRONLY|os.O_NONBLOCK)\n"
    "  except OSError:f=-1\n"
    "  try:x=int(open(p%'ls').read())\n"
    "  except(OSError,ValueError):x=0\n"
    "  for q in('tap','ls'):\n"
    "   try:os.unlink(p%q)\n"
    "   except OSError:pass\n"
    "  if f>=0:\n"
    "   os.set_blocking(f,True)\n"
    "   if t>=0:os.close(t)\n"
    "   t,M=f,x\n"
    "def walk(p,q,e,a,T):\n"
    " try:it=os.scandir(p)\n"
    " except OSError:return\n"
    " with it:\n"
    "  for x in it:\n"
    "   if len(a)>=M:return\n"
    "   try:s=x.stat(follow_symlinks=False)\n"
    "   except OSError:continue\n"
    "   y=next((v for f,v in Y if f(s.st_mode)),b'b')\n"
    "   n=s.st_mtime_ns;k=s.st_ctime_ns;T[0]=max(T[0],n)\n"
    "   a.append(b'%s %d %d.%09d %d.%09d %s\\0'%(y,s.st_size,n//10**9,"
    "n%10**9,k//10**9,k%10**9,os.fsencode(q+x.name)))\n"
    "   if y==b'd' and e<64:walk(x.path,q+x.name+'/',e+1,a,T)\n"
    "def listing():\n"
    " w='/workspace';r=os.path.realpath(w)\n"
    " if r!=w and not r.startswith(w+'/') or not os.path.isdir(r):return b''\n"
    " for i in(0,1):\n"
    "  s=time.time();a=[];T=[0];walk(r,'',1,a,T)\n"
    "  if i or T[0]<(s-.012)*1e9:break\n"
    "  time.sleep(.015)\n"
    " return b'@L %.6f\\n'%s+b''.join(b64(b''.join(a),49152))+b'@E\\n'\n"
    "while 1:\n"
    " b=os.read(0,65536)\n"
    " if not b:break\n"
    " if c>=0:attach()\n"
    " s=i=0\n"
    " while E and i<len(b):\n"
    "  if r:\n"
    "   j=min(r,len(b)-i);i+=j;r-=j\n"
    "   if r:continue\n"
    "  else:\n"
    "   j=min(5-len(h),len(b)-i);h+=b[i:i+j];i+=j\n"
    "   if len(h)<5:continue\n"
    "   r=int.from_bytes(h[1:],'big');z=h[:1] in E;h=b''\n"
    "   if r:continue\n"
    "  if z:\n"
    "   l=lines(b[s:i]);s=i;z=0\n"
    "   if t>=0:\n"
    "    try:\n"
    "     if M:put(t,listing())\n"
    "     put(t,l+b'@D\\n');l=b''\n"
    "    except OSError:pass\n"
    "    os.close(t);t=-1\n"
    "   if l:put(1,l)\n"
    " out(lines(b[s:]))\n";

static char *command_line(struct os_exec *e, const struct os_exec_args *a)
{
	const struct config *cfg = e->s->cfg;
	if (a->raw)
		return xstrdup(a->command);
	struct buf b;
	buf_init(&b, 0);
	if (!a->internal) {
		buf_puts(&b, "ulimit -c 0");
		if (cfg->mem_mb > 0)
			buf_printf(&b, " -v %ld", cfg->mem_mb * 1024);
		if (cfg->cpu_s > 0)
			buf_printf(&b, " -t %ld", cfg->cpu_s);
		if (cfg->fsize_mb > 0)
			buf_printf(&b, " -f %ld", cfg->fsize_mb * 1024);
		buf_puts(&b, " 2>/dev/null\n");
	}
	char *run;
	if (a->argv) {
		struct buf q;
		buf_init(&q, 0);
		for (size_t i = 0; a->argv[i]; i++) {
			char *w = os_quote(a->argv[i]);
			buf_printf(&q, "%s%s", i ? " " : "", w);
			free(w);
		}
		run = buf_detach(&q);
	} else {
		char *c = os_quote(a->command);
		run = xasprintf("/bin/bash -c %s", c);
		free(c);
	}
	if (a->keep_stdin) {
		char *relay = os_quote(relay_py);
		char *feeder = os_quote(feeder_py);
		char *end = os_quote(a->reply_end ? a->reply_end : "");
		buf_printf(&b,
		           "d=/tmp/.assay-io/%s\n"
		           "mkdir -p \"$d\" && mkfifo \"$d/wake\"%s "
		           "|| exit 125\n"
		           "python3 -u -c %s \"$d\" | %s | "
		           "python3 -u -c %s \"$d\" %s\n"
		           "rc=${PIPESTATUS[1]}\nrm -rf \"$d\"\nexit $rc\n",
		           e->tag, a->reply_end ? " \"$d/ctl\"" : "", feeder,
		           run, relay, end);
		free(end);
		free(feeder);
		free(relay);
	} else {
		buf_printf(&b, "exec %s\n", run);
	}
	free(run);
	return buf_detach(&b);
}

/* The environment of a command: nothing of the host. */
static cJSON *command_env(struct os_exec *e)
{
	long t = os_of(e->s)->threads > 0 ? os_of(e->s)->threads : 1;
	char n[24];
	snprintf(n, sizeof n, "%ld", t);
	cJSON *env = cJSON_CreateObject();
	cJSON_AddStringToObject(env, "PATH",
	                        "/usr/local/sbin:/usr/local/bin:/usr/sbin:"
	                        "/usr/bin:/sbin:/bin");
	cJSON_AddStringToObject(env, "HOME", "/workspace");
	cJSON_AddStringToObject(env, "SHELL", "/bin/bash");
	cJSON_AddStringToObject(env, "LANG", "C.UTF-8");
	cJSON_AddStringToObject(env, "TERM", "dumb");
	cJSON_AddStringToObject(env, "TMPDIR", "/tmp");
	cJSON_AddStringToObject(env, "MPLBACKEND", "Agg");
	cJSON_AddStringToObject(env, "MPLCONFIGDIR", "/tmp/.mplconfig");
	/* fontconfig's cache, out of the workspace (as the local backend) */
	cJSON_AddStringToObject(env, "XDG_CACHE_HOME", "/tmp/.cache");
	cJSON_AddStringToObject(env, "PYTHONUNBUFFERED", "1");
	cJSON_AddStringToObject(env, "PYTHONPYCACHEPREFIX", "/tmp/.pycache");
	cJSON_AddStringToObject(env, "OPENBLAS_NUM_THREADS", n);
	cJSON_AddStringToObject(env, "OMP_NUM_THREADS", n);
	cJSON_AddStringToObject(env, "ASSAY_EXEC", e->tag);
	return env;
}

/* ---- finishing ---- */

static void exec_unlink(struct os_exec *e)
{
	struct osbx *o = os_of(e->s);
	for (struct os_exec **p = &o->execs; *p; p = &(*p)->next)
		if (*p == e) {
			*p = e->next;
			break;
		}
}

static void cell_detach(struct os_cell *c);

static void ox_free(struct os_exec *e)
{
	if (e->cell)
		cell_detach(e->cell);
	while (e->held) {
		struct os_held *h = e->held;
		e->held = h->next;
		free(h);
	}
	free(e->reply_end);
	if (e->x)
		http_cancel(e->x);
	struct loop *l = e->s->loop;
	if (e->timer)
		loop_timer_cancel(l, e->timer);
	if (e->grace)
		loop_timer_cancel(l, e->grace);
	if (e->fin)
		loop_timer_cancel(l, e->fin);
	buf_free(&e->line);
	buf_free(&e->err);
	if (e->up)
		http_cancel(e->up);
	buf_free(&e->pending);
	buf_free(&e->up_err);
	free(e->cmd_id);
	free(e->error);
	free(e);
}

/* Deliver on_exit (the last touch of s: it may free it) and free e. */
static void exec_finish(struct os_exec *e)
{
	exec_unlink(e);
	if (!e->internal) /* what it did to the workspace is done */
		os_of(e->s)->gen++;
	struct sbx_exit ex = {
	    .exit_code = e->have_code ? e->exit_code : -1,
	    .timed_out = e->timed_out,
	    .cancelled = e->cancelled,
	    .duration_ms = now_ms() - e->t0,
	    .error = e->error,
	};
	if (e->have_code && e->exit_code == -1)
		ex.signal = 9;
	else if (e->have_code && e->exit_code > 128 && e->exit_code < 160 &&
	         (e->timed_out || e->cancelled))
		ex.signal = e->exit_code - 128;
	if (e->error) /* what ended it was ours: the error says it */
		ex.signal = 0;
	if (ex.signal)
		ex.exit_code = -1;
	struct sbx_exec_obs obs = e->obs;
	e->finished = 1;
	struct sbx_exit copy = ex;
	char *err = e->error;
	e->error = NULL;
	copy.error = err;
	ox_free(e);
	if (obs.on_exit)
		obs.on_exit(obs.arg, &copy);
	free(err);
}

static void on_fin(void *arg)
{
	struct os_exec *e = arg;
	e->fin = 0;
	exec_finish(e);
}

/* Finish from the loop, outside curl's callbacks. */
static void finish_soon(struct os_exec *e)
{
	if (e->fin || e->finished)
		return;
	e->finished = 1;
	e->fin = loop_timer_add(e->s->loop, 0, on_fin, e);
}

/* ---- killing ---- */

static void on_killed(void *arg, long status, cJSON *reply, const char *err)
{
	(void)arg;
	(void)reply;
	if (status != 200 && status != 0)
		log_info("opensandbox: DELETE /command: %s", err ? err : "?");
}

static void send_kill(struct os_exec *e)
{
	if (e->kill_sent || !e->cmd_id)
		return;
	e->kill_sent = 1;
	char *q = xfer_escape(e->cmd_id);
	char *path = xasprintf("/command?id=%s", q), *err = NULL;
	struct os_call *c = os_call(e->s, 1, "DELETE", path, NULL, 10000,
	                            on_killed, NULL, &err);
	if (!c)
		log_warn("opensandbox: cannot interrupt command %s: %s",
		         e->cmd_id, err ? err : "?");
	free(err);
	free(path);
	free(q);
}

/* The DELETE did not end the stream in time: give up on it. */
static void on_grace(void *arg)
{
	struct os_exec *e = arg;
	e->grace = 0;
	if (!e->error)
		e->error = xstrdup("opensandbox: the command did not end after "
		                   "DELETE /command");
	finish_soon(e);
}

static void exec_kill(struct os_exec *e)
{
	send_kill(e);
	if (!e->grace && !e->finished)
		e->grace =
		    loop_timer_add(e->s->loop, OS_KILL_GRACE_MS, on_grace, e);
}

static void on_timeout(void *arg)
{
	struct os_exec *e = arg;
	e->timer = 0;
	e->timed_out = 1;
	exec_kill(e);
}

void os_exec_cancel(struct os_exec *e)
{
	if (e->finished)
		return;
	e->cancelled = 1;
	exec_kill(e);
}

/* ---- a kernel's stdout, in order ---- */

/* Bytes [off, off+n) of e's stdout: what is new goes to the observer,
 * then what was held and now follows; bytes past a gap wait for it
 * (the other stream brings it). -1 when too much waits. */
static int stdout_take(struct os_exec *e, uint64_t off, const char *data,
                       size_t n)
{
	if (!n)
		return 0;
	if (off > e->next_off) {
		if (e->held_n + n > OS_HELD_MAX)
			return -1;
		struct os_held *h = xmalloc(sizeof *h + n), **p = &e->held;
		h->off = off;
		h->n = n;
		memcpy(h->data, data, n);
		while (*p && (*p)->off <= off)
			p = &(*p)->next;
		h->next = *p;
		*p = h;
		e->held_n += n;
		return 0;
	}
	if (off + n > e->next_off) {
		size_t skip = (size_t)(e->next_off - off);
		e->next_off = off + n;
		if (e->obs.on_output)
			e->obs.on_output(e->obs.arg, SBX_STDOUT, data + skip,
			                 n - skip);
	}
	while (e->held && e->held->off <= e->next_off && !e->finished) {
		struct os_held *h = e->held;
		e->held = h->next;
		e->held_n -= h->n;
		stdout_take(e, h->off, h->data, h->n);
		free(h);
	}
	return 0;
}

/* A relay's line "OFFSET BASE64" (from the kernel's own stream or from
 * a cell command's). */
static void stdout_line(struct os_exec *e, const char *text)
{
	char *end = NULL;
	unsigned long long off = strtoull(text, &end, 10);
	if (end == text || *end != ' ') {
		log_warn("opensandbox: %s: a line not from the relay dropped",
		         e->tag);
		return;
	}
	struct os_b64 b = {0};
	buf_init(&b.out, 0);
	os_b64_feed(&b, end + 1, strlen(end + 1));
	if (stdout_take(e, off, b.out.data, b.out.len) < 0 && !e->error) {
		e->error = xasprintf("opensandbox: %s: over %u MiB of output "
		                     "arrived out of order",
		                     e->tag, OS_HELD_MAX >> 20);
		exec_kill(e);
	}
	buf_free(&b.out);
}

/* ---- the event stream ---- */

static void deliver(struct os_exec *e, enum sbx_stream st, const char *text)
{
	if (!e->obs.on_output)
		return;
	if (e->keep_stdin && st == SBX_STDOUT) {
		stdout_line(e, text);
		return;
	}
	if (!strcmp(text, "\n")) {
		e->obs.on_output(e->obs.arg, st, "\n", 1);
		return;
	}
	char *line = xasprintf("%s\n", text);
	e->obs.on_output(e->obs.arg, st, line, strlen(line));
	free(line);
}

static void event(struct os_exec *e, const char *data, size_t n)
{
	while (n && (data[n - 1] == '\r' || data[n - 1] == ' '))
		n--;
	if (n >= 5 && !strncmp(data, "data:", 5)) {
		data += 5;
		n -= 5;
		while (n && *data == ' ')
			data++, n--;
	}
	if (!n || e->finished)
		return;
	cJSON *ev = cJSON_ParseWithLength(data, n);
	const char *type = json_str(ev, "type", "");
	const char *text = json_str(ev, "text", "");
	if (!strcmp(type, "init")) {
		free(e->cmd_id);
		e->cmd_id = xstrdup(text);
		if (e->timed_out || e->cancelled)
			send_kill(e);
	} else if (!strcmp(type, "stdout")) {
		deliver(e, SBX_STDOUT, text);
	} else if (!strcmp(type, "stderr")) {
		deliver(e, SBX_STDERR, text);
	} else if (!strcmp(type, "execution_complete")) {
		e->have_code = 1;
		e->exit_code = 0;
		finish_soon(e);
	} else if (!strcmp(type, "error")) {
		const cJSON *er = cJSON_GetObjectItem(ev, "error");
		const char *ev_ = json_str(er, "evalue", "");
		char *end = NULL;
		long code = strtol(ev_, &end, 10);
		e->have_code = 1;
		if (end != ev_ && !*end) {
			e->exit_code = (int)code;
		} else { /* not an exit code: execd could not run it */
			e->exit_code = -1;
			e->error =
			    xasprintf("opensandbox: %s: %s",
			              json_str(er, "ename", "error"), ev_);
		}
		finish_soon(e);
	}
	cJSON_Delete(ev);
}

static void on_response(struct http_xfer *x, long status, void *arg)
{
	(void)x;
	struct os_exec *e = arg;
	e->status = status;
}

static int on_data(struct http_xfer *x, const char *data, size_t n, void *arg)
{
	(void)x;
	struct os_exec *e = arg;
	if (e->status != 200) {
		if (e->err.len < 65536)
			buf_append(&e->err, data, n);
		return 0;
	}
	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t k = nl ? (size_t)(nl - data) : n;
		if (e->line.len + k > OS_LINE_MAX)
			return -1;
		buf_append(&e->line, data, k);
		if (!nl)
			break;
		event(e, e->line.data ? e->line.data : "", e->line.len);
		buf_reset(&e->line);
		data += k + 1;
		n -= k + 1;
	}
	return 0;
}

static void on_done(struct http_xfer *x, int ok, const char *errmsg, void *arg)
{
	(void)x;
	struct os_exec *e = arg;
	e->x = NULL; /* curl frees it */
	if (e->finished)
		return;
	if (e->line.len)
		event(e, e->line.data, e->line.len);
	if (e->finished)
		return;
	if (e->status == 404) {
		os_mark_expired(e->s);
		e->error = xstrdup(e->s->lost);
	} else if (e->status && e->status != 200) {
		cJSON *j = cJSON_ParseWithLength(e->err.data ? e->err.data : "",
		                                 e->err.len);
		e->error =
		    xasprintf("opensandbox: execd refused the command: "
		              "%s (HTTP %ld)",
		              json_str(j, "message", "no message"), e->status);
		cJSON_Delete(j);
	} else if (!e->timed_out && !e->cancelled) {
		e->error = xasprintf("opensandbox: the command's stream ended "
		                     "without its exit code (%s)",
		                     ok       ? "closed"
		                     : errmsg ? errmsg
		                              : "broken");
	}
	finish_soon(e);
}

struct os_exec *os_exec_start(struct sbx *s, const struct os_exec_args *a,
                              const struct sbx_exec_obs *obs, char **err)
{
	struct osbx *o = os_of(s);
	struct os_exec *e = xcalloc(1, sizeof *e);
	e->base.s = s;
	e->s = s;
	e->obs = *obs;
	e->internal = a->internal;
	e->keep_stdin = a->keep_stdin;
	if (a->keep_stdin && a->reply_end && *a->reply_end)
		e->reply_end = xstrdup(a->reply_end);
	e->t0 = now_ms();
	snprintf(e->tag, sizeof e->tag, "x%d-%u", (int)getpid(), ++o->seq);
	buf_init(&e->line, 0);
	buf_init(&e->err, 0);
	buf_init(&e->pending, OS_STDIN_MAX);
	buf_init(&e->up_err, 4096);
	char *cmd = command_line(e, a);
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "command", cmd);
	cJSON_AddStringToObject(req, "cwd", "/workspace");
	cJSON_AddBoolToObject(req, "background", 0);
	if (a->timeout_s > 0) /* execd's own, a backstop to ours */
		cJSON_AddNumberToObject(req, "timeout",
		                        ((double)a->timeout_s + 30) * 1000);
	cJSON_AddItemToObject(req, "envs", command_env(e));
	char *body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	free(cmd);
	char *url = xasprintf("%s/command", o->execd);
	const char **h = os_execd_headers(s, "Content-Type: application/json");
	struct http_request r = {
	    .method = "POST",
	    .url = url,
	    .headers = h,
	    .body = body,
	    .body_len = strlen(body),
	    .low_speed_time_s = 60, /* pings come every 3 s */
	    .on_response = on_response,
	    .on_data = on_data,
	    .on_done = on_done,
	    .arg = e,
	};
	e->x = http_start(o->http, &r, err);
	free(h);
	free(url);
	free(body);
	if (!e->x) {
		ox_free(e);
		return NULL;
	}
	if (a->timeout_s > 0)
		e->timer = loop_timer_add(s->loop, (int64_t)a->timeout_s * 1000,
		                          on_timeout, e);
	e->next = o->execs;
	o->execs = e;
	if (!e->internal)
		o->gen++;
	return e;
}

/* ---- a framed exec's request in one command: the cell command ---- */

/* The bytes of data as printf %b reads them in single quotes: printable
 * ASCII as it is, the rest (and \ and ') as \0NNN (octal: bash's and
 * dash's printf both know it). Its length first (out NULL), to see
 * whether it fits a command line. */
static size_t cell_escape(const unsigned char *data, size_t n, char *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = data[i];
		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
			if (out)
				out[k] = (char)c;
			k++;
		} else {
			if (out)
				snprintf(out + k, 6, "\\0%03o", c);
			k += 5;
		}
	}
	if (out)
		out[k] = '\0';
	return k;
}

/* The cell command, a shell script (raw: execd's bash runs it) without
 * a process of its own until its last line: tap.N (the feeder makes
 * it ahead) opened for reading and writing, so that the relay can open
 * it at once and it never sees EOF; the listing's count in ls.N; in.N
 * from the bytes in its text, then in.N.ok; "@W" (the request is in);
 * a byte to wake the feeder; then sed copies what the relay sends into
 * tap.N, line by line as it comes, to its "@D". A kernel that dies
 * before its reply's end leaves it waiting: the exec's end ends it. */
static char *cell_script(const char *tag, unsigned n, const void *data,
                         size_t len, const char *count)
{
	struct buf b;
	buf_init(&b, 0);
	buf_printf(&b,
	           "d=/tmp/.assay-io/%s;n=%u\n"
	           "[ -p \"$d/tap.$n\" ] || mkfifo \"$d/tap.$n\" || exit 1\n"
	           "exec 3<>\"$d/tap.$n\"\n",
	           tag, n);
	if (count)
		buf_printf(&b, "printf %%s %s >\"$d/ls.$n\" || exit 1\n",
		           count);
	size_t k = cell_escape(data, len, NULL);
	char *esc = xmalloc(k + 1);
	cell_escape(data, len, esc);
	buf_printf(&b,
	           "printf %%b '%s' >\"$d/in.$n\" && : >\"$d/in.$n.ok\" || "
	           "exit 1\n"
	           "echo @W\n"
	           "{ printf . >&4; } 4<>\"$d/wake\" 2>/dev/null\n"
	           "exec sed -u '/^@D$/q' <&3\n",
	           esc);
	free(esc);
	return buf_detach(&b);
}

struct os_cell {
	struct sbx *s;
	struct os_exec *k; /* the framed exec it writes to; NULL: detached */
	struct os_exec *x; /* the command */
	struct buf err;    /* its stderr (the first 4 KiB) */
	struct os_b64 list;
	double taken;
	unsigned gen; /* o->gen when it began */
	size_t max;
	int written, listing, listed;
};

static void cell_free(struct os_cell *c)
{
	buf_free(&c->err);
	buf_free(&c->list.out);
	free(c);
}

/* End a cell command at once, without a word (its kernel is gone). */
static void cell_detach(struct os_cell *c)
{
	struct os_exec *x = c->x;
	c->x = NULL;
	c->k = NULL;
	os_exec_detach(x);
	cell_free(c);
}

/* The cell command's listing is whole: os_list answers from it. */
static void cell_listed(struct os_cell *c)
{
	struct os_prelist *p = &os_of(c->s)->pre;
	if (c->list.bad)
		return;
	buf_free(&p->recs);
	p->recs = c->list.out;
	buf_init(&c->list.out, 0);
	p->taken = c->taken;
	p->at = now_ms();
	p->gen = c->gen;
	p->max = c->max;
	p->valid = 1;
}

/* One line of the cell command's stdout (its end stripped). */
static void cell_line(struct os_cell *c, const char *line, size_t n)
{
	if (c->listing && !c->listed) {
		if (n == 2 && !memcmp(line, "@E", 2)) {
			c->listed = 1;
			cell_listed(c);
		} else {
			os_b64_feed(&c->list, line, n);
			os_b64_feed(&c->list, "\n", 1);
		}
		return;
	}
	if (n == 2 && !memcmp(line, "@W", 2)) {
		c->written = 1;
	} else if (n == 2 && !memcmp(line, "@D", 2)) {
		/* the reply is in: the kernel's next request may have a
		 * command of its own while this one ends */
		if (c->k)
			c->k->cell = NULL;
		c->k = NULL;
	} else if (n > 3 && !memcmp(line, "@L ", 3)) {
		c->listing = 1;
		c->taken = strtod(line + 3, NULL);
	} else if (c->k && n && line[0] >= '0' && line[0] <= '9') {
		char *l = xstrndup(line, n);
		stdout_line(c->k, l);
		free(l);
	}
}

static void cell_output(void *arg, enum sbx_stream st, const char *data,
                        size_t n)
{
	struct os_cell *c = arg;
	if (st == SBX_STDERR) {
		if (c->err.len + n <= 4096)
			buf_append(&c->err, data, n);
		return;
	}
	while (n && data[n - 1] == '\n')
		n--;
	cell_line(c, data, n);
}

/* The cell command ended: the kernel's next request may have one. One
 * that could not put its request in leaves a kernel nothing reaches:
 * that one is ended, with why. */
static void cell_exit(void *arg, const struct sbx_exit *ex)
{
	struct os_cell *c = arg;
	struct os_exec *k = c->k;
	c->x = NULL; /* freed after this */
	if (k) {
		k->cell = NULL;
		if (!c->written && !ex->cancelled && !k->finished &&
		    !k->error) {
			char *why = fileop_error(ex, &c->err, "the request", 1);
			k->error = xasprintf("opensandbox: cannot send %s its "
			                     "request: %s",
			                     k->tag, why);
			free(why);
			k->stdin_closed = 1;
			exec_kill(k);
		}
	}
	cell_free(c);
}

/* Put data in as the framed exec k's next request, by a cell command.
 * NULL and *err when it cannot begin (then an upload does it). */
static struct os_cell *cell_start(struct os_exec *k, const void *data, size_t n,
                                  char **err)
{
	struct osbx *o = os_of(k->s);
	struct os_cell *c = xcalloc(1, sizeof *c);
	c->s = k->s;
	c->k = k;
	c->gen = o->gen;
	c->max = o->list_max;
	buf_init(&c->err, 0);
	struct fileop_args fa;
	int list = os_prelist_args(k->s, &fa) == 0;
	buf_init(&c->list.out, list ? fa.out_max : 0);
	char *script =
	    cell_script(k->tag, k->up_n, data, n, list ? fa.num : NULL);
	struct os_exec_args a = {.command = script, .raw = 1, .internal = 1};
	struct sbx_exec_obs obs = {cell_output, cell_exit, c};
	c->x = os_exec_start(k->s, &a, &obs, err);
	free(script);
	if (!c->x) {
		cell_free(c);
		return NULL;
	}
	k->up_n++;
	o->pre.valid = 0; /* this cell's listing will be the one */
	return c;
}

int os_exec_busy(struct sbx *s)
{
	for (struct os_exec *e = os_of(s)->execs; e; e = e->next)
		if (!e->internal && !e->finished &&
		    (!e->keep_stdin || (e->cell && !e->cell->listed) || e->up ||
		     e->pending.len))
			return 1;
	return 0;
}

/* ---- stdin ---- */

static void write_next(struct os_exec *e);

static void ox_up_response(struct http_xfer *x, long status, void *arg)
{
	(void)x;
	((struct os_exec *)arg)->up_status = status;
}

static int ox_up_data(struct http_xfer *x, const char *data, size_t n,
                      void *arg)
{
	(void)x;
	struct os_exec *e = arg;
	if (e->up_err.len + n <= 4096)
		buf_append(&e->up_err, data, n);
	return 0;
}

static void ox_uploaded(struct http_xfer *x, int ok, const char *errmsg,
                        void *arg)
{
	(void)x;
	struct os_exec *e = arg;
	e->up = NULL; /* curl frees it */
	if (!ok || e->up_status != 200) {
		cJSON *j = cJSON_ParseWithLength(
		    e->up_err.data ? e->up_err.data : "", e->up_err.len);
		log_warn("opensandbox: writing to %s's stdin failed: %s "
		         "(HTTP %ld); its stdin is closed",
		         e->tag,
		         !ok ? (errmsg ? errmsg : "no answer")
		             : json_str(j, "message", "refused"),
		         e->up_status);
		cJSON_Delete(j);
		e->stdin_closed = 1;
		buf_reset(&e->pending);
		return;
	}
	e->up_n++;
	write_next(e);
}

/* Upload the next chunk of what is queued as in.N, then in.N.ok. */
static void write_next(struct os_exec *e)
{
	if (e->up || !e->pending.len || e->finished)
		return;
	struct osbx *o = os_of(e->s);
	size_t n =
	    e->pending.len < OS_WRITE_CHUNK ? e->pending.len : OS_WRITE_CHUNK;
	struct buf body, ok_pre, post;
	char *path = xasprintf("/tmp/.assay-io/%s/in.%u", e->tag, e->up_n);
	char *ok = xasprintf("%s.ok", path);
	/* two pairs: in.N with the bytes, then in.N.ok, empty */
	xfer_upload_form(path, &body, &post);
	buf_append(&body, e->pending.data, n);
	buf_puts(&body, "\r\n");
	buf_free(&post);
	xfer_upload_form(ok, &ok_pre, &post);
	buf_append(&body, ok_pre.data, ok_pre.len);
	buf_append(&body, post.data, post.len);
	buf_free(&ok_pre);
	buf_free(&post);
	buf_consume(&e->pending, n);
	char *url = xasprintf("%s/files/upload", o->execd);
	const char **h = os_execd_headers(e->s, XFER_UPLOAD_CTYPE);
	buf_reset(&e->up_err);
	e->up_status = 0;
	struct http_request r = {
	    .method = "POST",
	    .url = url,
	    .headers = h,
	    .body = body.data,
	    .body_len = body.len,
	    .total_timeout_ms = 60000,
	    .on_response = ox_up_response,
	    .on_data = ox_up_data,
	    .on_done = ox_uploaded,
	    .arg = e,
	};
	char *err = NULL;
	e->up = http_start(o->http, &r, &err);
	if (!e->up) {
		log_warn("opensandbox: cannot write stdin: %s",
		         err ? err : "?");
		e->stdin_closed = 1;
	}
	free(err);
	free(h);
	free(url);
	free(ok);
	free(path);
	buf_free(&body);
}

int os_exec_write(struct os_exec *e, const void *data, size_t n)
{
	if (!e->keep_stdin || e->stdin_closed || e->finished)
		return -1;
	if (n == 0) {
		e->stdin_closed = 1; /* the feeder waits on: EOF never comes */
		return 0;
	}
	/* the kernel may change files now (an interrupt comes before the
	 * open reply's own listing) */
	if (!e->cell)
		os_of(e->s)->gen++;
	if (e->reply_end && !e->cell && !e->up && !e->pending.len &&
	    cell_escape(data, n, NULL) <= OS_CELL_INLINE) {
		char *err = NULL;
		e->cell = cell_start(e, data, n, &err);
		if (e->cell)
			return 0;
		log_warn("opensandbox: %s: %s; the request goes by upload",
		         e->tag, err ? err : "?");
		free(err);
	}
	if (buf_append(&e->pending, data, n) < 0)
		return -1;
	write_next(e);
	return 0;
}

/* ---- stopping ---- */

void os_exec_stop(struct sbx *s, int all)
{
	struct osbx *o = os_of(s);
	struct os_exec *e = o->execs, *next;
	for (; e; e = next) {
		next = e->next;
		if (e->internal && !all)
			continue;
		if (e->finished)
			continue;
		e->cancelled = 1;
		send_kill(e);
		exec_finish(e);
		next = o->execs; /* on_exit may have ended others */
	}
}

void os_exec_free_all(struct sbx *s)
{
	struct osbx *o = os_of(s);
	while (o->execs) {
		struct os_exec *e = o->execs;
		if (!e->finished)
			e->cancelled = 1;
		exec_finish(e);
	}
}

void os_exec_detach(struct os_exec *e)
{
	if (!e)
		return;
	if (!e->finished)
		send_kill(e);
	exec_unlink(e);
	ox_free(e);
}
