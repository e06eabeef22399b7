package org.mxc;

import java.lang.ref.Reference;
import java.util.Map;
import org.mxc.swig.MxcNative;

/**
 * An optimizer of a block's parameters: one of the registry's update
 * operators by name ("sgd_update", "sgd_mom_update", "adam_update",
 * "rmsprop_update", ...) with its parameters (lr, wd, momentum, beta1,
 * clip_gradient, ...). Holds a reference to the block. Used by one thread
 * at a time with its block; lifetime as {@link Block}.
 */
public final class Optimizer extends NativeObject {
  private Optimizer(long handle) {
    super(handle, MxcNative::optimizer_free, "Optimizer");
  }

  /** The update operator updateOp over net's parameters (params may be null). */
  public static Optimizer create(Block net, String updateOp, Map<String, ?> params) {
    try {
      return new Optimizer(MxcNative.optimizer_create(net.handle(), updateOp, Op.kv(params)));
    } finally {
      Reference.reachabilityFence(net);
    }
  }

  /** SGD with momentum (plain SGD when momentum is 0). */
  public static Optimizer sgd(Block net, double lr, double momentum) {
    return momentum == 0
        ? create(net, "sgd_update", Map.of("lr", lr))
        : create(net, "sgd_mom_update", Map.of("lr", lr, "momentum", momentum));
  }

  /** Adam with the operator's default betas. */
  public static Optimizer adam(Block net, double lr) {
    return create(net, "adam_update", Map.of("lr", lr));
  }

  /** One update of every parameter from its gradient (batchSize >= 1). */
  public void step(long batchSize) {
    MxcNative.optimizer_step(handle(), batchSize);
  }

  /** The learning rate of the next steps. */
  public double lr() {
    return MxcNative.optimizer_get_lr(handle());
  }

  /** Sets the learning rate (finite, >= 0). */
  public void setLr(double lr) {
    MxcNative.optimizer_set_lr(handle(), lr);
  }
}
