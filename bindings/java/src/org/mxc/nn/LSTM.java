package org.mxc.nn;

import java.util.Map;
import org.mxc.Block;

/**
 * Gluon's rnn.LSTM: gates i, f, g, o; a cell and a hidden state per unit.
 * Input (T, N, C), or (N, T, C) with layout "NTC"; output (.., D * hiddenSize)
 * (D 2 when bidirectional) from zero begin states. Parameters per layer l and
 * direction (l: forward, r: reverse) are named {@code <name>_l0_i2h_weight},
 * {@code _l0_h2h_weight}, {@code _l0_i2h_bias}, {@code _l0_h2h_bias}, ... as in
 * MXNet's Gluon; the input size comes from the first input.
 */
public final class LSTM extends Block {
  /** One layer of hiddenSize units, layout TNC. */
  public LSTM(int hiddenSize) {
    this(hiddenSize, 1, "TNC", null, null);
  }

  /** numLayers stacked layers, layout "TNC" or "NTC". */
  public LSTM(int hiddenSize, int numLayers, String layout) {
    this(hiddenSize, numLayers, layout, null, null);
  }

  /** With a name and further keys of mxc_block_create (bidirectional, dropout, ...). */
  public LSTM(int hiddenSize, int numLayers, String layout, String name, Map<String, ?> options) {
    super("lstm", name, config(options, "hidden_size", hiddenSize, "num_layers", numLayers,
        "layout", layout));
  }
}
