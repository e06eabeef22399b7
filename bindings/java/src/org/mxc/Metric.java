package org.mxc;

import java.lang.ref.Reference;
import org.mxc.swig.MxcNative;

/** Evaluation helpers computed by mxc. Thread-safe (stateless). */
public final class Metric {
  private Metric() {}

  /**
   * Number of rows of pred (batch x classes) whose argmax equals label (one
   * class index per row). Waits for both arrays.
   */
  public static long correct(NDArray pred, NDArray label) {
    try {
      return MxcNative.metric_correct(pred.handle(), label.handle());
    } finally {
      Reference.reachabilityFence(pred);
      Reference.reachabilityFence(label);
    }
  }
}
