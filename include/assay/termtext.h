/* termtext.h: the one sanitizer between text from the outside world
 * (model text, tool output, file names, errors, what a terminal sent)
 * and a terminal. Every printer (the headless progress, its prompts,
 * the workbench) shows untrusted text through term_clean, so the same
 * bytes look the same everywhere and nothing in them can move the
 * cursor, change modes, talk to the terminal or reorder what is shown. */
#ifndef ASSAY_TERMTEXT_H
#define ASSAY_TERMTEXT_H

#include <stddef.h>
#include <stdint.h>

enum {
	TERM_CLEAN_NEWLINES = 1,  /* keep \n, and \r\n as \n (else ^J, ^M) */
	TERM_CLEAN_TABS = 2,      /* expand \t to spaces, stops every 4 */
	TERM_CLEAN_KEEP_TABS = 4, /* keep \t itself, for a line printer
	                             (TERM_CLEAN_TABS wins over it) */
};

/* How a character is shown. */
enum term_form {
	TERM_AS_IS, /* printable: itself */
	TERM_CARET, /* C0 controls and DEL: ^X (^[ for ESC, ^? for DEL) */
	/* by its code point, <U+XXXX>: C1 controls; bidi controls
	 * (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C) and the other
	 * invisible formatting characters (zero-width space and joiners,
	 * soft hyphen, BOM, U+2060-U+206F, U+FFF9-U+FFFB); characters
	 * the locale gives no width (unassigned, noncharacters) */
	TERM_CODE,
};

/* Untrusted s[0..n) made safe to print: valid UTF-8 (an invalid byte
 * becomes U+FFFD, never the byte itself: a lone 0x9b is CSI to an
 * 8-bit terminal), no control byte (^X), C1, bidi and formatting
 * characters shown as <U+XXXX>; \n and \t only as flags say. */
char *term_clean(const char *s, size_t n, int flags);

/* How cp is shown (the rules of term_clean, for a caller that draws
 * character by character). */
enum term_form term_cp_form(uint32_t cp);
/* The cells cp takes on a terminal (wcwidth: the locale's tables);
 * -1 for a control or a character the locale does not know. */
int term_cp_width(uint32_t cp);

#endif
