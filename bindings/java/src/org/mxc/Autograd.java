package org.mxc;

import java.lang.ref.Reference;
import org.mxc.swig.MxcNative;

/**
 * Imperative automatic differentiation.
 *
 * <pre>{@code
 * Autograd.markVariables(w);                 // gradient buffers inside mxc
 * try (Autograd.Scope s = Autograd.record()) {
 *   loss = ...operators on w...;
 * }
 * Autograd.backward(loss);
 * NDArray g = w.grad();
 * }</pre>
 *
 * <p>Recording and training mode are per thread (as in mxc): a scope must be
 * opened and closed on the same thread; other threads are unaffected.
 */
public final class Autograd {
  private Autograd() {}

  /** A recording scope; {@link #close()} restores the previous modes. */
  public static final class Scope implements AutoCloseable {
    private final boolean prevRecording;
    private final boolean prevTraining;
    private boolean closed;

    private Scope(boolean prevRecording, boolean prevTraining) {
      this.prevRecording = prevRecording;
      this.prevTraining = prevTraining;
    }

    /** Restores the modes the scope found; idempotent; same thread only. */
    @Override
    public void close() {
      if (closed) return;
      closed = true;
      MxcNative.set_recording(prevRecording ? 1 : 0);
      MxcNative.set_training(prevTraining ? 1 : 0);
    }
  }

  /** Starts recording in training mode on this thread. */
  public static Scope record() {
    return record(true);
  }

  /** Starts recording on this thread; train selects training mode. */
  public static Scope record(boolean train) {
    boolean rec = MxcNative.set_recording(1) != 0;
    boolean tr;
    try {
      tr = MxcNative.set_training(train ? 1 : 0) != 0;
    } catch (RuntimeException e) {
      MxcNative.set_recording(rec ? 1 : 0);
      throw e;
    }
    return new Scope(rec, tr);
  }

  /**
   * Marks arrays as variables: each gets a zero gradient buffer of its shape
   * and dtype, overwritten by every backward (mxc keeps the buffer; read it
   * with {@link #grad}).
   */
  public static void markVariables(NDArray... vars) {
    for (NDArray v : vars) {
      try (NDArray g = Op.get("zeros_like").call(v)) { // one native call
        MxcNative.autograd_mark(v.handle(), g.handle(), 1 /* MXC_REQ_WRITE */);
      } finally {
        Reference.reachabilityFence(v);
      }
    }
  }

  /** Backward from heads (ones as head gradients); frees the graph. */
  public static void backward(NDArray... heads) {
    backward(false, heads);
  }

  /** Backward from heads; retainGraph keeps the graph for another backward. */
  public static void backward(boolean retainGraph, NDArray... heads) {
    try {
      MxcNative.autograd_backward(Op.handles(heads), retainGraph ? 1 : 0);
    } finally {
      Reference.reachabilityFence(heads);
    }
  }

  /** A new handle to var's gradient buffer (caller closes it). */
  public static NDArray grad(NDArray var) {
    try {
      return new NDArray(MxcNative.autograd_grad(var.handle()));
    } finally {
      Reference.reachabilityFence(var);
    }
  }
}
