package org.mxc;

import org.mxc.swig.MxcNative;

/**
 * Batches of a data set: IDX files (MNIST, Fashion-MNIST: flat float32
 * images scaled to [0, 1] and float32 labels; the last batch is padded),
 * or a RecordIO file of images decoded and augmented on worker threads
 * (MXNet's ImageRecordIter).
 *
 * <pre>{@code
 * try (DataIter it = DataIter.idx(images, labels, 128, true, 42)) {
 *   while (it.next()) { NDArray x = it.data(), y = it.label(); ... }
 * }
 * try (DataIter it = DataIter.imageRecord(Map.of("path_imgrec", "train.rec",
 *     "data_shape", new int[] {3, 28, 28}, "batch_size", 64, "rand_crop", true))) { ... }
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

  /**
   * An iterator over IDX files with the layout chosen: flat gives (batch,
   * rows * cols) batches (an MLP), else (batch, 1, rows, cols) (a CNN);
   * discardLast drops an incomplete last batch (training), else it is
   * padded (evaluation; fit leaves the pad rows out of its metrics).
   */
  public static DataIter idx(String images, String labels, long batchSize, boolean shuffle,
      long seed, boolean flat, boolean discardLast) {
    return new DataIter(MxcNative.data_iter_idx_layout(images, labels, batchSize,
        shuffle ? 1 : 0, seed, flat ? 1 : 0, discardLast ? 1 : 0));
  }

  /**
   * CSV rows of numbers (no header; the field count of the first row) with
   * the labels in a second CSV file (null: none), in file order, the last
   * batch padded.
   */
  public static DataIter csv(String data, String labels, long batchSize) {
    return new DataIter(MxcNative.data_iter_csv(data, labels, batchSize));
  }

  /**
   * MXNet's ImageRecordIter over a {@code .rec} of image records, with its
   * parameters by name (path_imgrec, data_shape, batch_size, shuffle,
   * seed, resize, rand_crop, rand_mirror, mean_r, ..., as
   * mxc_data_iter_image_record_create lists them): values are strings,
   * numbers, booleans or int[]/long[] shapes. Data batches are float32
   * (batch, C, H, W), labels (batch) or (batch, label_width). Unknown keys
   * and bad values throw MxcException (INVALID_ARGUMENT) naming them; an
   * image that cannot be decoded fails the {@link #next()} reaching it
   * (IO). {@link #close()} stops the decoding threads.
   */
  public static DataIter imageRecord(java.util.Map<String, ?> params) {
    return new DataIter(MxcNative.data_iter_image_record(Op.kv(params)));
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

  /** How many trailing examples of the current batch are padding (repeated from the epoch's start). */
  public synchronized long pad() {
    return MxcNative.data_iter_pad(handle());
  }

  /** The number of examples (of this iterator's part) per epoch. */
  public synchronized long numExamples() {
    return MxcNative.data_iter_num_examples(handle());
  }

  /**
   * From now on reads only part {@code partIndex} of {@code numParts}
   * (MXNet's num_parts / part_index, mxc_data_iter_set_parts): the parts
   * are disjoint and together hold every example once; an IDX or image
   * record part is the contiguous range [n*k/p, n*(k+1)/p) of the file's
   * n, shuffled within itself, and {@link #numExamples()} is its size.
   * Padding and the last batch apply to the part. Call it before the
   * first {@link #next()} or right after {@link #reset()}; it applies to
   * every later epoch. Throws MxcException (INVALID_ARGUMENT) for
   * numParts outside [1, 2^30], partIndex outside [0, numParts) or a call
   * in the middle of an epoch, and (IO) for an image record part without
   * records; the part then stays as it was.
   */
  public synchronized void setParts(long numParts, long partIndex) {
    MxcNative.data_iter_set_parts(handle(), numParts, partIndex);
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
