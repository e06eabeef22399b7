package org.mxc.nn;

import java.util.Map;
import org.mxc.Block;

/** 2-D pooling: max, average and their global forms. */
public final class Pool2D extends Block {
  private Pool2D(String kind, Map<String, ?> config) {
    super(kind, null, config);
  }

  /** Max pooling over size x size windows, stride size. */
  public static Pool2D max(int size) {
    return new Pool2D("maxpool2d", config(null, "pool_size", size));
  }

  /** Average pooling over size x size windows, stride size. */
  public static Pool2D avg(int size) {
    return new Pool2D("avgpool2d", config(null, "pool_size", size));
  }

  /** Max over each whole channel. */
  public static Pool2D globalMax() {
    return new Pool2D("global_maxpool2d", null);
  }

  /** Average over each whole channel. */
  public static Pool2D globalAvg() {
    return new Pool2D("global_avgpool2d", null);
  }

  /** kind "maxpool2d" or "avgpool2d" with keys (pool_size, strides, padding, ceil_mode, ...). */
  public static Pool2D of(String kind, Map<String, ?> options) {
    return new Pool2D(kind, options);
  }
}
