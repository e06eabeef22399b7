package org.mxc.nn;

import java.util.Map;
import org.mxc.Block;

/**
 * A loss: a block of two inputs, (prediction, label), giving one value
 * per example (the mean over all axes but the first).
 */
public final class Loss extends Block {
  private Loss(String kind, Map<String, ?> options) {
    super(kind, null, options);
  }

  /** Softmax cross-entropy of logits against class indices. */
  public static Loss softmaxCrossEntropy() {
    return new Loss("softmax_cross_entropy_loss", null);
  }

  /** 0.5 (p - y)^2. */
  public static Loss l2() {
    return new Loss("l2_loss", null);
  }

  /** |p - y|. */
  public static Loss l1() {
    return new Loss("l1_loss", null);
  }

  /** Binary cross-entropy of logits. */
  public static Loss sigmoidBinaryCrossEntropy() {
    return new Loss("sigmoid_binary_cross_entropy_loss", null);
  }

  /** A loss kind of mxc_block_create with its keys (axis, sparse_label, weight, ...). */
  public static Loss of(String kind, Map<String, ?> options) {
    return new Loss(kind, options);
  }
}
