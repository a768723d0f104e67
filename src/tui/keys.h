/* keys.h: the names of the keys the workbench reads. A key comes as a
 * pair (key, fn): fn set for curses' function keys (KEY_UP, KEY_F(1),
 * ... and ours below), else key is a character: a control byte for the
 * Ctrl- keys, a Unicode code point for text. */
#ifndef ASSAY_TUI_KEYS_H
#define ASSAY_TUI_KEYS_H

#include <curses.h>

/* Characters (fn == 0). */
enum {
	UI_KEY_CTRL_A = 0x01, /* line start */
	UI_KEY_CTRL_B = 0x02, /* pager: a page back */
	UI_KEY_CTRL_C = 0x03, /* stop; twice when idle: quit */
	UI_KEY_CTRL_D = 0x04, /* delete the character under the cursor */
	UI_KEY_CTRL_E = 0x05, /* line end */
	UI_KEY_CTRL_F = 0x06, /* pager: a page on */
	UI_KEY_CTRL_G = 0x07, /* a history search: cancel it */
	UI_KEY_CTRL_H = 0x08, /* backspace, as some terminals send it */
	UI_KEY_TAB = 0x09,
	UI_KEY_CTRL_J = 0x0a, /* a new line in a text (Alt-Enter too) */
	UI_KEY_CTRL_K = 0x0b, /* delete to the line's end */
	UI_KEY_CTRL_L = 0x0c, /* redraw the screen */
	UI_KEY_ENTER = 0x0d,
	UI_KEY_CTRL_Q = 0x11, /* quit */
	UI_KEY_CTRL_R = 0x12, /* the message box: search its history */
	UI_KEY_CTRL_U = 0x15, /* delete to the start (a field: all of it) */
	UI_KEY_CTRL_W = 0x17, /* delete the word before the cursor */
	UI_KEY_ESC = 0x1b,
	UI_KEY_SPACE = 0x20, /* the first character that is text */
	UI_KEY_DEL = 0x7f,   /* backspace, as most terminals send it */
};

/* Function keys of our own (fn == 1), after curses' KEY_MAX: the
 * bracketed paste's brackets (ESC [ 200 ~ and ESC [ 201 ~). */
enum {
	UI_KEY_PASTE_BEGIN = KEY_MAX + 1,
	UI_KEY_PASTE_END = KEY_MAX + 2,
};

/* Backspace however the terminal sends it. */
static inline int ui_key_backspace(int key, int fn)
{
	return fn ? key == KEY_BACKSPACE
	          : key == UI_KEY_DEL || key == UI_KEY_CTRL_H;
}

/* Enter, or the new line that Ctrl-J and Alt-Enter give. */
static inline int ui_key_enter(int key, int fn)
{
	return !fn && (key == UI_KEY_ENTER || key == UI_KEY_CTRL_J);
}

/* A character that is text (not a control byte). */
static inline int ui_key_text(int key, int fn)
{
	return !fn && key >= UI_KEY_SPACE && key != UI_KEY_DEL;
}

/* What keys.c remembers between keys (written by keys.c alone). */
/* part: keys, owner: src/tui/keys.c */
struct ui_keys {
	int ctrl_c_armed; /* Ctrl-C once with nothing running: again quits */
	int in_paste;     /* between a bracketed paste's begin and end */
};

#endif
