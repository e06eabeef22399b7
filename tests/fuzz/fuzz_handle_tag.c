/* Caller tags (mxc_handle_tag_set for the thread, mxc_handle_tag for one
 * handle) and the handle dump that prints them:
 * arbitrary bytes as tags (any length, embedded NULs cut them, invalid
 * UTF-8), interleaved with scopes, keeps and frees driven by the input.
 * Checked beyond survival:
 *  - a tag that was accepted appears in the scope's dump (its first 511
 *    bytes), next to the array made while it was set;
 *  - ending the scopes brings the live-handle count back (abort else). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"
#include "tests/fuzz/fuzz_util.h"

#define MAX_TAG 600 /* above the 511 bytes kept: truncation is fuzzed */

static int64_t live_handles(void) {
  int64_t n = -1;
  if (mxc_scope_stats(NULL, &n, NULL) != MXC_OK) abort();
  return n;
}

/* Makes an array under tag (the thread's, or its own set after it was
 * made: late) and checks that the dump names it. */
static void tagged_array(mxc_scope s, const char *tag, int late) {
  if (mxc_handle_tag_set(late ? NULL : tag) != MXC_OK) return; /* full */
  int64_t shape[1] = {2};
  mxc_ndarray a = NULL;
  if (mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                         &a) != MXC_OK) {
    abort();
  }
  if (late && mxc_handle_tag(a, tag) != MXC_OK) {
    mxc_ndarray_free(a); /* the tag table is full */
    return;
  }
  char *dump = NULL;
  if (mxc_handle_dump(s, &dump) != MXC_OK) abort();
  char want[600];
  snprintf(want, sizeof want, "made by mxc_ndarray_create at %.511s", tag);
  if (strstr(dump, want) == NULL) abort();
  mxc_string_free(dump);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_bytes b = {data, size};
  int64_t live0 = live_handles();
  mxc_handle_debug_set(1);
  mxc_scope outer = NULL, inner = NULL;
  if (mxc_scope_begin(&outer) != MXC_OK) abort();
  char tag[MAX_TAG + 1];
  for (int step = 0; step < 16 && b.n > 0; ++step) {
    switch (fz_pick(&b, 4)) {
      case 0: { /* a long tag: a 16-bit length, then the bytes */
        fz_bytes t = fz_split(&b);
        size_t n = t.n < MAX_TAG ? t.n : MAX_TAG;
        memcpy(tag, t.p, n);
        tag[n] = '\0';
        tagged_array(inner ? inner : outer, tag, fz_u8(&b) & 1);
        break;
      }
      case 1:
        tagged_array(inner ? inner : outer, fz_str(&b, tag, 255), 0);
        break;
      case 2: /* open or end the inner scope */
        if (inner == NULL) {
          if (mxc_scope_begin(&inner) != MXC_OK) abort();
        } else {
          if (mxc_scope_end(inner) != MXC_OK) abort();
          inner = NULL;
        }
        break;
      default: /* ending the outer scope first must be refused */
        if (inner != NULL &&
            mxc_scope_end(outer) != MXC_ERR_INVALID_ARGUMENT) {
          abort();
        }
        break;
    }
  }
  mxc_handle_tag_set(NULL);
  if (inner != NULL && mxc_scope_end(inner) != MXC_OK) abort();
  if (mxc_scope_end(outer) != MXC_OK) abort();
  if (live_handles() != live0) abort();
  return 0;
}
