/* theme.c: colour themes. A theme file (themes/NAME.json, or one in
 * $XDG_CONFIG_HOME/assay/themes/) maps each UI element to a colour
 * pair and attributes; what a file leaves out keeps the built-in dark
 * values. A broken file is an error naming the file and the key. */
#include "tui/tui.h"

#include "assay/json.h"
#include "assay/path.h"
#include "assay/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define THEME_FILE_MAX (256u << 10)

static const char *const elem_names[UE_COUNT] = {
    [UE_NORMAL] = "normal",
    [UE_BORDER] = "border",
    [UE_BORDER_FOCUS] = "border_focus",
    [UE_TITLE] = "title",
    [UE_TITLE_FOCUS] = "title_focus",
    [UE_USER_LABEL] = "user_label",
    [UE_USER] = "user",
    [UE_ASSISTANT_LABEL] = "assistant_label",
    [UE_ASSISTANT] = "assistant",
    [UE_HEADING] = "heading",
    [UE_BOLD] = "bold",
    [UE_CODE] = "code",
    [UE_CODE_BLOCK] = "code_block",
    [UE_BULLET] = "bullet",
    [UE_TOOL_CALL] = "tool_call",
    [UE_STDOUT] = "stdout",
    [UE_STDERR] = "stderr",
    [UE_GUTTER_OUT] = "gutter_stdout",
    [UE_GUTTER_ERR] = "gutter_stderr",
    [UE_RUNNING] = "running",
    [UE_OK] = "ok",
    [UE_FAIL] = "fail",
    [UE_SELECTION] = "selection",
    [UE_STATUS] = "status",
    [UE_WARNING] = "warning",
    [UE_ERROR] = "error",
    [UE_APPROVAL] = "approval",
    [UE_INPUT] = "input",
    [UE_PROMPT] = "prompt",
    [UE_TREE_DIR] = "tree_dir",
    [UE_TREE_FILE] = "tree_file",
    [UE_TREE_LINK] = "tree_link",
    [UE_TREE_NEW] = "tree_new",
    [UE_TREE_MODIFIED] = "tree_modified",
    [UE_TREE_SIZE] = "tree_size",
    [UE_MATCH] = "search_match",
    [UE_OVERLAY] = "overlay",
    [UE_DIM] = "dim",
};

const char *ui_elem_name(enum ui_elem e)
{
	return e < UE_COUNT ? elem_names[e] : "?";
}

#define D UI_COLOR_DEFAULT
#define B UI_A_BOLD

/* The built-in dark theme; themes/default.json says the same. */
void ui_theme_builtin(struct ui_theme *t)
{
	static const struct ui_style def[UE_COUNT] = {
	    [UE_NORMAL] = {D, D, 0},        [UE_BORDER] = {241, D, 0},
	    [UE_BORDER_FOCUS] = {75, D, B}, [UE_TITLE] = {250, D, B},
	    [UE_TITLE_FOCUS] = {16, 75, B}, [UE_USER_LABEL] = {114, D, B},
	    [UE_USER] = {252, D, 0},        [UE_ASSISTANT_LABEL] = {75, D, B},
	    [UE_ASSISTANT] = {D, D, 0},     [UE_HEADING] = {215, D, B},
	    [UE_BOLD] = {D, D, B},          [UE_CODE] = {180, 236, 0},
	    [UE_CODE_BLOCK] = {186, D, 0},  [UE_BULLET] = {75, D, 0},
	    [UE_TOOL_CALL] = {246, D, 0},   [UE_STDOUT] = {D, D, 0},
	    [UE_STDERR] = {210, D, 0},      [UE_GUTTER_OUT] = {241, D, 0},
	    [UE_GUTTER_ERR] = {203, D, B},  [UE_RUNNING] = {221, D, 0},
	    [UE_OK] = {114, D, 0},          [UE_FAIL] = {203, D, B},
	    [UE_SELECTION] = {D, 238, 0},   [UE_STATUS] = {252, 236, 0},
	    [UE_WARNING] = {221, D, B},     [UE_ERROR] = {203, D, B},
	    [UE_APPROVAL] = {16, 221, B},   [UE_INPUT] = {D, D, 0},
	    [UE_PROMPT] = {75, D, B},       [UE_TREE_DIR] = {75, D, B},
	    [UE_TREE_FILE] = {D, D, 0},     [UE_TREE_LINK] = {80, D, 0},
	    [UE_TREE_NEW] = {114, D, B},    [UE_TREE_MODIFIED] = {221, D, 0},
	    [UE_TREE_SIZE] = {243, D, 0},   [UE_MATCH] = {16, 220, 0},
	    [UE_OVERLAY] = {252, 237, 0},   [UE_DIM] = {243, D, 0},
	};
	memcpy(t->el, def, sizeof def);
	t->name = xstrdup("default");
	t->path = xstrdup("built-in");
}

