package org.mxc;

import java.lang.ref.Reference;
import org.mxc.swig.MxcNative;

/**
 * A block whose forward pass is written in Java (Gluon's HybridBlock in
 * spirit; mxc_block_create_user): a function of the inputs that composes
 * child blocks and operators. The children are registered with the block
 * (constructor or {@link #add}), so their parameters are this block's:
 * {@link #initialize}, {@link #parameters}, optimizers, {@link Fit},
 * checkpoints and {@link #export} see them.
 *
 * <pre>{@code
 * Dense fc1 = new Dense(16, "relu"), fc2 = new Dense(4);
 * UserBlock residual = new UserBlock("res", x -> fc2.forward(fc1.forward(x[0])).add(x[0]), fc1, fc2);
 * residual.initialize("xavier");
 * NDArray y = residual.forward(input);
 * }</pre>
 *
 * <p><b>The forward function</b> runs on the thread that called {@link
 * #forward} (or {@link Fit#run}), as often as the block runs; for a
 * {@linkplain #hybridize hybridized} block once per trace (a new input
 * shape), recorded by autograd, after which the traced graph runs without
 * it: branches on values are frozen as they were in that pass, and the
 * arrays it uses must be its inputs, results of operators, or parameters
 * of registered children (anything else fails that pass with
 * UNSUPPORTED). Its inputs are lent by mxc for the call only (closed when
 * it returns; they cannot be kept or returned). It returns a new array,
 * which mxc takes over. Arrays it makes besides its result are freed when
 * it returns (each call runs in a {@link Scope} of its own); {@link
 * NDArray#keep()} moves one out.
 *
 * <p><b>Errors.</b> An exception the function throws fails the call that
 * ran it (forward, fit's run, ...), which throws {@link MxcException} with
 * code {@code MXC_ERR_OPERATOR} (or the code of an MxcException thrown),
 * the exception's text in its message and the exception as its cause. The
 * block stays usable.
 *
 * <p><b>Lifetime.</b> As {@link Block}: {@link #close()}, the {@link
 * Scope} it was made in, or the Cleaner drops this handle; a container,
 * optimizer or fit holding the block keeps it. mxc holds the function (a
 * JNI global reference) until the native block is destroyed, then drops
 * it. So the function should capture the children, not this UserBlock:
 * capturing it keeps the block reachable, and only {@link #close()} or a
 * Scope then frees it. <b>Threads:</b> as every block, used by one thread
 * at a time (any thread; the callback attaches threads the JVM does not
 * know).
 */
public final class UserBlock extends Block {
  /** A forward pass: a new array from the (borrowed) inputs. */
  @FunctionalInterface
  public interface Forward {
    /** Computes the output from inputs (1 to 64 arrays, lent for the call). */
    NDArray forward(NDArray[] inputs) throws Exception;
  }

  /** A block running forward, with children (registered in this order). */
  public UserBlock(Forward forward, Block... children) {
    this(null, forward, children);
  }

  /**
   * A block named name (the prefix of its parameters' names; null for an
   * automatic "user0", ...) running forward, with children.
   */
  public UserBlock(String name, Forward forward, Block... children) {
    super(create(name, forward));
    add(children);
  }

  private static long create(String name, Forward forward) {
    if (forward == null) {
      throw new MxcException(MxcException.INVALID_ARGUMENT, "UserBlock: forward is null");
    }
    return MxcNative.java_block_create_user(name, new Dispatch(forward));
  }

  /**
   * Registers children (one more reference each; they may be closed
   * afterwards), after those already added: their parameters become this
   * block's. A child containing this block is refused (INVALID_ARGUMENT).
   */
  public UserBlock add(Block... children) {
    if (children != null) {
      for (Block b : children) addChild(b);
    }
    return this;
  }

  /**
   * Global references mxc holds on Java callbacks (user blocks' functions
   * and KVStore updaters) in the process: for tests that check that
   * closing blocks and stores releases them.
   */
  public static long liveCallbacks() {
    return MxcNative.java_upcall_refs();
  }

  /** What C calls (mxc_java.i); holds the function, never the block. */
  private static final class Dispatch {
    private final Forward forward;

    Dispatch(Forward forward) {
      this.forward = forward;
    }

    /** Called from C: MXC_ERR_* code out, the result's handle in out[0]. */
    @SuppressWarnings("unused")
    int forward(long self, long[] in, long[] out) {
      NDArray[] inputs = new NDArray[in.length];
      for (int i = 0; i < in.length; i++) inputs[i] = NDArray.borrowed(in[i]);
      try (Scope s = Scope.open()) {
        out[0] = result(forward.forward(inputs), s).giveToMxc();
        return 0;
      } catch (Throwable t) {
        return Upcalls.fail(t, "UserBlock forward");
      } finally {
        for (NDArray a : inputs) a.invalidate();
        Reference.reachabilityFence(inputs);
      }
    }

    /** y, if the function made it in this call (scope s): mxc takes it over. */
    private static NDArray result(NDArray y, Scope s) {
      if (y == null || y.ownerScope() != s) {
        throw new MxcException(MxcException.INVALID_ARGUMENT,
            "UserBlock: the forward function must return a new NDArray it made (a result of "
                + "an operator or a child block), not "
                + (y == null ? "null" : y.isBorrowed() ? "one of its inputs" : "an array made before"));
      }
      return y;
    }
  }
}
