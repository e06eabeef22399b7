package org.mxc.nn;

import java.util.Map;
import org.mxc.Block;

/** Layer normalization over the last axis: gamma and beta. */
public final class LayerNorm extends Block {
  /** The defaults (axis -1, epsilon 1e-5). */
  public LayerNorm() {
    this(null, null);
  }

  /** With a name and keys (axis, epsilon, scale, center, ...). */
  public LayerNorm(String name, Map<String, ?> options) {
    super("layernorm", name, options);
  }
}
