/* termtext.c: the one sanitizer between untrusted text and a terminal
 * (assay/termtext.h): which characters are shown as themselves, which
 * as ^X and which by their code point, and term_clean, which applies
 * that to a string. The workbench's stream interpreter (tui/sanitize.c)
 * asks the same rules character by character. */
#include "assay/termtext.h"

#include "assay/buf.h"
#include "assay/util.h"

#include <wchar.h>

/* Characters that reorder or hide text (bidi controls, zero-width
 * formatting): shown by their code point so names cannot disguise. */
static int term_cp_invisible(uint32_t cp)
{
	return cp == 0x061C || cp == 0x00AD || (cp >= 0x200B && cp <= 0x200F) ||
	       (cp >= 0x202A && cp <= 0x202E) ||
	       (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF ||
	       (cp >= 0xFFF9 && cp <= 0xFFFB);
}

int term_cp_width(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
		return -1;
	if (cp < 0x7F)
		return 1;
	return wcwidth((wchar_t)cp);
}

enum term_form term_cp_form(uint32_t cp)
{
	if (cp < 0x20 || cp == 0x7f)
		return TERM_CARET;
	if ((cp >= 0x80 && cp < 0xA0) || term_cp_invisible(cp) ||
	    term_cp_width(cp) < 0)
		return TERM_CODE;
	return TERM_AS_IS;
}

char *term_clean(const char *s, size_t n, int flags)
{
	struct buf b;
	buf_init(&b, 0);
	int col = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = utf8_decode(s + i, n - i, &cp);
		if (cp == '\n' && (flags & TERM_CLEAN_NEWLINES)) {
			buf_append(&b, "\n", 1);
			col = 0;
		} else if (cp == '\r' && i + 1 < n && s[i + 1] == '\n' &&
		           (flags & TERM_CLEAN_NEWLINES)) {
			/* \r\n: the \n does the work */
		} else if (cp == '\t' && (flags & TERM_CLEAN_TABS)) {
			do {
				buf_append(&b, " ", 1);
			} while (++col % 4);
		} else if (cp == '\t' && (flags & TERM_CLEAN_KEEP_TABS)) {
			buf_append(&b, "\t", 1);
			col = (col / 8 + 1) * 8;
		} else if (term_cp_form(cp) == TERM_CARET) {
			char v[2] = {'^', (char)(cp == 0x7f ? '?' : cp + 64)};
			buf_append(&b, v, 2);
			col += 2;
		} else if (term_cp_form(cp) == TERM_CODE) {
			buf_printf(&b, "<U+%04X>", (unsigned)cp);
			col += 8;
		} else if (cp == 0xFFFD) {
			/* an invalid byte decodes as U+FFFD: never pass the
			 * byte itself (a lone 0x9b is CSI to some terminals) */
			buf_append(&b, "\xEF\xBF\xBD", 3);
			col += 1;
		} else {
			buf_append(&b, s + i, len);
			col += term_cp_width(cp);
		}
		i += len;
	}
	return buf_detach(&b);
}