#undef D
#undef B

void ui_theme_free(struct ui_theme *t)
{
	free(t->name);
	free(t->path);
	t->name = t->path = NULL;
}

static const char *const color_names[16] = {"black",        "red",
                                            "green",        "yellow",
                                            "blue",         "magenta",
                                            "cyan",         "white",
                                            "bright-black", "bright-red",
                                            "bright-green", "bright-yellow",
                                            "bright-blue",  "bright-magenta",
                                            "bright-cyan",  "bright-white"};

/* The value of a hex digit; -1 if it is none. */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int ui_color_parse(const cJSON *v, int32_t *out)
{
	if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (d != (int)d || d < 0 || d > 255)
			return -1;
		*out = (int32_t)d;
		return 0;
	}
	if (!cJSON_IsString(v))
		return -1;
	const char *s = v->valuestring;
	if (!strcmp(s, "default") || !strcmp(s, "none")) {
		*out = UI_COLOR_DEFAULT;
		return 0;
	}
	size_t n = strlen(s);
	if (s[0] == '#' && (n == 4 || n == 7)) {
		int c[6];
		for (size_t i = 1; i < n; i++)
			if ((c[i - 1] = hexval(s[i])) < 0)
				return -1;
		if (n == 4)
			*out = UI_RGB(c[0] * 17, c[1] * 17, c[2] * 17);
		else
			*out = UI_RGB(c[0] * 16 + c[1], c[2] * 16 + c[3],
			              c[4] * 16 + c[5]);
		return 0;
	}
	for (int i = 0; i < 16; i++)
		if (!strcasecmp(s, color_names[i])) {
			*out = i;
			return 0;
		}
	if (!strcasecmp(s, "gray") || !strcasecmp(s, "grey")) {
		*out = 8;
		return 0;
	}
	return -1;
}

static const int cube[6] = {0, 95, 135, 175, 215, 255};

/* The xterm cube level nearest to v (0..5). */
static int nearest_level(int v)
{
	int best = 0;
	for (int i = 1; i < 6; i++)
		if (abs(cube[i] - v) < abs(cube[best] - v))
			best = i;
	return best;
}

int ui_color_256(int r, int g, int b)
{
	int ri = nearest_level(r), gi = nearest_level(g), bi = nearest_level(b);
	int cr = cube[ri], cg = cube[gi], cb = cube[bi];
	long dc = (long)(cr - r) * (cr - r) + (long)(cg - g) * (cg - g) +
	          (long)(cb - b) * (cb - b);
	/* the grey ramp 232..255 is 8, 18, ... 238 */
	int avg = (r + g + b) / 3;
	int gi2 = avg < 8 ? 0 : (avg - 8) / 10;
	if (gi2 > 23)
		gi2 = 23;
	int gv = 8 + 10 * gi2;
	long dg = (long)(gv - r) * (gv - r) + (long)(gv - g) * (gv - g) +
	          (long)(gv - b) * (gv - b);
	if (dg < dc)
		return 232 + gi2;
	return 16 + 36 * ri + 6 * gi + bi;
}

static const struct {
	const char *name;
	uint16_t attr;
} attr_names[] = {
    {"bold", UI_A_BOLD},       {"dim", UI_A_DIM},
    {"italic", UI_A_ITALIC},   {"underline", UI_A_UNDERLINE},
    {"reverse", UI_A_REVERSE}, {"blink", UI_A_BLINK},
};

