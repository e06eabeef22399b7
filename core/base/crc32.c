#include "core/base/crc32.h"

#include <pthread.h>

/* Slicing-by-4 tables, built once: 4 KiB, about 4x faster than bytewise,
 * which matters because save/load checksums every byte of every array. */
static uint32_t g_table[4][256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    g_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int t = 1; t < 4; ++t) {
      uint32_t prev = g_table[t - 1][i];
      g_table[t][i] = (prev >> 8) ^ g_table[0][prev & 0xff];
    }
  }
}

uint32_t mxc__crc32(uint32_t crc, const void *data, size_t n) {
  pthread_once(&g_once, build_tables);
  const unsigned char *p = data;
  uint32_t c = ~crc;
  while (n >= 4) {
    c ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
    c = g_table[3][c & 0xff] ^ g_table[2][(c >> 8) & 0xff] ^
        g_table[1][(c >> 16) & 0xff] ^ g_table[0][c >> 24];
    p += 4;
    n -= 4;
  }
  while (n--) c = g_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}
