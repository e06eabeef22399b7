package org.mxc.nn;

import java.util.Map;
import org.mxc.Block;

/**
 * Batch normalization over axis 1: gamma, beta and the running mean and
 * variance (updated by training forward passes, no gradient).
 */
public final class BatchNorm extends Block {
  /** The defaults (momentum 0.9, epsilon 1e-5). */
  public BatchNorm() {
    this(null, null);
  }

  /** With a name and keys (axis, momentum, epsilon, use_global_stats, ...). */
  public BatchNorm(String name, Map<String, ?> options) {
    super("batchnorm", name, options);
  }
}
