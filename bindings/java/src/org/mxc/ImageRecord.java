package org.mxc;

import java.util.Arrays;
import org.mxc.swig.MxcNative;

/**
 * An image record as im2rec lays it out: a header with the label (or a
 * label array), two 64-bit ids, then the encoded image (JPEG or PNG).
 * {@link #pack} and {@link #unpack} are mxc's (one label goes into the
 * header, as im2rec writes it). Immutable (the arrays are copies), so
 * thread-safe.
 */
public final class ImageRecord {
  private final float[] labels;
  private final long id, id2;
  private final byte[] image;

  private ImageRecord(float[] labels, long id, long id2, byte[] image) {
    this.labels = labels;
    this.id = id;
    this.id2 = id2;
    this.image = image;
  }

  /** The record's bytes: labels (any count), ids (uint64 bits) and the image. */
  public static byte[] pack(float[] labels, long id, long id2, byte[] image) {
    long size = MxcNative.recordio_pack_image(labels, id, id2, image, null);
    if (size > Integer.MAX_VALUE - 8) {
      throw new MxcException(MxcException.INVALID_ARGUMENT,
          "an image record of " + size + " bytes does not fit a Java array");
    }
    byte[] out = new byte[(int) size];
    MxcNative.recordio_pack_image(labels, id, id2, image, out);
    return out;
  }

  /** Parses record's header (MxcException IO when it is too short for what it claims). */
  public static ImageRecord unpack(byte[] record) {
    float[] labels = new float[MxcNative.recordio_image_labels(record, null)];
    MxcNative.recordio_image_labels(record, labels);
    long offset = MxcNative.recordio_image_field(record, 2);
    return new ImageRecord(labels, MxcNative.recordio_image_field(record, 0),
        MxcNative.recordio_image_field(record, 1),
        Arrays.copyOfRange(record, (int) offset, record.length));
  }

  /** The labels (one for a header-only label). */
  public float[] labels() {
    return labels.clone();
  }

  /** The id, an unsigned 64-bit number in a long (Long.toUnsignedString shows it). */
  public long id() {
    return id;
  }

  /** The second id (unsigned, as {@link #id()}). */
  public long id2() {
    return id2;
  }

  /** The encoded image. */
  public byte[] image() {
    return image.clone();
  }
}
