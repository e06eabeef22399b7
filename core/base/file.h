/* Files, through one small layer so tests can inject I/O failures.
 *
 * Every read, write, sync and rename mxc does goes through here. A test
 * arms mxc__fault_io_arm(N): the N-th I/O operation from then on fails
 * (a write fails after writing only part of its buffer, like a full disk),
 * so every error path of save/load can be walked. */
#ifndef MXC_CORE_BASE_FILE_H_
#define MXC_CORE_BASE_FILE_H_

#include <stddef.h>
#include <stdint.h>

typedef struct mxc__file mxc__file;

/* Opens path for reading. MXC_ERR_IO names the path and the OS reason. */
int mxc__file_open_read(const char *path, mxc__file **out);

/* Creates (or truncates) path for writing, in place: for streams written
 * record by record (RecordIO), where a reader never expects the whole
 * file at once. MXC_ERR_IO names the path and the OS reason. */
int mxc__file_open_write(const char *path, mxc__file **out);

/* Creates a new temporary file next to `path` (same directory, so a rename
 * onto path is atomic); *out_tmp_path is owned by the caller (mxc__free). */
int mxc__file_create_temp(const char *path, mxc__file **out,
                          char **out_tmp_path);

/* Size of an open file in bytes. */
int mxc__file_size(mxc__file *f, uint64_t *out);

/* Writes all n bytes (buffered). */
int mxc__file_write(mxc__file *f, const void *buf, size_t n);

/* Moves a file opened for reading to byte pos (buffered data is
 * dropped). A position past the end is not an error: the next read gets
 * end of file. */
int mxc__file_seek(mxc__file *f, uint64_t pos);

/* Writes buffered data of a file opened for writing to the OS (no sync). */
int mxc__file_flush(mxc__file *f);

/* Reads up to n bytes; *got < n only at end of file. */
int mxc__file_read(mxc__file *f, void *buf, size_t n, size_t *got);

/* Flushes buffered data and fsyncs (files opened for writing); closes. The
 * file is closed even when it fails. Accepts NULL. */
int mxc__file_close(mxc__file *f);

/* Atomically replaces `to` with `from`, then syncs the directory. */
int mxc__file_rename(const char *from, const char *to);

/* Removes a file, ignoring errors (cleanup of temporaries). */
void mxc__file_remove(const char *path);

/* Writes a file atomically: a temporary next to path, filled by
 * write(f, ctx), flushed, synced and renamed over path; on any failure the
 * temporary is removed and path is untouched. Readers see the old file or
 * the complete new one. */
typedef int (*mxc__file_writer)(mxc__file *f, void *ctx);
int mxc__file_replace(const char *path, mxc__file_writer write, void *ctx);

/* mxc__file_replace with a NUL-terminated text. */
int mxc__file_replace_text(const char *path, const char *text);

/* ---- for tests ---- */
/* The n-th I/O operation from now fails (n <= 0 disarms). */
void mxc__fault_io_arm(int64_t n);
int mxc__fault_io_fired(void);

#endif /* MXC_CORE_BASE_FILE_H_ */
