package org.mxc;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.mxc.swig.MxcNative;

/**
 * Inference from an exported model (mxc's {@code mxc_predictor_*}): an
 * MXNet graph with its weights, bound for given input shapes.
 *
 * <pre>{@code
 * try (Predictor p = Predictor.fromCheckpoint("model", 39,
 *     Map.of("data", new long[] {1, 1, 28, 28}))) {
 *   float[] probs = p.predict(image);
 * }
 * }</pre>
 *
 * <p><b>Sharing weights.</b> {@link #share()} and {@link #reshape} make
 * predictors over the same weights (one copy of the model in memory) with
 * inputs and outputs of their own: give one to each thread.
 *
 * <p><b>Threads.</b> A predictor must be used by one thread at a time
 * (its methods are not synchronized: it holds the inputs and the last
 * outputs); different predictors, also sharing weights, run concurrently.
 * {@link #close()} frees it at once (idempotent); a Cleaner frees one
 * never closed. Errors throw {@link MxcException}.
 */
public final class Predictor extends NativeObject {
  private final Map<String, long[]> inputs;

  private Predictor(long handle, Map<String, long[]> inputs) {
    super(handle, MxcNative::predictor_free, "Predictor");
    this.inputs = inputs;
  }

  /**
   * From an MXNet checkpoint, PREFIX-symbol.json and PREFIX-EEEE.params,
   * for inputs of the given shapes (float32), computing the graph's outputs.
   */
  public static Predictor fromCheckpoint(String prefix, int epoch, Map<String, long[]> inputShapes) {
    return fromCheckpoint(prefix, epoch, inputShapes, Collections.emptyList());
  }

  /** As above, computing the named outputs ("fc1_output" or "fc1", inner nodes too). */
  public static Predictor fromCheckpoint(String prefix, int epoch, Map<String, long[]> inputShapes,
      List<String> outputs) {
    long spec = spec(inputShapes, outputs);
    try {
      return new Predictor(MxcNative.predictor_load(spec, prefix, epoch), copy(inputShapes));
    } finally {
      MxcNative.predictor_spec_free(spec);
    }
  }

  /** From MXNet JSON text and the bytes of a params file (MXNet's or mxc's format). */
  public static Predictor create(String symbolJson, byte[] params, Map<String, long[]> inputShapes,
      List<String> outputs) {
    ByteBuffer direct = ByteBuffer.allocateDirect(Math.max(params.length, 1));
    direct.put(params).flip();
    return create(symbolJson, direct, inputShapes, outputs);
  }

  /** As above from a direct buffer, read from its position to its limit. */
  public static Predictor create(String symbolJson, ByteBuffer params,
      Map<String, long[]> inputShapes, List<String> outputs) {
    if (params == null || !params.isDirect()) {
      throw new MxcException(MxcException.INVALID_ARGUMENT,
          "expected a direct ByteBuffer (ByteBuffer.allocateDirect)");
    }
    long spec = spec(inputShapes, outputs);
    try {
      return new Predictor(MxcNative.predictor_create(spec, symbolJson, params.slice()),
          copy(inputShapes));
    } finally {
      MxcNative.predictor_spec_free(spec);
    }
  }

  private static Map<String, long[]> copy(Map<String, long[]> shapes) {
    Map<String, long[]> m = new LinkedHashMap<>();
    shapes.forEach((k, v) -> m.put(k, v.clone()));
    return m;
  }

  /** A native spec of the inputs (in the map's iteration order) and outputs. */
  private static long spec(Map<String, long[]> inputShapes, List<String> outputs) {
    if (inputShapes == null || inputShapes.isEmpty()) {
      throw new MxcException(MxcException.INVALID_ARGUMENT,
          "inputShapes must name at least one input, e.g. {\"data\": [1, 3, 224, 224]}");
    }
    long spec = MxcNative.predictor_spec_new();
    try {
      for (Map.Entry<String, long[]> e : inputShapes.entrySet()) {
        MxcNative.predictor_spec_input(spec, e.getKey(), e.getValue(), DType.FLOAT32.code);
      }
      for (String o : outputs) MxcNative.predictor_spec_output(spec, o);
      return spec;
    } catch (RuntimeException ex) {
      MxcNative.predictor_spec_free(spec);
      throw ex;
    }
  }

  /** The input shapes, by name. */
  public Map<String, long[]> inputShapes() {
    return copy(inputs);
  }

  /** Copies data (the input's number of elements, C order) into the input name. */
  public Predictor setInput(String name, float[] data) {
    long[] shape = inputs.get(name);
    if (shape == null) {
      throw new MxcException(MxcException.NOT_FOUND,
          "'" + name + "' is not an input of the predictor; its inputs are " + inputs.keySet());
    }
    try (NDArray a = NDArray.empty(DType.FLOAT32, shape)) {
      return setInput(name, a.copyFrom(data));
    }
  }

  /** Copies an array of the input's shape and dtype into the input name. */
  public Predictor setInput(String name, NDArray value) {
    try {
      MxcNative.predictor_set_input_array(handle(), name, value.handle());
      return this;
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(value);
    }
  }

  /** Runs the model on the current inputs. */
  public Predictor forward() {
    try {
      MxcNative.predictor_forward(handle());
      return this;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The number of outputs. */
  public int numOutputs() {
    try {
      return MxcNative.predictor_num_outputs(handle());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Output i of the last forward as a new array (a copy: later forwards do not change it). */
  public NDArray output(int i) {
    try (NDArray view = new NDArray(MxcNative.predictor_output(handle(), i))) {
      NDArray out = NDArray.empty(view.dtype(), view.shape());
      view.copyTo(out);
      return out;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Output i of the last forward as floats (a float32 output). */
  public float[] outputFloats(int i) {
    try (NDArray view = new NDArray(MxcNative.predictor_output(handle(), i))) {
      return view.toFloatArray();
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The shape of output i (known before any forward). */
  public long[] outputShape(int i) {
    try (NDArray view = new NDArray(MxcNative.predictor_output(handle(), i))) {
      return view.shape();
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Sets the first input to data, runs, and returns output 0. */
  public float[] predict(float[] data) {
    return setInput(inputs.keySet().iterator().next(), data).forward().outputFloats(0);
  }

  /** A new predictor sharing these weights, with inputs of its own (for another thread). */
  public Predictor share() {
    try {
      return new Predictor(MxcNative.predictor_clone(handle()), copy(inputs));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** A new predictor sharing these weights with the named inputs reshaped (another batch size). */
  public Predictor reshape(Map<String, long[]> inputShapes) {
    long spec = spec(inputShapes, Collections.emptyList());
    try {
      Map<String, long[]> shapes = copy(inputs);
      shapes.putAll(copy(inputShapes));
      return new Predictor(MxcNative.predictor_reshape(handle(), spec), shapes);
    } finally {
      MxcNative.predictor_spec_free(spec);
      Reference.reachabilityFence(this);
    }
  }
}
