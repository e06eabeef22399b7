package org.mxc.nn;

import org.mxc.Block;

/** An element-wise activation: relu, sigmoid, tanh, softrelu or softsign. */
public final class Activation extends Block {
  /** The activation named kind. */
  public Activation(String kind) {
    super("activation", null, config(null, "activation", kind));
  }
}
