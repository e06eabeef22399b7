package org.mxc;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.mxc.swig.MxcNative;

/**
 * An Apache MXNet checkpoint as MXNet's load_checkpoint gives it: the
 * symbol and the arguments and auxiliary states keyed by their names
 * without the "arg:"/"aux:" prefixes. Files: PREFIX-symbol.json and
 * PREFIX-EEEE.params (the epoch with at least 4 digits; MXNet's format or
 * mxc's). {@link #close()} closes the symbol and every array; take what
 * you keep before closing (or do not close and let the Cleaners free them).
 */
public final class Checkpoint implements AutoCloseable {
  private final Symbol symbol;
  private final Map<String, NDArray> args, aux;

  private Checkpoint(Symbol symbol, Map<String, NDArray> args, Map<String, NDArray> aux) {
    this.symbol = symbol;
    this.args = Collections.unmodifiableMap(args);
    this.aux = Collections.unmodifiableMap(aux);
  }

  /** Reads PREFIX-symbol.json and PREFIX-EEEE.params; MxcException (IO) names a bad file. */
  public static Checkpoint load(String prefix, int epoch) {
    long c = MxcNative.checkpoint_load(prefix, epoch);
    try {
      Map<String, NDArray> a = group(c, 0), x = group(c, 1);
      return new Checkpoint(Symbol.wrap(MxcNative.checkpoint_take_symbol(c)), a, x);
    } finally {
      MxcNative.checkpoint_free(c);
    }
  }

  private static Map<String, NDArray> group(long c, int g) {
    int n = MxcNative.checkpoint_size(c, g);
    Map<String, NDArray> m = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      m.put(MxcNative.checkpoint_name(c, g, i), new NDArray(MxcNative.checkpoint_array(c, g, i)));
    }
    return m;
  }

  /**
   * Writes symbol and the parameters (names without prefixes) as an MXNet
   * checkpoint in MXNet's format, each file replaced atomically. The
   * arrays stay the caller's.
   */
  public static void save(String prefix, int epoch, Symbol symbol, Map<String, NDArray> args,
      Map<String, NDArray> aux) {
    List<String> names = new ArrayList<>(args.keySet());
    names.addAll(aux.keySet());
    List<NDArray> arrays = new ArrayList<>(args.values());
    arrays.addAll(aux.values());
    long[] h = new long[arrays.size()];
    for (int i = 0; i < h.length; i++) h[i] = arrays.get(i).handle();
    try {
      MxcNative.checkpoint_save(prefix, epoch, symbol.handle(), h,
          names.toArray(new String[0]), aux.size());
    } finally {
      Reference.reachabilityFence(symbol);
      Reference.reachabilityFence(arrays);
    }
  }

  /** The graph. */
  public Symbol symbol() {
    return symbol;
  }

  /** The arguments (weights, biases) by name. */
  public Map<String, NDArray> args() {
    return args;
  }

  /** The auxiliary states (BatchNorm's moving statistics) by name. */
  public Map<String, NDArray> aux() {
    return aux;
  }

  @Override
  public void close() {
    symbol.close();
    args.values().forEach(NDArray::close);
    aux.values().forEach(NDArray::close);
  }
}
