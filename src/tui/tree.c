/* tree.c: the workspace tree the Workspace pane shows: nodes by path,
 * directories first then names in byte order, marks for what the last
 * command created or changed, expansion state, and the list of visible
 * rows. Fed by workspace_change events and by full listings (a rescan
 * after inotify says something moved). Bounded to UI_TREE_MAX nodes. */
#include "tui/tui.h"

#include "assay/json.h"
#include "assay/util.h"

#include <stdlib.h>
#include <string.h>

void ui_tree_init(struct ui_tree *t)
{
	memset(t, 0, sizeof *t);
	t->root.type = UI_N_DIR;
	t->root.expanded = 1;
	t->root.name = xstrdup("");
	t->root.path = xstrdup("");
	t->vis_dirty = 1;
}

/* A node's subtree and its own strings. */
static void node_free(struct ui_node *n)
{
	for (size_t i = 0; i < n->nkid; i++) {
		node_free(n->kid[i]);
		free(n->kid[i]);
	}
	free(n->kid);
	free(n->name);
	free(n->path);
}

void ui_tree_free(struct ui_tree *t)
{
	node_free(&t->root);
	free(t->vis);
	free(t->depth);
	memset(t, 0, sizeof *t);
}

/* Directories first, then by name. */
static int node_cmp(const struct ui_node *a, const struct ui_node *b)
{
	int ad = a->type == UI_N_DIR, bd = b->type == UI_N_DIR;
	if (ad != bd)
		return bd - ad;
	return strcmp(a->name, b->name);
}

