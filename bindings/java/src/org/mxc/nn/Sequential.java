package org.mxc.nn;

import org.mxc.Block;

/**
 * A container running its children in order: the first takes the input,
 * each next one the previous output.
 *
 * <pre>{@code
 * Sequential net = new Sequential().add(new Dense(512, "relu")).add(new Dense(10));
 * }</pre>
 */
public final class Sequential extends Block {
  /** An empty container with an automatic name. */
  public Sequential() {
    this(null);
  }

  /** An empty container named name (the prefix of its parameters). */
  public Sequential(String name) {
    super("sequential", name, null);
  }

  /** Appends blocks (the container holds its own references). */
  public Sequential add(Block... blocks) {
    for (Block b : blocks) addChild(b);
    return this;
  }
}