static int theme_err(char **err, const char *origin, const char *key,
                     const char *what)
{
	return set_err(err, "theme %s: %s: %s", origin, key, what);
}

/* A colour value, possibly a palette name. */
static int parse_color(const cJSON *v, const cJSON *palette, int32_t *out)
{
	if (cJSON_IsString(v) && palette) {
		const cJSON *p =
		    cJSON_GetObjectItemCaseSensitive(palette, v->valuestring);
		if (p)
			v = p;
	}
	return ui_color_parse(v, out);
}

/* An element's style: a colour alone, or {fg, bg, attrs}. */
static int parse_element(struct ui_style *st, const cJSON *v,
                         const cJSON *palette, const char *origin,
                         const char *name, char **err)
{
	char key[128];
	if (cJSON_IsString(v) || cJSON_IsNumber(v)) {
		/* a colour alone: that foreground, nothing else */
		snprintf(key, sizeof key, "elements.%s", name);
		*st = (struct ui_style){UI_COLOR_DEFAULT, UI_COLOR_DEFAULT, 0};
		if (parse_color(v, palette, &st->fg) < 0)
			return theme_err(
			    err, origin, key,
			    "not a colour: use \"#rrggbb\", 0-255, "
			    "a colour name, a palette entry or "
			    "\"default\"");
		return 0;
	}
	if (!cJSON_IsObject(v)) {
		snprintf(key, sizeof key, "elements.%s", name);
		return theme_err(err, origin, key,
		                 "expected a colour or {\"fg\", \"bg\", "
		                 "\"attrs\"}");
	}
	struct ui_style out = {UI_COLOR_DEFAULT, UI_COLOR_DEFAULT, 0};
	const cJSON *f;
	cJSON_ArrayForEach(f, v)
	{
		snprintf(key, sizeof key, "elements.%s.%s", name, f->string);
		if (!strcmp(f->string, "fg") || !strcmp(f->string, "bg")) {
			int32_t *dst = f->string[0] == 'f' ? &out.fg : &out.bg;
			if (parse_color(f, palette, dst) < 0)
				return theme_err(
				    err, origin, key,
				    "not a colour: use \"#rrggbb\", 0-255, a "
				    "colour name, a palette entry or "
				    "\"default\"");
		} else if (!strcmp(f->string, "attrs")) {
			const cJSON *a;
			if (!cJSON_IsArray(f))
				return theme_err(err, origin, key,
				                 "expected an array such as "
				                 "[\"bold\", \"reverse\"]");
			cJSON_ArrayForEach(a, f)
			{
				size_t i = 0, na = sizeof attr_names /
				                   sizeof *attr_names;
				for (; i < na; i++)
					if (cJSON_IsString(a) &&
					    !strcmp(a->valuestring,
					            attr_names[i].name))
						break;
				if (i == na)
					return theme_err(
					    err, origin, key,
					    "unknown attribute (use bold, dim, "
					    "italic, underline, reverse, "
					    "blink)");
				out.attrs |= attr_names[i].attr;
			}
		} else {
			return theme_err(err, origin, key,
			                 "unknown key (use fg, bg, attrs)");
		}
	}
	*st = out;
	return 0;
}

int ui_theme_parse(struct ui_theme *t, const cJSON *doc, const char *origin,
                   char **err)
{
	if (!cJSON_IsObject(doc))
		return set_err(err, "theme %s: expected a JSON object", origin);
	const cJSON *palette = NULL, *elements = NULL, *f;
	cJSON_ArrayForEach(f, doc)
	{
		if (!strcmp(f->string, "palette")) {
			if (!cJSON_IsObject(f))
				return theme_err(
				    err, origin, "palette",
				    "expected an object of colours");
			palette = f;
		} else if (!strcmp(f->string, "elements")) {
			if (!cJSON_IsObject(f))
				return theme_err(err, origin, "elements",
				                 "expected an object");
			elements = f;
		} else if (strcmp(f->string, "name") &&
		           strcmp(f->string, "description")) {
			return theme_err(err, origin, f->string,
			                 "unknown key (use name, description, "
			                 "palette, elements)");
		}
	}
	cJSON_ArrayForEach(f, palette)
	{
		int32_t c;
		if (ui_color_parse(f, &c) < 0) {
			char key[128];
			snprintf(key, sizeof key, "palette.%s", f->string);
			return theme_err(err, origin, key,
			                 "not a colour: use \"#rrggbb\", 0-255 "
			                 "or a colour name");
		}
	}
	cJSON_ArrayForEach(f, elements)
	{
		int e = 0;
		while (e < UE_COUNT && strcmp(elem_names[e], f->string))
			e++;
		if (e == UE_COUNT) {
			char key[128];
			snprintf(key, sizeof key, "elements.%s", f->string);
			return theme_err(err, origin, key,
			                 "unknown element (see themes/"
			                 "default.json for the list)");
		}
		if (parse_element(&t->el[e], f, palette, origin, f->string,
		                  err) < 0)
			return -1;
	}
	return 0;
}

