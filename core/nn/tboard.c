/* TensorBoard event files, written from the format's description: a file
 * of TFRecords (u64 length, masked CRC-32C of the length's 8 bytes, the
 * data, masked CRC-32C of the data; little-endian), each holding one
 * Event protocol buffer: wall_time (1, double), step (2, int64),
 * file_version (3, string; the first record, "brain.Event:2") or summary
 * (5, Summary: repeated value (1, Value: tag (1, string), simple_value (2,
 * float))). The mask is ((crc >> 15) | (crc << 17)) + 0xa282ead8. */
#include "core/nn/tboard.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "core/base/error.h"

struct mxc__tb {
  FILE *f;
  char *path;
};

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), bitwise: event
 * records are small. */
static uint32_t crc32c(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
  }
  return ~c;
}

static uint32_t masked_crc(const uint8_t *p, size_t n) {
  uint32_t c = crc32c(p, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

/* A protocol-buffer message being built in a fixed buffer. */
typedef struct pb {
  uint8_t b[1024];
  size_t n;
  int overflow;
} pb;

static void pb_bytes(pb *m, const void *p, size_t n) {
  if (m->n + n > sizeof m->b) {
    m->overflow = 1;
    return;
  }
  memcpy(m->b + m->n, p, n);
  m->n += n;
}

static void pb_varint(pb *m, uint64_t v) {
  uint8_t t[10];
  size_t n = 0;
  do {
    t[n++] = (uint8_t)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
    v >>= 7;
  } while (v);
  pb_bytes(m, t, n);
}

static void pb_le(pb *m, uint64_t v, size_t n) {
  uint8_t t[8];
  for (size_t i = 0; i < n; ++i) t[i] = (uint8_t)(v >> (8 * i));
  pb_bytes(m, t, n);
}

/* A length-delimited field: tag then length then the bytes. */
static void pb_field(pb *m, int field, const void *p, size_t n) {
  pb_varint(m, (uint64_t)field << 3 | 2);
  pb_varint(m, n);
  pb_bytes(m, p, n);
}

static void pb_double(pb *m, int field, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  pb_varint(m, (uint64_t)field << 3 | 1);
  pb_le(m, u, 8);
}

static int write_record(mxc__tb *t, const pb *m) {
  MXC_RETURN_ERROR_IF(m->overflow, MXC_ERR_INVALID_ARGUMENT,
                      "tensorboard: an event is larger than 1 KiB (a tag too "
                      "long?)");
  pb head = {.n = 0};
  pb_le(&head, m->n, 8);
  pb_le(&head, masked_crc(head.b, 8), 4);
  pb tail = {.n = 0};
  pb_le(&tail, masked_crc(m->b, m->n), 4);
  int ok = fwrite(head.b, 1, head.n, t->f) == head.n &&
           fwrite(m->b, 1, m->n, t->f) == m->n &&
           fwrite(tail.b, 1, tail.n, t->f) == tail.n;
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_IO, "tensorboard: writing '%s' failed",
                      t->path);
  return MXC_OK;
}

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void mxc__tb_close(mxc__tb *t) {
  if (!t) return;
  if (t->f) fclose(t->f);
  mxc__free(t->path);
  mxc__free(t);
}

/* Opens dir/events.out.tfevents.<seconds>.<host> for writing. */
static int open_file(mxc__tb *t, const char *dir) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    return mxc__error_set(MXC_ERR_IO, "tensorboard: cannot create '%s': %s",
                          dir, strerror(errno));
  }
  char host[64] = "localhost";
  gethostname(host, sizeof host - 1);
  size_t len = strlen(dir) + strlen(host) + 64;
  t->path = mxc__malloc(len);
  MXC_RETURN_ERROR_IF(!t->path, MXC_ERR_OOM, "tensorboard: out of memory");
  snprintf(t->path, len, "%s/events.out.tfevents.%lld.%s", dir,
           (long long)time(NULL), host);
  t->f = fopen(t->path, "wb");
  MXC_RETURN_ERROR_IF(!t->f, MXC_ERR_IO, "tensorboard: cannot open '%s': %s",
                      t->path, strerror(errno));
  return MXC_OK;
}

int mxc__tb_open(const char *dir, mxc__tb **out) {
  mxc__tb *t = mxc__calloc(1, sizeof *t);
  MXC_RETURN_ERROR_IF(!t, MXC_ERR_OOM, "tensorboard: out of memory");
  int rc = open_file(t, dir);
  if (rc == MXC_OK) {
    pb m = {.n = 0};
    pb_double(&m, 1, wall_now());
    pb_field(&m, 3, "brain.Event:2", 13);
    rc = write_record(t, &m);
  }
  if (rc == MXC_OK) rc = mxc__tb_flush(t);
  if (rc != MXC_OK) {
    mxc__tb_close(t);
    return rc;
  }
  *out = t;
  return MXC_OK;
}

int mxc__tb_scalar(mxc__tb *t, const char *tag, int64_t step, float value) {
  pb v = {.n = 0}, s = {.n = 0}, e = {.n = 0};
  uint32_t u;
  memcpy(&u, &value, 4);
  pb_field(&v, 1, tag, strlen(tag));
  pb_varint(&v, 2u << 3 | 5);
  pb_le(&v, u, 4);
  pb_field(&s, 1, v.b, v.n);
  pb_double(&e, 1, wall_now());
  pb_varint(&e, 2u << 3);
  pb_varint(&e, (uint64_t)step);
  pb_field(&e, 5, s.b, s.n);
  e.overflow |= v.overflow | s.overflow;
  return write_record(t, &e);
}

int mxc__tb_flush(mxc__tb *t) {
  MXC_RETURN_ERROR_IF(fflush(t->f) != 0, MXC_ERR_IO,
                      "tensorboard: writing '%s' failed", t->path);
  return MXC_OK;
}
