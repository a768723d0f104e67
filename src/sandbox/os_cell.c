/* os_cell.c: a kernel's stdin and stdout through execd, which gives a
 * command none: the feeder and relay around it, and a cell command per
 * request. A cell command puts its request in and brings the reply
 * back, with a listing of the workspace; os_exec.c runs the commands.
 *
 * The kernel's command is a pipeline: a feeder that waits for files in
 * /tmp/.assay-io/TAG, in.N and then an empty in.N.ok, in order, and
 * copies in.N to the kernel once in.N.ok is there (and removes both);
 * the kernel; a relay that base64s every read of its stdout on a line
 * of its own, after the offset of its first byte in the stream, so
 * binary frames survive execd's line-based text stream.
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
 * interrupt) or too big for a command line goes by upload (os_exec.c).
 * The relay's own stdout carries what is not part of a reply (the
 * hello); its lines and the cell command's go out in the stream's
 * order by their offsets, whichever comes first (os_exec.c). A cell
 * command that dies hands the relay back its stdout; one whose kernel
 * dies is ended with the kernel's exec. */
#include "assay/util.h"
#include "sandbox/fileop.h"
#include "sandbox/os_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OS_CELL_INLINE (96u << 10) /* a write in its command's text */

/* ---- the kernel's pipeline ---- */

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

void os_cell_pipeline(struct buf *b, const char *tag, const char *run,
                      const char *reply_end)
{
	char *relay = os_quote(relay_py);
	char *feeder = os_quote(feeder_py);
	char *end = os_quote(reply_end ? reply_end : "");
	buf_printf(b,
	           "d=/tmp/.assay-io/%s\n"
	           "mkdir -p \"$d\" && mkfifo \"$d/wake\"%s "
	           "|| exit 125\n"
	           "python3 -u -c %s \"$d\" | %s | "
	           "python3 -u -c %s \"$d\" %s\n"
	           "rc=${PIPESTATUS[1]}\nrm -rf \"$d\"\nexit $rc\n",
	           tag, reply_end ? " \"$d/ctl\"" : "", feeder, run, relay,
	           end);
	free(end);
	free(feeder);
	free(relay);
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

int os_cell_fits(const void *data, size_t n)
{
	return cell_escape(data, n, NULL) <= OS_CELL_INLINE;
}

struct os_cell {
	struct sbx *s;
	struct os_cell_hooks h; /* to its framed exec, while attached */
	int attached;           /* 0: its reply is in, or detached */
	struct os_exec *x;      /* the command */
	struct buf err;         /* its stderr (the first 4 KiB) */
	struct os_b64 list;
	double taken;
	unsigned gen; /* o->gen when it began */
	size_t max;
	int asked; /* its script lists the workspace (within max) */
	int written, listing, listed;
};

static void cell_free(struct os_cell *c)
{
	buf_free(&c->err);
	buf_free(&c->list.out);
	free(c);
}

void os_cell_detach(struct os_cell *c)
{
	struct os_exec *x = c->x;
	c->x = NULL;
	c->attached = 0;
	os_exec_detach(x);
	cell_free(c);
}

int os_cell_listed(const struct os_cell *c)
{
	return c->listed;
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
		if (c->attached) {
			c->attached = 0;
			c->h.done(c->h.arg, NULL);
		}
	} else if (c->asked && n > 3 && !memcmp(line, "@L ", 3)) {
		/* (a listing not asked for has no bound: not taken) */
		c->listing = 1;
		c->taken = strtod(line + 3, NULL);
	} else if (c->attached && n && line[0] >= '0' && line[0] <= '9') {
		char *l = xstrndup(line, n);
		c->h.line(c->h.arg, l);
		free(l);
	}
}

/* The cell command's output: stdout line by line, stderr kept. */
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
 * that could not put its request in says why. */
static void cell_exit(void *arg, const struct sbx_exit *ex)
{
	struct os_cell *c = arg;
	c->x = NULL; /* freed after this */
	if (c->attached) {
		c->attached = 0;
		char *why = !c->written && !ex->cancelled
		                ? fileop_error(ex, &c->err, "the request", 1)
		                : NULL;
		c->h.done(c->h.arg, why);
		free(why);
	}
	cell_free(c);
}

struct os_cell *os_cell_start(struct sbx *s, const char *tag, unsigned n,
                              const void *data, size_t len,
                              const struct os_cell_hooks *h, char **err)
{
	struct osbx *o = os_of(s);
	struct os_cell *c = xcalloc(1, sizeof *c);
	c->s = s;
	c->h = *h;
	c->attached = 1;
	c->gen = o->gen;
	c->max = o->list_max;
	buf_init(&c->err, 0);
	struct fileop_args fa;
	int list = os_prelist_args(s, &fa) == 0;
	c->asked = list;
	buf_init(&c->list.out, list ? fa.out_max : 0);
	char *script = cell_script(tag, n, data, len, list ? fa.num : NULL);
	struct os_exec_args a = {.command = script, .raw = 1, .internal = 1};
	struct sbx_exec_obs obs = {cell_output, cell_exit, c};
	c->x = os_exec_start(s, &a, &obs, err);
	free(script);
	if (!c->x) {
		cell_free(c);
		return NULL;
	}
	o->pre.valid = 0; /* this cell's listing will be the one */
	return c;
}