/* $XDG_CONFIG_HOME/assay/themes (or ~/.config/...); NULL without
 * either. */
static char *user_theme_dir(void)
{
	return path_config_dir("themes");
}

/* The themes/ that come with assay (data_dir: $ASSAY_DATA_DIR, the
 * installed share/assay or the source tree). */
static char *bundled_theme_dir(void)
{
	return xasprintf("%s/themes", data_dir());
}

/* The theme names in dir, each once, for an error message. */
static void list_themes(struct buf *b, const char *dir)
{
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n <= 5 || strcmp(e->d_name + n - 5, ".json"))
			continue;
		/* a user theme may shadow a bundled one: name it once */
		char *item = xasprintf(", %.*s,", (int)(n - 5), e->d_name);
		char *have = xasprintf(", %s,", buf_str(b));
		if (!strstr(have, item))
			buf_printf(b, "%s%.*s", b->len ? ", " : "",
			           (int)(n - 5), e->d_name);
		free(item);
		free(have);
	}
	if (d)
		closedir(d);
}

/* Load the theme file at path into t. */
static int load_file(struct ui_theme *t, const char *path, const char *name,
                     char **err)
{
	char *e = NULL;
	cJSON *doc = json_parse_file(path, THEME_FILE_MAX, &e);
	if (!doc) { /* e names the file already */
		set_err(err, "theme %s", e);
		free(e);
		return -1;
	}
	ui_theme_builtin(t);
	int rc = ui_theme_parse(t, doc, path, err);
	cJSON_Delete(doc);
	free(t->name);
	free(t->path);
	t->name = xstrdup(name);
	t->path = xstrdup(path);
	return rc;
}

/* A character a theme name may hold (no path). */
static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

int ui_theme_load(struct ui_theme *t, const char *name, char **err)
{
	memset(t, 0, sizeof *t);
	if (!name || !*name)
		name = "default";
	if (strchr(name, '/') || strstr(name, ".json"))
		return load_file(t, name, name, err);
	for (const char *p = name; *p; p++)
		if (!name_char(*p))
			return set_err(
			    err,
			    "theme name \"%s\": use letters, digits, "
			    "- and _ (or give a path to a .json file)",
			    name);
	char *dirs[2] = {user_theme_dir(), bundled_theme_dir()};
	int rc = -2;
	for (int i = 0; i < 2 && rc == -2; i++) {
		if (!dirs[i])
			continue;
		char *path = xasprintf("%s/%s.json", dirs[i], name);
		struct stat st;
		if (stat(path, &st) == 0)
			rc = load_file(t, path, name, err);
		free(path);
	}
	if (rc == -2 && !strcmp(name, "default")) {
		ui_theme_builtin(t);
		rc = 0;
	}
	if (rc == -2) {
		struct buf avail;
		buf_init(&avail, 0);
		list_themes(&avail, dirs[0]);
		list_themes(&avail, dirs[1]);
		rc = set_err(err,
		             "theme \"%s\" not found in %s or %s (available: "
		             "%s)",
		             name, dirs[0] ? dirs[0] : "(no config dir)",
		             dirs[1], avail.len ? buf_str(&avail) : "none");
		buf_free(&avail);
	}
	free(dirs[0]);
	free(dirs[1]);
	return rc;
}
