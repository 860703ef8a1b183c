/* rtree.c: a treap of disjoint address intervals, keyed by start.
 *
 * Used by the dependence index (task.c) and the present tables (data.c). The
 * tree holds nodes embedded in the callers' structs and never allocates.
 * Expected O(log n) per operation.
 */
#include "internal.h"

#include <string.h>

static unsigned rtree__rand(maccrt_rtree *t)
{
    /* xorshift32; the seed only shapes the tree, never the results. */
    unsigned x = t->seed ? t->seed : 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    t->seed = x;
    return x;
}

/* Splits `n` into the nodes with start < key (*l) and start >= key (*r). */
static void rtree__split(maccrt_rnode *n, uintptr_t key, maccrt_rnode **l, maccrt_rnode **r)
{
    if (!n) {
        *l = *r = NULL;
        return;
    }
    maccrt_rnode *sub;
    if (n->start < key) {
        rtree__split(n->right, key, &sub, r);
        if (n->right != sub)
            n->right = sub;
        *l = n;
    } else {
        rtree__split(n->left, key, l, &sub);
        if (n->left != sub)
            n->left = sub;
        *r = n;
    }
}

/* Joins l and r where every start in l is below every start in r. */
static maccrt_rnode *rtree__merge(maccrt_rnode *l, maccrt_rnode *r)
{
    if (!l)
        return r;
    if (!r)
        return l;
    if (l->prio > r->prio) {
        l->right = rtree__merge(l->right, r);
        return l;
    }
    r->left = rtree__merge(l, r->left);
    return r;
}

static size_t rtree__hash(uintptr_t a)
{
    uint64_t x = (uint64_t)a;
    x ^= x >> 21;
    x *= 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 40) % MACCRT_RTREE_HINTS;
}

/* The node that starts at a, if the hint has it. */
static maccrt_rnode *rtree__hinted(const maccrt_rtree *t, uintptr_t a)
{
    maccrt_rnode *n = t->hint[rtree__hash(a)];
    return n && n->start == a ? n : NULL;
}

/* The nodes above n's place (a higher priority) are only read: n replaces
 * the link to the subtree it heads, which is split at n->start into its
 * children. Splitting the whole tree and merging it back rewrote the links
 * of every node on the root's path, so each insert invalidated the top of
 * the tree in every other core's cache, and a look-up in a directory that
 * other threads' maps kept changing (the residency term, under the runtime
 * lock) could miss at every level (bench/dispatch on 2 vCPUs: 8-10% more
 * tasks per second without it). */
void maccrt_rtree_insert(maccrt_rtree *t, maccrt_rnode *n)
{
    n->left = n->right = NULL;
    n->prio = rtree__rand(t);
    maccrt_rnode **link = &t->root;
    while (*link && (*link)->prio >= n->prio)
        link = n->start < (*link)->start ? &(*link)->left : &(*link)->right;
    rtree__split(*link, n->start, &n->left, &n->right);
    *link = n;
    t->count++;
    t->hint[rtree__hash(n->start)] = n;
}

void maccrt_rtree_remove(maccrt_rtree *t, maccrt_rnode *n)
{
    /* Find the link that points at n, then replace n by its merged children. */
    maccrt_rnode **link = &t->root;
    while (*link && *link != n)
        link = n->start < (*link)->start ? &(*link)->left : &(*link)->right;
    if (!*link)
        return;
    *link = rtree__merge(n->left, n->right);
    n->left = n->right = NULL;
    t->count--;
    if (t->hint[rtree__hash(n->start)] == n)
        t->hint[rtree__hash(n->start)] = NULL;
}

/* Greatest start <= a. */
static maccrt_rnode *rtree__floor(const maccrt_rtree *t, uintptr_t a)
{
    maccrt_rnode *n = t->root, *best = NULL;
    while (n) {
        if (n->start <= a) {
            best = n;
            n = n->right;
        } else {
            n = n->left;
        }
    }
    return best;
}

/* Smallest start > a. */
static maccrt_rnode *rtree__above(const maccrt_rtree *t, uintptr_t a)
{
    maccrt_rnode *n = t->root, *best = NULL;
    while (n) {
        if (n->start > a) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return best;
}

maccrt_rnode *maccrt_rtree_find(const maccrt_rtree *t, uintptr_t a)
{
    maccrt_rnode *h = rtree__hinted(t, a);
    if (h)
        return a < h->end ? h : NULL;
    maccrt_rnode *n = rtree__floor(t, a);
    return n && a < n->end ? n : NULL;
}

maccrt_rnode *maccrt_rtree_first_overlap(const maccrt_rtree *t, uintptr_t a, uintptr_t b)
{
    /* a node starting at a is the first one overlapping [a, b) (the nodes
     * are disjoint: none before it reaches a) */
    maccrt_rnode *h = rtree__hinted(t, a);
    if (h && a < b)
        return h;
    /* One descent finds both the greatest start <= a and the smallest start
     * > a (the last node the search for a turned left at): a section that is
     * not in the tree (the residency term asking every device, a write
     * invalidating the other devices' copies) cost two walks. */
    maccrt_rnode *n = t->root, *floor = NULL, *above = NULL;
    while (n) {
        if (n->start <= a) {
            floor = n;
            n = n->right;
        } else {
            above = n;
            n = n->left;
        }
    }
    if (floor && floor->end > a)
        return floor;
    return above && above->start < b ? above : NULL;
}

maccrt_rnode *maccrt_rtree_next(const maccrt_rtree *t, const maccrt_rnode *n)
{
    return rtree__above(t, n->start);
}

maccrt_rnode *maccrt_rtree_next_below(const maccrt_rtree *t, const maccrt_rnode *n, uintptr_t b)
{
    /* the next node starts at or after n's end */
    return n->end >= b ? NULL : rtree__above(t, n->start);
}

static size_t rtree__collect(maccrt_rnode *n, maccrt_rnode **out, size_t k)
{
    while (n) { /* (the right spine by iteration, the left by recursion: depth O(log n) expected) */
        /* the right child is read once the left subtree is done: asked for
         * now, its line comes meanwhile (nodes last written by other cores:
         * one miss after the other, 120-150 ns each, was the walk of a fake
         * GPU's 768 entries in the flush) */
        if (n->right)
            __builtin_prefetch(n->right);
        k = rtree__collect(n->left, out, k);
        out[k++] = n;
        n = n->right;
    }
    return k;
}

size_t maccrt_rtree_collect(const maccrt_rtree *t, maccrt_rnode **out)
{
    return rtree__collect(t->root, out, 0);
}

void maccrt_rtree_clear(maccrt_rtree *t)
{
    t->root = NULL;
    t->count = 0;
    memset(t->hint, 0, sizeof t->hint);
}
