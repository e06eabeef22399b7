/* The ready queue of a worker pool: higher priority first, FIFO among
 * equal priorities.
 *
 * Priority 0 (nearly all work) goes to a plain FIFO. Other priorities go
 * to a pairing heap threaded through the ops themselves (child = first
 * child, next = next sibling), so queuing never allocates. Insert is O(1);
 * pop is O(log n) amortized. */
#include <stddef.h>

#include "core/base/assert.h"
#include "core/engine/internal.h"

/* 1 when a must run before b. */
static int before(const mxc__op *a, const mxc__op *b) {
  return a->priority > b->priority ||
         (a->priority == b->priority && a->seq < b->seq);
}

/* Links two heap roots; returns the new root. */
static mxc__op *meld(mxc__op *a, mxc__op *b) {
  if (a == NULL) return b;
  if (b == NULL) return a;
  if (before(b, a)) {
    mxc__op *t = a;
    a = b;
    b = t;
  }
  b->next = a->child;
  a->child = b;
  return a;
}

/* Standard two-pass pairing: meld siblings in pairs left to right, then
 * meld the pairs right to left. The pairs are chained through next in
 * reverse, so the second pass is a simple walk. */
static mxc__op *merge_children(mxc__op *first) {
  mxc__op *pairs = NULL;
  while (first != NULL) {
    mxc__op *a = first;
    mxc__op *b = a->next;
    first = b ? b->next : NULL;
    a->next = NULL;
    if (b) b->next = NULL;
    mxc__op *m = meld(a, b);
    m->next = pairs;
    pairs = m;
  }
  mxc__op *root = NULL;
  while (pairs != NULL) {
    mxc__op *next = pairs->next;
    pairs->next = NULL;
    root = meld(root, pairs);
    pairs = next;
  }
  return root;
}

void mxc__readyq_push(mxc__readyq *q, mxc__op *op) {
  /* An op is queued once: it is the FIFO's tail or the heap's root only
   * after this push. */
  MXC__ASSERT(op != q->fifo_tail && op != q->heap);
  MXC__ASSERT((q->fifo_head == NULL) == (q->fifo_tail == NULL));
  op->next = NULL;
  if (op->priority == 0) {
    if (q->fifo_tail) {
      q->fifo_tail->next = op;
    } else {
      q->fifo_head = op;
    }
    q->fifo_tail = op;
    return;
  }
  op->child = NULL;
  op->seq = q->seq++;
  q->heap = meld(q->heap, op);
}

mxc__op *mxc__readyq_pop(mxc__readyq *q) {
  mxc__op *h = q->heap;
  /* The heap wins over the FIFO (priority 0) when its best is positive,
   * and when the FIFO is empty. */
  if (h != NULL && (h->priority > 0 || q->fifo_head == NULL)) {
    /* Priority 0 goes to the FIFO only; a heap root has no siblings. */
    MXC__ASSERT(h->priority != 0);
    MXC__ASSERT(h->next == NULL);
    q->heap = merge_children(h->child);
    MXC__ASSERT(q->heap == NULL || !before(q->heap, h));
    h->child = NULL;
    return h;
  }
  mxc__op *op = q->fifo_head;
  if (op != NULL) {
    MXC__ASSERT(op->priority == 0);
    q->fifo_head = op->next;
    if (q->fifo_head == NULL) q->fifo_tail = NULL;
    op->next = NULL;
  }
  return op;
}
