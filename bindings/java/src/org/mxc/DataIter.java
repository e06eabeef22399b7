package org.mxc;

import java.lang.ref.Cleaner;
import org.mxc.swig.MxcNative;

/**
 * Batches of a data set (IDX files: MNIST, Fashion-MNIST): flat float32
 * images scaled to [0, 1] and float32 labels; the last batch is padded.
 *
 * <pre>{@code
 * try (DataIter it = DataIter.idx(images, labels, 128, true, 42)) {
 *   while (it.next()) { NDArray x = it.data(), y = it.label(); ... }
 * }
 * }</pre>
 *
 * <p>Not for concurrent use: mxc requires calls on one iterator to be
 * serialized, so every method here is synchronized. Lifetime as {@link
 * NDArray}; the arrays from {@link #data()}/{@link #label()} are new
 * handles to the current batch, overwritten by the next {@link #next()}.
 */
public final class DataIter implements AutoCloseable {
  private static final class Free implements Runnable {
    private final long handle;

    Free(long handle) {
      this.handle = handle;
    }

    @Override
    public void run() {
      MxcNative.data_iter_free(handle);
    }
  }

  private long handle;
  private final Cleaner.Cleanable cleanable;

  private DataIter(long handle) {
    this.handle = handle;
    this.cleanable = Mxc.CLEANER.register(this, new Free(handle));
  }

  /** An iterator over IDX image and label files (gzip accepted). */
  public static DataIter idx(String images, String labels, long batchSize, boolean shuffle,
      long seed) {
    return new DataIter(MxcNative.data_iter_idx(images, labels, batchSize, shuffle ? 1 : 0, seed));
  }

  private long handle() {
    long h = handle;
    if (h == 0) throw new MxcException(MxcException.INVALID_HANDLE, "DataIter is closed");
    return h;
  }

  /** Advances to the next batch; false at the end of the epoch. */
  public synchronized boolean next() {
    return MxcNative.data_iter_next(handle()) == 1;
  }

  /** The current batch's data (a new handle). */
  public synchronized NDArray data() {
    return new NDArray(MxcNative.data_iter_data(handle()));
  }

  /** The current batch's labels (a new handle). */
  public synchronized NDArray label() {
    return new NDArray(MxcNative.data_iter_label(handle()));
  }

  /** Back to the first batch (reshuffled when shuffling). */
  public synchronized void reset() {
    MxcNative.data_iter_reset(handle());
  }

  /** Frees the iterator now; idempotent. */
  @Override
  public synchronized void close() {
    if (handle != 0) {
      handle = 0;
      cleanable.clean();
    }
  }
}
