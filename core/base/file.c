#include "core/base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "core/base/error.h"

#define BUF_SIZE (1 << 16)

struct mxc__file {
  int fd;
  int writing;
  size_t used; /* bytes pending in buf (writing) */
  size_t pos;  /* next unread byte in buf (reading) */
  size_t fill; /* valid bytes in buf (reading) */
  char *path;  /* for messages */
  char buf[BUF_SIZE];
};

static atomic_llong g_io_countdown;
static atomic_int g_io_fired;

void mxc__fault_io_arm(int64_t n) {
  atomic_store(&g_io_fired, 0);
  atomic_store(&g_io_countdown, n > 0 ? (long long)n : 0);
}

int mxc__fault_io_fired(void) { return atomic_load(&g_io_fired); }

/* Returns 1 when this I/O operation must fail. */
static int io_fault_step(void) {
  if (atomic_load_explicit(&g_io_countdown, memory_order_relaxed) == 0) {
    return 0;
  }
  if (atomic_fetch_sub(&g_io_countdown, 1) == 1) {
    atomic_store(&g_io_fired, 1);
    return 1;
  }
  return 0;
}

static int file_new(int fd, int writing, const char *path, mxc__file **out) {
  mxc__file *f = mxc__malloc(sizeof *f);
  char *p = mxc__strdup(path);
  if (!f || !p) {
    mxc__free(f);
    mxc__free(p);
    return mxc__error_set(MXC_ERR_OOM, "out of memory opening '%s'", path);
  }
  f->fd = fd;
  f->writing = writing;
  f->used = f->pos = f->fill = 0;
  f->path = p;
  *out = f;
  return MXC_OK;
}

int mxc__file_open_read(const char *path, mxc__file **out) {
  int fd = io_fault_step() ? (errno = EIO, -1) : open(path, O_RDONLY | O_CLOEXEC);
  MXC_RETURN_ERROR_IF(fd < 0, MXC_ERR_IO, "cannot open '%s' for reading: %s",
                      path, strerror(errno));
  int rc = file_new(fd, 0, path, out);
  if (rc != MXC_OK) close(fd);
  return rc;
}

int mxc__file_open_write(const char *path, mxc__file **out) {
  int fd = io_fault_step()
               ? (errno = EIO, -1)
               : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  MXC_RETURN_ERROR_IF(fd < 0, MXC_ERR_IO, "cannot open '%s' for writing: %s",
                      path, strerror(errno));
  int rc = file_new(fd, 1, path, out);
  if (rc != MXC_OK) close(fd);
  return rc;
}

int mxc__file_create_temp(const char *path, mxc__file **out,
                          char **out_tmp_path) {
  size_t n = strlen(path);
  char *tmp = mxc__malloc(n + 16);
  MXC_RETURN_ERROR_IF(!tmp, MXC_ERR_OOM, "out of memory saving '%s'", path);
  snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
  int fd = io_fault_step() ? (errno = EIO, -1) : mkstemp(tmp);
  if (fd < 0) {
    int err = errno;
    mxc__free(tmp);
    return mxc__error_set(MXC_ERR_IO,
                          "cannot create a temporary file next to '%s': %s",
                          path, strerror(err));
  }
  (void)fchmod(fd, 0644); /* mkstemp makes 0600; saved arrays are data */
  int rc = file_new(fd, 1, path, out);
  if (rc != MXC_OK) {
    close(fd);
    unlink(tmp);
    mxc__free(tmp);
    return rc;
  }
  *out_tmp_path = tmp;
  return MXC_OK;
}

int mxc__file_size(mxc__file *f, uint64_t *out) {
  struct stat st;
  MXC_RETURN_ERROR_IF(fstat(f->fd, &st) != 0, MXC_ERR_IO,
                      "cannot stat '%s': %s", f->path, strerror(errno));
  *out = (uint64_t)st.st_size;
  return MXC_OK;
}

/* Writes n bytes straight to the descriptor, retrying partial writes. */
static int write_all(mxc__file *f, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w;
    if (io_fault_step()) {
      /* Simulate a full disk: part of the data lands, then ENOSPC. */
      if (n > 1) (void)!write(f->fd, p, n / 2);
      errno = ENOSPC;
      w = -1;
    } else {
      w = write(f->fd, p, n);
    }
    if (w < 0 && errno == EINTR) continue;
    MXC_RETURN_ERROR_IF(w <= 0, MXC_ERR_IO, "cannot write to '%s': %s",
                        f->path, w < 0 ? strerror(errno) : "no progress");
    p += w;
    n -= (size_t)w;
  }
  return MXC_OK;
}

