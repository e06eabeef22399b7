package org.mxc.nn;

import java.util.Map;
import org.mxc.Block;

/** A 2-D convolution over (batch, channels, height, width). */
public final class Conv2D extends Block {
  /** channels filters of kernel x kernel, stride 1, no padding. */
  public Conv2D(int channels, int kernel) {
    this(channels, kernel, null, null, null);
  }

  /** With activation (null: none). */
  public Conv2D(int channels, int kernel, String activation) {
    this(channels, kernel, activation, null, null);
  }

  /** With a name and further keys (strides, padding, dilation, groups, use_bias, ...). */
  public Conv2D(int channels, int kernel, String activation, String name,
      Map<String, ?> options) {
    super("conv2d", name,
        config(options, "channels", channels, "kernel_size", kernel, "activation", activation));
  }
}
