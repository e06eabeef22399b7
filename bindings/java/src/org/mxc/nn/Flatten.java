package org.mxc.nn;

import org.mxc.Block;

/** Reshapes (batch, ...) to (batch, product of the rest). */
public final class Flatten extends Block {
  /** A flatten layer. */
  public Flatten() {
    super("flatten", null, null);
  }
}
