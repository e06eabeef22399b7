/* Shared helpers of the libFuzzer targets (docs/fuzzing.md).
 *
 * Every target defines LLVMFuzzerTestOneInput and drives the library
 * through its public C API only, the way a hostile file or caller would.
 * Built with --config=fuzz it links libFuzzer; in every other
 * configuration it links driver.c, which replays files (the corpus
 * regression tests). */
#ifndef MXC_TESTS_FUZZ_FUZZ_UTIL_H_
#define MXC_TESTS_FUZZ_FUZZ_UTIL_H_

#include <stddef.h>
#include <stdint.h>

#include "mxc/mxc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Input bytes consumed front to back; reads past the end give zeros, so a
 * target never has to check how much is left. */
typedef struct fz_bytes {
  const uint8_t *p;
  size_t n;
} fz_bytes;

uint8_t fz_u8(fz_bytes *b);
uint32_t fz_u32(fz_bytes *b);
/* A value in [0, n) (n > 0). */
uint32_t fz_pick(fz_bytes *b, uint32_t n);
/* Up to max bytes as a NUL-terminated string in buf (buf holds max + 1):
 * a length byte, then that many bytes. */
const char *fz_str(fz_bytes *b, char *buf, size_t max);
/* Splits off the first part: a 16-bit length, then that many bytes (or
 * what is left); *b keeps the rest. */
fz_bytes fz_split(fz_bytes *b);

/* A path naming a file that holds exactly data[0..size): an in-memory
 * file (memfd) reached through /proc/self/fd, one per slot (0..3), reused
 * from input to input, so readers of file names are fuzzed without disk
 * traffic. Aborts when memfd is unavailable (the target cannot run). */
const char *fz_file(int slot, const uint8_t *data, size_t size);

/* Reads arr to the host when it holds at most 1 << 22 elements (errors,
 * e.g. from a sparse array or failed async work, are ignored: the point
 * is that reading never crashes). Accepts NULL. */
void fz_touch(mxc_ndarray arr);

/* Shards it by an input byte v: 0 leaves it whole; else num_parts =
 * (v >> 4) - 1 and part_index = (v & 15) - 1, both in [-1, 14], so
 * invalid pairs (refused, the iterator stays whole) come up as well as
 * valid ones. */
void fz_iter_parts(mxc_data_iter it, uint8_t v);

/* Reads up to max_batches batches of an iterator (data and label of each
 * touched and freed), then resets it and reads one more. */
void fz_iter_drain(mxc_data_iter it, int max_batches);

/* Silences the library's log (once) and turns engine work synchronous
 * where the target wants failures reported at the call. */
void fz_init(void);

#endif /* MXC_TESTS_FUZZ_FUZZ_UTIL_H_ */
