package org.mxc;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.mxc.swig.MxcNative;

/**
 * A symbolic graph (one or more outputs) to be bound into an {@link
 * Executor}. Immutable once built; methods are thread-safe. Lifetime as
 * {@link NDArray}: idempotent {@link #close()} plus a Cleaner safety net;
 * symbols built from this one keep what they need alive on the C side.
 */
public final class Symbol extends NativeObject {
  private Symbol(long handle) {
    super(handle, MxcNative::symbol_free, "Symbol");
  }

  /** Takes ownership of a new symbol handle (for org.mxc). */
  static Symbol wrap(long handle) {
    return new Symbol(handle);
  }

  /** A named input (data, weights, labels). */
  public static Symbol variable(String name) {
    return new Symbol(MxcNative.symbol_variable(name));
  }

  /**
   * An operator node: opName with params (may be null), node name (null for
   * an automatic one; it prefixes the names of implicit arguments such as
   * {@code fc1_weight}), inputs positionally.
   */
  public static Symbol op(String opName, Map<String, ?> params, String name, Symbol... inputs) {
    long[] h = handles(inputs);
    try {
      return new Symbol(MxcNative.symbol_op(Op.get(opName).handle(), Op.kv(params),
          name == null ? "" : name, h));
    } finally {
      Reference.reachabilityFence(inputs);
    }
  }

  /** The outputs of several symbols as one. */
  public static Symbol group(Symbol... symbols) {
    long[] h = handles(symbols);
    try {
      return new Symbol(MxcNative.symbol_group(h));
    } finally {
      Reference.reachabilityFence(symbols);
    }
  }

  /** A symbol from its JSON form ({@link #toJson()}). */
  public static Symbol fromJson(String json) {
    return new Symbol(MxcNative.symbol_from_json(json));
  }

  /** The JSON form. */
  public String toJson() {
    try {
      return MxcNative.symbol_to_json(handle());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Argument names (inputs and parameters) in graph order. */
  public List<String> listArguments() {
    try {
      return strings(MxcNative.symbol_list_arguments(handle()));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Output names. */
  public List<String> listOutputs() {
    try {
      return strings(MxcNative.symbol_list_outputs(handle()));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Binds on the CPU with the given argument shapes (the others are
   * inferred) and allocates every array; withGrad adds gradient buffers
   * written by each backward.
   */
  public Executor simpleBind(Map<String, long[]> shapes, boolean withGrad) {
    return simpleBind(Device.cpu(), shapes, withGrad);
  }

  /**
   * As {@link #simpleBind(Map, boolean)}, every array on device. A GPU that
   * cannot be used throws MxcException (UNSUPPORTED); operators without a
   * kernel for the device fail at bind or forward, naming the operator.
   */
  public Executor simpleBind(Device device, Map<String, long[]> shapes, boolean withGrad) {
    String[] kv = new String[2 * shapes.size()];
    int i = 0;
    for (Map.Entry<String, long[]> e : shapes.entrySet()) {
      kv[i++] = e.getKey();
      kv[i++] = Op.render(e.getValue());
    }
    try {
      return new Executor(
          MxcNative.executor_simple_bind_on(
              handle(), kv, withGrad ? 1 : 0, device.typeCode(), device.id()));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  private static long[] handles(Symbol[] symbols) {
    long[] h = new long[symbols.length];
    for (int i = 0; i < h.length; i++) {
      if (symbols[i] == null) {
        throw new MxcException(MxcException.INVALID_ARGUMENT, "input " + i + " is null");
      }
      h[i] = symbols[i].handle();
    }
    return h;
  }

  static List<String> strings(long list) {
    try {
      int n = MxcNative.str_list_size(list);
      List<String> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) out.add(MxcNative.str_list_get(list, i));
      return Collections.unmodifiableList(out);
    } finally {
      MxcNative.str_list_free(list);
    }
  }
}