/* Where key goes among n's children (sorted). */
static size_t lower_bound(const struct ui_node *n, const struct ui_node *key)
{
	size_t lo = 0, hi = n->nkid;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (node_cmp(n->kid[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of the child called name (a name is unique among siblings
 * whatever its type), or where it would go with *found 0. */
static size_t kid_index(const struct ui_node *n, const char *name, int dir,
                        int *found)
{
	struct ui_node key = {.name = (char *)name};
	for (int pass = 0; pass < 2; pass++) {
		int d = pass ? !dir : dir;
		key.type = d ? UI_N_DIR : UI_N_FILE;
		size_t i = lower_bound(n, &key);
		if (i < n->nkid && !strcmp(n->kid[i]->name, name) &&
		    (n->kid[i]->type == UI_N_DIR) == d) {
			*found = 1;
			return i;
		}
	}
	*found = 0;
	key.type = dir ? UI_N_DIR : UI_N_FILE;
	return lower_bound(n, &key);
}

/* parent's child name, made when missing (within UI_TREE_MAX). */
static struct ui_node *kid_add(struct ui_tree *t, struct ui_node *parent,
                               const char *name, enum ui_ntype type)
{
	int found;
	size_t i = kid_index(parent, name, type == UI_N_DIR, &found);
	if (found)
		return parent->kid[i];
	if (t->count >= UI_TREE_MAX) {
		t->truncated = 1;
		return NULL;
	}
	if (parent->nkid == parent->capkid) {
		parent->capkid = parent->capkid ? parent->capkid * 2 : 4;
		parent->kid =
		    xrealloc(parent->kid, parent->capkid * sizeof *parent->kid);
	}
	memmove(parent->kid + i + 1, parent->kid + i,
	        (parent->nkid - i) * sizeof *parent->kid);
	struct ui_node *n = xcalloc(1, sizeof *n);
	n->name = xstrdup(name);
	n->path = *parent->path ? xasprintf("%s/%s", parent->path, name)
	                        : xstrdup(name);
	n->type = type;
	n->parent = parent;
	n->seen = t->gen;
	/* the first levels open by themselves */
	n->expanded = type == UI_N_DIR && !*parent->path;
	parent->kid[i] = n;
	parent->nkid++;
	t->count++;
	t->vis_dirty = 1;
	return n;
}

/* Keep siblings sorted after a node changed type. */
static void resort(struct ui_node *parent, struct ui_node *n)
{
	size_t i = 0;
	while (i < parent->nkid && parent->kid[i] != n)
		i++;
	if (i == parent->nkid)
		return;
	memmove(parent->kid + i, parent->kid + i + 1,
	        (parent->nkid - i - 1) * sizeof *parent->kid);
	parent->nkid--;
	int found;
	size_t j = kid_index(parent, n->name, n->type == UI_N_DIR, &found);
	memmove(parent->kid + j + 1, parent->kid + j,
	        (parent->nkid - j) * sizeof *parent->kid);
	parent->kid[j] = n;
	parent->nkid++;
}

struct ui_node *ui_tree_find(struct ui_tree *t, const char *path)
{
	struct ui_node *n = &t->root;
	char *copy = xstrdup(path), *save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c && n;
	     c = strtok_r(NULL, "/", &save)) {
		int found;
		size_t i = kid_index(n, c, 0, &found);
		n = found ? n->kid[i] : NULL;
	}
	free(copy);
	return n;
}

struct ui_node *ui_tree_set(struct ui_tree *t, const char *path,
                            enum ui_ntype type, double size, double mtime,
                            enum ui_mark mark)
{
	struct ui_node *n = &t->root;
	char *copy = xstrdup(path), *save = NULL;
	char *c = strtok_r(copy, "/", &save);
	while (c && n) {
		char *next = strtok_r(NULL, "/", &save);
		enum ui_ntype ty = next ? UI_N_DIR : type;
		struct ui_node *k = kid_add(t, n, c, ty);
		if (k && k->type != ty) {
			k->type = ty;
			resort(n, k);
			t->vis_dirty = 1;
		}
		if (k)
			k->seen = t->gen;
		n = k;
		c = next;
	}
	free(copy);
	if (!n || n == &t->root)
		return NULL;
	if (n->size != size || n->mark != mark)
		t->vis_dirty = 1;
	n->size = size;
	n->mtime = mtime;
	if (mark != UI_MARK_NONE &&
	    !(n->mark == UI_MARK_NEW && mark == UI_MARK_MOD))
		n->mark = mark;
	return n;
}

/* n out of its parent (and the count). */
static void detach(struct ui_tree *t, struct ui_node *n)
{
	struct ui_node *p = n->parent;
	for (size_t i = 0; i < p->nkid; i++)
		if (p->kid[i] == n) {
			memmove(p->kid + i, p->kid + i + 1,
			        (p->nkid - i - 1) * sizeof *p->kid);
			p->nkid--;
			break;
		}
	size_t count = 1;
	/* count the subtree before freeing it */
	struct ui_node **stack = xmalloc(sizeof *stack);
	size_t sn = 0, scap = 1;
	stack[sn++] = n;
	while (sn) {
		struct ui_node *x = stack[--sn];
		for (size_t i = 0; i < x->nkid; i++) {
			if (sn == scap) {
				scap *= 2;
				stack = xrealloc(stack, scap * sizeof *stack);
			}
			stack[sn++] = x->kid[i];
			count++;
		}
	}
	free(stack);
	t->count -= count < t->count ? count : t->count;
	node_free(n);
	free(n);
	t->vis_dirty = 1;
}

void ui_tree_remove(struct ui_tree *t, const char *path)
{
	struct ui_node *n = ui_tree_find(t, path);
	if (n && n != &t->root)
		detach(t, n);
}

/* A listing's type name as a node type. */
static enum ui_ntype type_of(const char *s)
{
	if (!strcmp(s, "dir"))
		return UI_N_DIR;
	if (!strcmp(s, "link"))
		return UI_N_LINK;
	if (!strcmp(s, "file"))
		return UI_N_FILE;
	return UI_N_OTHER;
}

/* Drop the nodes a listing did not mention. */
static void prune(struct ui_tree *t, struct ui_node *n)
{
	for (size_t i = 0; i < n->nkid;) {
		struct ui_node *k = n->kid[i];
		if (k->seen != t->gen) {
			detach(t, k);
			continue;
		}
		prune(t, k);
		i++;
	}
}

/* Take a full listing of the sandbox (not an event). */
void ui_tree_sync(struct ui_tree *t, const cJSON *list, int truncated)
{
	t->gen++;
	t->root.seen = t->gen;
	const cJSON *e;
	cJSON_ArrayForEach(e, list)
	{
		const char *path = json_str(e, "path", NULL);
		if (!path || !*path)
			continue;
		double size = json_num(e, "size", 0);
		double mtime = json_num(e, "mtime", 0);
		enum ui_ntype type = type_of(json_str(e, "type", "file"));
		struct ui_node *old = ui_tree_find(t, path);
		enum ui_mark mark = UI_MARK_NONE;
		if (!old)
			mark = UI_MARK_NEW;
		else if (type != UI_N_DIR &&
		         (old->size != size || old->mtime != mtime))
			mark = UI_MARK_MOD;
		ui_tree_set(t, path, type, size, mtime, mark);
	}
	t->truncated = truncated;
	if (!truncated)
		prune(t, &t->root);
}

/* No new/modified marks under n; *changed if there were. */
static void clear_marks(struct ui_node *n, int *changed)
{
	if (n->mark != UI_MARK_NONE)
		*changed = 1;
	n->mark = UI_MARK_NONE;
	for (size_t i = 0; i < n->nkid; i++)
		clear_marks(n->kid[i], changed);
}

void ui_tree_clear_marks(struct ui_tree *t)
{
	int changed = 0;
	clear_marks(&t->root, &changed);
	if (changed)
		t->vis_dirty = 1;
}

/* One visible row more. */
static void vis_push(struct ui_tree *t, struct ui_node *n, int depth)
{
	if (t->nvis == t->capvis) {
		t->capvis = t->capvis ? t->capvis * 2 : 64;
		t->vis = xrealloc(t->vis, t->capvis * sizeof *t->vis);
		t->depth = xrealloc(t->depth, t->capvis * sizeof *t->depth);
	}
	t->vis[t->nvis] = n;
	t->depth[t->nvis++] = depth;
}

/* The visible rows under n: its children, and theirs when expanded. */
static void vis_walk(struct ui_tree *t, struct ui_node *n, int depth)
{
	for (size_t i = 0; i < n->nkid; i++) {
		vis_push(t, n->kid[i], depth);
		if (n->kid[i]->type == UI_N_DIR && n->kid[i]->expanded)
			vis_walk(t, n->kid[i], depth + 1);
	}
}

void ui_tree_visible(struct ui_tree *t)
{
	if (!t->vis_dirty)
		return;
	t->nvis = 0;
	vis_walk(t, &t->root, 0);
	t->vis_dirty = 0;
}

void ui_tree_expand(struct ui_tree *t, struct ui_node *n, int open)
{
	n->expanded = open;
	t->vis_dirty = 1;
}