int mxc__file_write(mxc__file *f, const void *buf, size_t n) {
  const char *p = buf;
  if (f->used + n > BUF_SIZE) {
    MXC_FORWARD_IF_ERROR(write_all(f, f->buf, f->used));
    f->used = 0;
    if (n >= BUF_SIZE) return write_all(f, p, n);
  }
  memcpy(f->buf + f->used, p, n);
  f->used += n;
  return MXC_OK;
}

static int refill(mxc__file *f) {
  for (;;) {
    ssize_t r = io_fault_step() ? (errno = EIO, -1) : read(f->fd, f->buf, BUF_SIZE);
    if (r < 0 && errno == EINTR) continue;
    MXC_RETURN_ERROR_IF(r < 0, MXC_ERR_IO, "cannot read '%s': %s", f->path,
                        strerror(errno));
    f->pos = 0;
    f->fill = (size_t)r;
    return MXC_OK;
  }
}

int mxc__file_read(mxc__file *f, void *buf, size_t n, size_t *got) {
  char *p = buf;
  size_t done = 0;
  while (done < n) {
    if (f->pos == f->fill) {
      MXC_FORWARD_IF_ERROR(refill(f));
      if (f->fill == 0) break; /* end of file */
    }
    size_t take = f->fill - f->pos;
    if (take > n - done) take = n - done;
    memcpy(p + done, f->buf + f->pos, take);
    f->pos += take;
    done += take;
  }
  *got = done;
  return MXC_OK;
}

int mxc__file_seek(mxc__file *f, uint64_t pos) {
  off_t r = (pos > (uint64_t)INT64_MAX || io_fault_step())
                ? (errno = EINVAL, (off_t)-1)
                : lseek(f->fd, (off_t)pos, SEEK_SET);
  MXC_RETURN_ERROR_IF(r < 0, MXC_ERR_IO, "cannot seek to byte %llu of '%s': %s",
                      (unsigned long long)pos, f->path, strerror(errno));
  f->pos = f->fill = 0;
  return MXC_OK;
}

int mxc__file_flush(mxc__file *f) {
  MXC_FORWARD_IF_ERROR(write_all(f, f->buf, f->used));
  f->used = 0;
  return MXC_OK;
}

int mxc__file_close(mxc__file *f) {
  if (!f) return MXC_OK;
  int rc = MXC_OK;
  if (f->writing) {
    rc = write_all(f, f->buf, f->used);
    if (rc == MXC_OK && (io_fault_step() || fsync(f->fd) != 0)) {
      rc = mxc__error_set(MXC_ERR_IO, "cannot sync '%s' to disk: %s", f->path,
                          strerror(errno ? errno : EIO));
    }
  }
  if (close(f->fd) != 0 && rc == MXC_OK && f->writing) {
    rc = mxc__error_set(MXC_ERR_IO, "cannot close '%s': %s", f->path,
                        strerror(errno));
  }
  mxc__free(f->path);
  mxc__free(f);
  return rc;
}

int mxc__file_rename(const char *from, const char *to) {
  int failed = io_fault_step() ? (errno = EIO, 1) : rename(from, to) != 0;
  MXC_RETURN_ERROR_IF(failed, MXC_ERR_IO, "cannot rename '%s' to '%s': %s",
                      from, to, strerror(errno));
  /* Make the rename itself durable: sync the directory (best effort). */
  char dir[4096];
  const char *slash = strrchr(to, '/');
  if (slash && (size_t)(slash - to) < sizeof dir) {
    size_t len = slash == to ? 1 : (size_t)(slash - to);
    memcpy(dir, to, len);
    dir[len] = '\0';
  } else {
    snprintf(dir, sizeof dir, ".");
  }
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
  return MXC_OK;
}

void mxc__file_remove(const char *path) {
  if (path) (void)unlink(path);
}

int mxc__file_replace(const char *path, mxc__file_writer write, void *ctx) {
  mxc__file *f = NULL;
  char *tmp = NULL;
  MXC_FORWARD_IF_ERROR(mxc__file_create_temp(path, &f, &tmp));
  int rc = write(f, ctx);
  int crc = mxc__file_close(f);
  if (rc == MXC_OK) rc = crc;
  if (rc == MXC_OK) rc = mxc__file_rename(tmp, path);
  if (rc != MXC_OK) mxc__file_remove(tmp);
  mxc__free(tmp);
  return rc;
}

static int write_text(mxc__file *f, void *ctx) {
  const char *text = ctx;
  return mxc__file_write(f, text, strlen(text));
}

int mxc__file_replace_text(const char *path, const char *text) {
  return mxc__file_replace(path, write_text, (void *)text);
}
