/* RecordIO: MXNet's record file format (dmlc-core's), read and written.
 *
 * A file is a sequence of records, each made of one or more parts:
 *
 *   uint32 magic 0xced7230a | uint32 lrec | data | zero padding to 4 bytes
 *
 * all little-endian. lrec's low 29 bits are the part's data length, its
 * top 3 bits the continuation flag: 0 a whole record, 1 the first part of
 * a split record, 2 a middle part, 3 the last part. A writer splits a
 * record wherever its data holds the magic word at a 4-byte-aligned
 * offset and drops that word; a reader puts it back between parts. That
 * way the magic appears in the file only where a part starts, so a reader
 * that lands anywhere can find the next record by scanning for it (how
 * MXNet shards a file without an index).
 *
 * The index (`.idx`, written by im2rec and MXNet's MXIndexedRecordIO) is
 * text, one "key<TAB>offset" line per record: offset is the byte where
 * the record's first part starts.
 *
 * An image record (im2rec's) is a record whose data starts with a 24-byte
 * header: uint32 flag, float32 label, uint64 id, uint64 id2. flag 0: one
 * label, the header's; flag n > 0: n float32 labels follow the header
 * (the header's label is ignored). The encoded image follows.
 *
 * Everything read from a file is checked before it is used: a part's
 * length against what is left of the file (so no allocation exceeds the
 * file's size), the continuation flags' order, the index's offsets
 * against the file. A damaged file is MXC_ERR_IO naming the file and the
 * byte offset, never a crash.
 *
 * Thread-safety: one handle is used by one thread at a time. */
#ifndef MXC_CORE_IO_RECORDIO_H_
#define MXC_CORE_IO_RECORDIO_H_

#include <stddef.h>
#include <stdint.h>

#define MXC__RECORDIO_MAGIC 0xced7230aU
/* A part's length field has 29 bits. */
#define MXC__RECORDIO_MAX_PART ((1U << 29) - 1U)
#define MXC__IMAGE_HEADER_SIZE 24

typedef struct mxc__recordio mxc__recordio;

/* Opens path for reading (writing == 0) or creates/truncates it for
 * writing. idx_path: NULL for none; when reading, the index is loaded
 * (and checked against the file); when writing, it is created and
 * write_key adds its lines. */
int mxc__recordio_open(const char *path, const char *idx_path, int writing,
                       mxc__recordio **out);

/* Flushes (writers) and closes; accepts NULL. Errors are lost: call
 * flush first to see them. */
void mxc__recordio_free(mxc__recordio *r);

/* Reads the record at the current position; *has = 0 at the end of the
 * file (the current record is then empty). */
int mxc__recordio_next(mxc__recordio *r, int *has);

/* Steps over the record at the current position without reading its
 * data (headers are read and checked, data is seeked over): *start = its
 * offset; *has = 0 at the end of the file. For building an offset table
 * of a file without an index. */
int mxc__recordio_skip(mxc__recordio *r, uint64_t *start, int *has);

/* Reads the record the index lists under key. MXC_ERR_NOT_FOUND for an
 * unknown key, MXC_ERR_INVALID_ARGUMENT without an index. */
int mxc__recordio_read_key(mxc__recordio *r, int64_t key);

/* The current record (borrowed until the next read or free). */
const void *mxc__recordio_data(const mxc__recordio *r, size_t *size);

/* Appends one record. *offset (may be NULL): where it starts. */
int mxc__recordio_write(mxc__recordio *r, const void *data, size_t size,
                        uint64_t *offset);

/* Appends one record and its index line. */
int mxc__recordio_write_key(mxc__recordio *r, int64_t key, const void *data,
                            size_t size);

/* Keys of the index in file order (read) or as written. */
int64_t mxc__recordio_num_keys(const mxc__recordio *r);
int64_t mxc__recordio_key_at(const mxc__recordio *r, int64_t i);

/* Byte offset of the next record (read) or of the end (write). */
uint64_t mxc__recordio_tell(const mxc__recordio *r);

/* Readers only: the next read starts at pos, which must be a record's
 * first byte (a multiple of 4 within the file). */
int mxc__recordio_seek(mxc__recordio *r, uint64_t pos);

/* Writers: everything written so far reaches the OS. */
int mxc__recordio_flush(mxc__recordio *r);

int mxc__recordio_is_writer(const mxc__recordio *r);

/* ---- image records ---- */

typedef struct mxc__image_header {
  uint32_t flag;
  float label;
  uint64_t id, id2;
  const void *labels; /* flag > 0: the flag labels, little-endian float32 */
  size_t payload_offset;
} mxc__image_header;

/* Parses the header of an image record of size bytes. */
/* Names record `rec` of the file at path for messages, into buf (n bytes):
 * "PREFIX'PATH' record REC". A path too long for buf keeps its end, where
 * the file's name is ("'...long/tail/images.rec'"). */
void mxc__record_what(char *buf, size_t n, const char *prefix,
                      const char *path, int64_t rec);

int mxc__image_header_parse(const void *rec, size_t size,
                            mxc__image_header *out);

/* Label i: the header's label when flag is 0 (i must be 0), else label i
 * of the flag labels (i < flag). */
float mxc__image_header_label(const mxc__image_header *h, uint32_t i);

/* Bytes an image record with n_labels labels and payload_size bytes
 * needs; 0 when that overflows. n_labels == 1 writes flag 0 (the label in
 * the header), as im2rec does for one label; otherwise flag n_labels. */
size_t mxc__image_record_size(int n_labels, size_t payload_size);

/* Writes the record into out (mxc__image_record_size bytes). */
void mxc__image_record_pack(const float *labels, int n_labels, uint64_t id,
                            uint64_t id2, const void *payload,
                            size_t payload_size, void *out);

#endif /* MXC_CORE_IO_RECORDIO_H_ */
