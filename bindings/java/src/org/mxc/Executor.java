package org.mxc;

import java.lang.ref.Reference;
import org.mxc.swig.MxcNative;

/**
 * A bound graph ({@link Symbol#simpleBind}): forward, backward, and its
 * argument, gradient and output arrays.
 *
 * <p>The arrays returned by {@link #arg}, {@link #grad} and {@link #output}
 * are new handles to the executor's own arrays (writing an arg sets the
 * input of the next forward) and stay valid after the executor is closed.
 * One executor must not run forward/backward from two threads at once;
 * distinct executors are independent. Lifetime as {@link NDArray}.
 */
public final class Executor extends NativeObject {
  Executor(long handle) {
    super(handle, MxcNative::executor_free, "Executor");
  }

  /** Runs the graph (asynchronously); train selects training mode. */
  public void forward(boolean train) {
    try {
      MxcNative.executor_forward(handle(), train ? 1 : 0);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Backward with ones as head gradients (loss outputs ignore them). */
  public void backward() {
    try {
      MxcNative.executor_backward(handle());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Number of outputs. */
  public int numOutputs() {
    try {
      return MxcNative.executor_num_outputs(handle());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The i-th output (a new handle). */
  public NDArray output(int i) {
    try {
      return new NDArray(MxcNative.executor_output(handle(), i));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The argument array with this name (a new handle). */
  public NDArray arg(String name) {
    try {
      return new NDArray(MxcNative.executor_arg(handle(), name));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The gradient buffer of this argument (a new handle). */
  public NDArray grad(String name) {
    try {
      return new NDArray(MxcNative.executor_grad(handle(), name));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * An auxiliary state by name, e.g. BatchNorm's {@code bn_moving_mean} (a
   * new handle on the executor's array: training forwards update it, and
   * writing it sets the state).
   */
  public NDArray aux(String name) {
    try {
      return new NDArray(MxcNative.executor_aux(handle(), name));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

}
