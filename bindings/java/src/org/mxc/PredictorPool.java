package org.mxc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.function.Function;

/**
 * Serving one model from many threads: a bounded pool of {@link
 * Predictor}s sharing one copy of the weights ({@link Predictor#share()}
 * of the model given, which stays the caller's). A predictor serves one
 * request at a time, so a request takes one, blocking while all are busy,
 * and gives it back when done:
 *
 * <pre>{@code
 * try (PredictorPool pool = new PredictorPool(model, 4)) {
 *   // from any number of threads:
 *   float[] probs = pool.predict(image);
 *   float[][] both = pool.apply(p -> {
 *     p.setInput("data", x).forward();
 *     return new float[][] {p.outputFloats(0), p.outputFloats(1)};
 *   });
 * }
 * }</pre>
 *
 * <p>Memory: the weights once, plus inputs, outputs and intermediate
 * arrays per predictor; the size bounds both memory and the requests
 * running at once. The pool's predictors belong to no {@link Scope}: the
 * pool frees them in {@link #close()}, which must not overlap requests.
 * Every other method is thread-safe. A request interrupted while waiting
 * throws {@link MxcException} ({@code MXC_ERR_INTERNAL}) with the thread's
 * interrupt flag set again.
 */
public final class PredictorPool implements AutoCloseable {
  private final BlockingQueue<Predictor> idle;
  private final List<Predictor> all = new ArrayList<>();
  private volatile boolean closed;

  /** A pool of size predictors (size >= 1) sharing model's weights. */
  public PredictorPool(Predictor model, int size) {
    if (size < 1) {
      throw new MxcException(MxcException.INVALID_ARGUMENT, "PredictorPool: size " + size + "; expected >= 1");
    }
    idle = new ArrayBlockingQueue<>(size);
    try {
      for (int i = 0; i < size; i++) {
        Predictor p = model.share();
        p.detachFromScope();
        all.add(p);
        idle.add(p);
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** The number of predictors. */
  public int size() {
    return all.size();
  }

  /** Runs work with a predictor of the pool, waiting for a free one. */
  public <T> T apply(Function<Predictor, T> work) {
    Predictor p = acquire();
    try {
      return work.apply(p);
    } finally {
      idle.add(p);
    }
  }

  /** {@link Predictor#predict} on a pooled predictor. */
  public float[] predict(float[] data) {
    return apply(p -> p.predict(data));
  }

  private Predictor acquire() {
    if (closed) throw new MxcException(MxcException.INVALID_HANDLE, "PredictorPool is closed");
    try {
      return idle.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new MxcException(MxcException.INTERNAL, "PredictorPool: interrupted while waiting");
    }
  }

  /** Frees the pool's predictors (not the model); idempotent. */
  @Override
  public void close() {
    closed = true;
    for (Predictor p : all) p.close();
  }
}
