package org.mxc.nn;

import java.util.Map;
import org.mxc.Block;

/**
 * Gluon's rnn.GRU: gates r, z, n (the reset gate scales the recurrent projection with its bias).
 * Input (T, N, C), or (N, T, C) with layout "NTC"; output (.., D * hiddenSize)
 * (D 2 when bidirectional) from zero begin states. Parameters per layer l and
 * direction (l: forward, r: reverse) are named {@code <name>_l0_i2h_weight},
 * {@code _l0_h2h_weight}, {@code _l0_i2h_bias}, {@code _l0_h2h_bias}, ... as in
 * MXNet's Gluon; the input size comes from the first input.
 */
public final class GRU extends Block {
  /** One layer of hiddenSize units, layout TNC. */
  public GRU(int hiddenSize) {
    this(hiddenSize, 1, "TNC", null, null);
  }

  /** numLayers stacked layers, layout "TNC" or "NTC". */
  public GRU(int hiddenSize, int numLayers, String layout) {
    this(hiddenSize, numLayers, layout, null, null);
  }

  /** With a name and further keys of mxc_block_create (bidirectional, dropout, ...). */
  public GRU(int hiddenSize, int numLayers, String layout, String name, Map<String, ?> options) {
    super("gru", name, config(options, "hidden_size", hiddenSize, "num_layers", numLayers,
        "layout", layout));
  }
}
