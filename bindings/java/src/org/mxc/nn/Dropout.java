package org.mxc.nn;

import org.mxc.Block;

/** Zeroes inputs with probability rate in training (a no-op in inference). */
public final class Dropout extends Block {
  /** Dropout of rate (0 <= rate < 1). */
  public Dropout(double rate) {
    super("dropout", null, config(null, "rate", rate));
  }
}
