package org.mxc;

import org.mxc.swig.MxcNative;

/** Image decoding by the codecs' libraries (libjpeg-turbo, libpng). */
public final class Image {
  private Image() {}

  /**
   * A JPEG or PNG image (told by content) as a new (channels, height,
   * width) array: channels 1 (gray) or 3 (RGB), dtype UINT8 or FLOAT32
   * (values 0..255 either way). A corrupt or truncated image throws
   * MxcException (IO) with the codec's message. Any thread.
   */
  public static NDArray decode(byte[] data, int channels, DType dtype) {
    return new NDArray(MxcNative.image_decode(data, channels, dtype.code));
  }
}
