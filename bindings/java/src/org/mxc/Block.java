package org.mxc;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.mxc.swig.MxcNative;

/**
 * A block (Gluon's model): a layer, a loss or a container of blocks, with
 * named parameters made at the first forward pass (mxc_block_* of the C
 * library; the layers are in {@code org.mxc.nn}).
 *
 * <pre>{@code
 * try (Scope s = Scope.open()) {
 *   Sequential net = new Sequential().add(new Dense(128, "relu")).add(new Dense(10));
 *   net.initialize("xavier");
 *   NDArray y = net.forward(x);
 * }
 * }</pre>
 *
 * <p>Lifetime: {@link #close()} (or the Scope it was made in, or the
 * Cleaner) drops this handle's reference; a container, optimizer or fit
 * holding the block keeps it alive, so a child may be closed after {@link
 * org.mxc.nn.Sequential#add}. Threads: a block and the blocks in it are
 * used by one thread at a time (forward passes record per thread); close
 * from any thread.
 */
public class Block extends NativeObject {
  /** A new block of the C library's kind with its configuration (see mxc.h). */
  protected Block(String kind, String name, Map<String, ?> config) {
    this(MxcNative.block_create(kind, name, Op.kv(config)));
  }

  /** Takes ownership of a new block handle. */
  Block(long handle) {
    super(handle, MxcNative::block_free, "Block");
  }

  /**
   * A block of any kind mxc_block_create knows ("dense", "conv2d",
   * "batchnorm", ...; name null for an automatic one), configured by key
   * (values: strings, numbers, booleans, int[] tuples). Unknown kinds or
   * keys and bad values throw MxcException (INVALID_ARGUMENT) naming them.
   */
  public static Block create(String kind, String name, Map<String, ?> config) {
    return new Block(kind, name, config);
  }

  /** A configuration map of the non-null pairs k0, v0, k1, v1, ... then extra. */
  protected static Map<String, Object> config(Map<String, ?> extra, Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      if (kv[i + 1] != null) m.put((String) kv[i], kv[i + 1]);
    }
    if (extra != null) m.putAll(extra);
    return m;
  }

  /** Appends child (containers only; a cycle throws INVALID_ARGUMENT). */
  protected void addChild(Block child) {
    try {
      MxcNative.block_add(handle(), child.handle());
    } finally {
      Reference.reachabilityFence(child);
    }
  }

  /** The block's name, the prefix of its parameters' names. */
  public String name() {
    return MxcNative.block_name(handle());
  }

  /** The number of child blocks (containers). */
  public int numChildren() {
    return MxcNative.block_num_children(handle());
  }

  /** Child i, as a new handle on it. */
  public Block child(int i) {
    return new Block(MxcNative.block_child(handle(), i));
  }

  /** Initializes every parameter that has no initializer of its own with method. */
  public Block initialize(String method) {
    return initialize(method, null, false);
  }

  /**
   * Sets the initializer (an mxc_init_array method and its parameters) of
   * every parameter without one; force also remakes parameters already
   * made, at the next forward pass.
   */
  public Block initialize(String method, Map<String, ?> params, boolean force) {
    MxcNative.block_initialize(handle(), method, Op.kv(params), force ? 1 : 0);
    return this;
  }

  /**
   * The forward pass (one input for layers, two for losses: prediction
   * and label): a new array, recorded inside {@link Autograd#record()}.
   */
  public NDArray forward(NDArray... inputs) {
    Upcalls.clear();
    try {
      return new NDArray(MxcNative.block_forward(handle(), Op.handles(inputs)));
    } finally {
      Reference.reachabilityFence(inputs);
    }
  }

  /** The names of the parameters, depth first (made or not). */
  public List<String> parameterNames() {
    int n = MxcNative.block_num_params(handle());
    List<String> names = new ArrayList<>(n);
    for (int i = 0; i < n; i++) names.add(MxcNative.block_param_name(handle(), i));
    return names;
  }

  /**
   * Every parameter by name, each a new handle on the values (writing into
   * it changes the parameter); INVALID_ARGUMENT before the first forward
   * pass made them.
   */
  public Map<String, NDArray> parameters() {
    int n = MxcNative.block_num_params(handle());
    Map<String, NDArray> m = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      m.put(MxcNative.block_param_name(handle(), i), new NDArray(MxcNative.block_param(handle(), i)));
    }
    return m;
  }

  /** Parameter name's values (a new handle); NOT_FOUND for an unknown name. */
  public NDArray parameter(String name) {
    return new NDArray(MxcNative.block_param(handle(), index(name)));
  }

  /** Parameter name's gradient buffer (NOT_FOUND for running statistics). */
  public NDArray gradient(String name) {
    return new NDArray(MxcNative.block_param_grad(handle(), index(name)));
  }

  private int index(String name) {
    int i = parameterNames().indexOf(name);
    if (i < 0) {
      throw new MxcException(MxcException.NOT_FOUND,
          "Block " + name() + ": no parameter '" + name + "'; expected one of " + parameterNames());
    }
    return i;
  }

  /** Saves every parameter by name (atomically). */
  public void saveParameters(String path) {
    MxcNative.block_save_params(handle(), path);
  }

  /** Loads every parameter by name; nothing changes unless all fit. */
  public void loadParameters(String path) {
    MxcNative.block_load_params(handle(), path);
  }

  /**
   * Runs unrecorded single-input forward passes through a bound graph
   * (fusion, memory plan) when on; built-in layers and sequential blocks
   * of them (UNSUPPORTED otherwise).
   */
  public Block hybridize(boolean on) {
    MxcNative.block_hybridize(handle(), on ? 1 : 0);
    return this;
  }

  /**
   * Writes prefix-symbol.json and prefix-EPOCH.params (MXNet's layout),
   * which {@link Predictor#fromCheckpoint} and MXNet load; after a forward
   * pass made the parameters.
   */
  public void export(String prefix, int epoch) {
    MxcNative.block_export(handle(), prefix, epoch);
  }
}
