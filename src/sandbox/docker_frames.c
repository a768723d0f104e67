/* docker_frames.c: the demultiplexer of Docker's attached exec stream
 * (Tty false). Each frame is an 8-byte header [type, 0, 0, 0, size as
 * u32 big-endian] and size bytes of payload; headers and payloads
 * arrive split anywhere, so this is a small state machine that holds
 * at most one partial header. */
#include "sandbox/docker_internal.h"

#include <string.h>

void dk_demux_init(struct dk_demux *d)
{
	memset(d, 0, sizeof *d);
}

static int stream_of(unsigned char type)
{
	return type == 2 || type == 3 ? 2 : 1;
}

int dk_demux_feed(struct dk_demux *d, const char *data, size_t n,
                  dk_frame_fn fn, void *arg)
{
	while (n > 0) {
		if (d->bad) {
			fn(arg, 1, data, n);
			return -1;
		}
		if (d->left > 0) {
			size_t take = n < d->left ? n : d->left;
			fn(arg, d->stream, data, take);
			d->left -= (uint32_t)take;
			data += take;
			n -= take;
			continue;
		}
		size_t want = sizeof d->hdr - d->hdr_len;
		size_t take = n < want ? n : want;
		memcpy(d->hdr + d->hdr_len, data, take);
		d->hdr_len += take;
		data += take;
		n -= take;
		if (d->hdr_len < sizeof d->hdr)
			break;
		d->hdr_len = 0;
		if (d->hdr[0] > 3 || d->hdr[1] || d->hdr[2] || d->hdr[3]) {
			/* Not a frame: hand over what we held, raw. */
			d->bad = 1;
			fn(arg, 1, (const char *)d->hdr, sizeof d->hdr);
			continue;
		}
		d->stream = stream_of(d->hdr[0]);
		d->left = (uint32_t)d->hdr[4] << 24 |
		          (uint32_t)d->hdr[5] << 16 | (uint32_t)d->hdr[6] << 8 |
		          (uint32_t)d->hdr[7];
	}
	return d->bad ? -1 : 0;
}

int dk_demux_idle(const struct dk_demux *d)
{
	return !d->bad && d->left == 0 && d->hdr_len == 0;
}
