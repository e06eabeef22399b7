package org.mxc;

import org.mxc.swig.MxcNative;

/**
 * A RecordIO file (MXNet's {@code .rec}, as im2rec writes it) opened for
 * reading or writing, with its {@code .idx} index when one is named:
 * records are byte arrays, framed and split around the magic word by mxc.
 *
 * <pre>{@code
 * try (RecordIO w = RecordIO.create("train.rec", "train.idx")) {
 *   w.write(0, ImageRecord.pack(new float[] {3}, 0, 0, jpegBytes));
 * }
 * try (RecordIO r = RecordIO.open("train.rec", "train.idx")) {
 *   for (byte[] rec; (rec = r.read()) != null; ) { ... }
 *   ImageRecord first = ImageRecord.unpack(r.read(0));
 * }
 * }</pre>
 *
 * <p>A damaged or truncated file throws MxcException (IO) naming the file
 * and the byte offset. Not for concurrent use (the file has a cursor):
 * every method is synchronized. Lifetime as {@link DataIter}: {@link
 * #close()} (a writer's flushes first and throws on a failed write), or
 * the Cleaner once unreachable. Records returned are the caller's.
 */
public final class RecordIO extends NativeObject {
  private RecordIO(long handle) {
    super(handle, MxcNative::recordio_free, "RecordIO");
  }

  /** Opens path for reading; idxPath (null: none) enables {@link #read(long)}. */
  public static RecordIO open(String path, String idxPath) {
    return new RecordIO(MxcNative.recordio_open(path, idxPath, "r"));
  }

  /** Creates (or truncates) path for writing, and idxPath (null: none) for its index. */
  public static RecordIO create(String path, String idxPath) {
    return new RecordIO(MxcNative.recordio_open(path, idxPath, "w"));
  }

  /** The next record, or null at the end of the file. */
  public synchronized byte[] read() {
    return current(MxcNative.recordio_read(handle()));
  }

  /** The record the index lists under key (MxcException NOT_FOUND when none); reading goes on after it. */
  public synchronized byte[] read(long key) {
    return current(MxcNative.recordio_read_key(handle(), key));
  }

  private byte[] current(long size) {
    if (size < 0) return null;
    if (size > Integer.MAX_VALUE - 8) {
      throw new MxcException(MxcException.INVALID_ARGUMENT,
          "a record of " + size + " bytes does not fit a Java array");
    }
    byte[] out = new byte[(int) size];
    MxcNative.recordio_copy(handle(), out);
    return out;
  }

  /** Appends one record (no index line). */
  public synchronized void write(byte[] record) {
    MxcNative.recordio_write(handle(), -1, record);
  }

  /** Appends one record and its index line {@code key<TAB>offset} (key >= 0). */
  public synchronized void write(long key, byte[] record) {
    if (key < 0) throw new MxcException(MxcException.INVALID_ARGUMENT, "key " + key + " < 0");
    MxcNative.recordio_write(handle(), key, record);
  }

  /** Hands what was written to the OS; throws what a failed write left. */
  public synchronized void flush() {
    MxcNative.recordio_flush(handle());
  }

  /** The index's keys, in the order of its lines (readers) or as written. */
  public synchronized long[] keys() {
    long h = handle();
    long[] out = new long[(int) MxcNative.recordio_num_keys(h)];
    for (int i = 0; i < out.length; i++) out[i] = MxcNative.recordio_key(h, i);
    return out;
  }

  /** The byte offset of the next record (readers) or of the end of the file (writers). */
  public synchronized long tell() {
    return MxcNative.recordio_tell(handle());
  }

  /** Readers: the next read starts at pos, a record's start (from tell() or the index). */
  public synchronized void seek(long pos) {
    MxcNative.recordio_seek(handle(), pos);
  }

  /** Flushes a writer, then frees the handle (also when the flush throws); idempotent. */
  @Override
  public synchronized void close() {
    if (isOpen()) {
      try {
        MxcNative.recordio_flush(handle());
      } finally {
        super.close();
      }
    }
  }
}
