package org.mxc;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.mxc.swig.MxcNative;

/**
 * An operator of mxc's registry, invoked imperatively on {@link NDArray}s.
 *
 * <p>Look an operator up once ({@link #get}, cached per name) and {@link
 * #call} it many times: a call without parameters and with one or two
 * inputs is a single native crossing with no allocation besides the
 * result. Parameters are a {@code Map} whose values are rendered as mxc
 * expects: {@code long[]}/{@code int[]} as {@code "(a,b)"}, {@link DType}
 * by name, booleans as {@code "true"/"false"}, anything else by {@code
 * toString()}.
 *
 * <p>Op objects are immutable and shared: every method is thread-safe.
 * Each result is a new NDArray owned by the caller. Parameter, arity,
 * shape and dtype errors throw {@link MxcException} before anything runs;
 * failures inside the (asynchronous) computation surface when a result is
 * read or at {@link Mxc#waitAll()}.
 */
public final class Op {
  private static final ConcurrentHashMap<String, Op> CACHE = new ConcurrentHashMap<>();

  private final long handle; // static in mxc: never freed
  private final String name;

  private Op(long handle, String name) {
    this.handle = handle;
    this.name = name;
  }

  /** The operator with this name or alias; MxcException (NOT_FOUND) otherwise. */
  public static Op get(String name) {
    Op op = CACHE.get(name);
    if (op == null) {
      long h = MxcNative.op_find(name);
      op = new Op(h, MxcNative.op_name(h));
      Op prev = CACHE.putIfAbsent(name, op);
      if (prev != null) op = prev;
    }
    return op;
  }

  /** The canonical names of every registered operator, sorted. */
  public static List<String> names() {
    int n = MxcNative.op_count();
    List<String> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) out.add(MxcNative.op_name(MxcNative.op_at(i)));
    return Collections.unmodifiableList(out);
  }

  /** Shorthand for {@code Op.get(name).call(params, inputs)}. */
  public static NDArray invoke(String name, Map<String, ?> params, NDArray... inputs) {
    return get(name).call(params, inputs);
  }

  /** Shorthand for {@code Op.get(name).call(inputs)}. */
  public static NDArray invoke(String name, NDArray... inputs) {
    return get(name).call(null, inputs);
  }

  /** The native operator handle (static, never freed). */
  long handle() {
    return handle;
  }

  /** The canonical name. */
  public String name() {
    return name;
  }

  /** The one output of this operator applied to a (no parameters). */
  public NDArray call(NDArray a) {
    try {
      return new NDArray(MxcNative.java_invoke1(handle, a.handle()));
    } finally {
      Reference.reachabilityFence(a);
    }
  }

  /** The one output of this operator applied to a and b (no parameters). */
  public NDArray call(NDArray a, NDArray b) {
    try {
      return new NDArray(MxcNative.java_invoke2(handle, a.handle(), b.handle()));
    } finally {
      Reference.reachabilityFence(a);
      Reference.reachabilityFence(b);
    }
  }

  /** The one output of this operator applied to inputs (no parameters). */
  public NDArray call(NDArray... inputs) {
    return call(null, inputs);
  }

  /** The one output of this operator with parameters (may be null) and inputs. */
  public NDArray call(Map<String, ?> params, NDArray... inputs) {
    try {
      return new NDArray(MxcNative.op_invoke(handle, kv(params), handles(inputs), 0));
    } finally {
      Reference.reachabilityFence(inputs);
    }
  }

  /** Writes the one output into out (overwriting it) instead of allocating. */
  public void callInto(NDArray out, Map<String, ?> params, NDArray... inputs) {
    try {
      MxcNative.op_invoke(handle, kv(params), handles(inputs), out.handle());
    } finally {
      Reference.reachabilityFence(inputs);
      Reference.reachabilityFence(out);
    }
  }

  /** Every visible output (operators with several, e.g. split). */
  public NDArray[] callMulti(Map<String, ?> params, NDArray... inputs) {
    long list = 0;
    try {
      list = MxcNative.op_invoke_multi(handle, kv(params), handles(inputs));
      NDArray[] out = new NDArray[MxcNative.outputs_size(list)];
      for (int i = 0; i < out.length; i++) out[i] = new NDArray(MxcNative.outputs_take(list, i));
      return out;
    } finally {
      MxcNative.outputs_free(list);
      Reference.reachabilityFence(inputs);
    }
  }

  /** The number of visible outputs for these parameters (may be null). */
  public int numOutputs(Map<String, ?> params) {
    return MxcNative.op_num_outputs(handle, kv(params));
  }

  @Override
  public String toString() {
    return "Op(" + name + ")";
  }

  /** Handles of the inputs (MxcException for a closed or null one). */
  static long[] handles(NDArray[] arrays) {
    if (arrays == null) return null;
    long[] h = new long[arrays.length];
    for (int i = 0; i < arrays.length; i++) {
      if (arrays[i] == null) {
        throw new MxcException(MxcException.INVALID_ARGUMENT, "input " + i + " is null");
      }
      h[i] = arrays[i].handle();
    }
    return h;
  }

  /** Parameters as k0, v0, k1, v1, ... (null when there are none). */
  static String[] kv(Map<String, ?> params) {
    if (params == null || params.isEmpty()) return null;
    String[] kv = new String[2 * params.size()];
    int i = 0;
    for (Map.Entry<String, ?> e : params.entrySet()) {
      kv[i++] = e.getKey();
      kv[i++] = render(e.getValue());
    }
    return kv;
  }

  static String render(Object v) {
    if (v instanceof long[]) {
      StringBuilder b = new StringBuilder("(");
      for (long x : (long[]) v) b.append(b.length() > 1 ? "," : "").append(x);
      return b.append(')').toString();
    }
    if (v instanceof int[]) {
      StringBuilder b = new StringBuilder("(");
      for (int x : (int[]) v) b.append(b.length() > 1 ? "," : "").append(x);
      return b.append(')').toString();
    }
    if (v instanceof DType) return ((DType) v).mxcName();
    return String.valueOf(v);
  }
}
