package org.mxc.nn;

import org.mxc.Block;

/** Rows of a (inputDim, outputDim) weight looked up by integer index. */
public final class Embedding extends Block {
  /** A table of inputDim vectors of outputDim. */
  public Embedding(int inputDim, int outputDim) {
    super("embedding", null, config(null, "input_dim", inputDim, "output_dim", outputDim));
  }
}
