package org.mxc.nn;

import java.util.Map;
import org.mxc.Block;

/**
 * A fully connected layer: weight (units, in_units) and bias (units),
 * in_units taken from the first input; optional activation (relu,
 * sigmoid, tanh, softrelu, softsign).
 */
public final class Dense extends Block {
  /** units outputs, no activation. */
  public Dense(int units) {
    this(units, null);
  }

  /** units outputs with activation (null: none). */
  public Dense(int units, String activation) {
    this(units, activation, null, null);
  }

  /** With a name and further keys of mxc_block_create (use_bias, flatten, ...). */
  public Dense(int units, String activation, String name, Map<String, ?> options) {
    super("dense", name, config(options, "units", units, "activation", activation));
  }
}
