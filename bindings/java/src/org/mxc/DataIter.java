package org.mxc;

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
public final class DataIter extends NativeObject {
  private DataIter(long handle) {
    super(handle, MxcNative::data_iter_free, "DataIter");
  }

  /** An iterator over IDX image and label files (gzip accepted). */
  public static DataIter idx(String images, String labels, long batchSize, boolean shuffle,
      long seed) {
    return new DataIter(MxcNative.data_iter_idx(images, labels, batchSize, shuffle ? 1 : 0, seed));
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

  /** Frees the native iterator now; idempotent. */
  @Override
  public synchronized void close() {
    super.close();
  }
}
