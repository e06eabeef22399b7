package org.mxc;

import java.lang.ref.Reference;
import java.lang.ref.WeakReference;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.mxc.swig.MxcNative;

/**
 * fit(): trains a block with a loss and an optimizer over data iterators
 * (mxc_fit_* of the C library, which does everything: the loop, the
 * progress line on a terminal, evaluation, checkpoints with exact resume,
 * early stopping, learning-rate schedules, CSV and TensorBoard logs).
 *
 * <pre>{@code
 * try (Scope s = Scope.open()) {
 *   Fit fit = Fit.create(net, Loss.softmaxCrossEntropy(), Optimizer.sgd(net, 0.1, 0.9),
 *       new Fit.Options().epochs(10).csv("log.csv"));
 *   fit.addListener(TrainingListener.onEpochEnd(f -> System.out.println(f.valAccuracy())));
 *   fit.run(train, test);
 * }
 * }</pre>
 *
 * <p>Listeners run on the thread calling {@link #run}; one that throws
 * ends the run, which throws MxcException with the listener's exception as
 * cause. A listener must not close the iterators the run is using. A fit is used by one thread at a time; lifetime as {@link Block}.
 */
public final class Fit extends NativeObject {
  /** The configuration keys of mxc_fit_create, typed; unset keys keep C's defaults. */
  public static final class Options {
    private final Map<String, Object> map = new LinkedHashMap<>();
    /** A KVStore or its type (a String), or null: not a key of mxc_fit_create. */
    private Object kvstore;

    /** Any key of mxc_fit_create (see mxc.h). */
    public Options set(String key, Object value) {
      map.put(key, value);
      return this;
    }

    /** Epochs to reach, counting those of a resumed checkpoint (default 1). */
    public Options epochs(int n) {
      return set("epochs", n);
    }

    /** At most n training batches per epoch (0: all). */
    public Options batchesPerEpoch(int n) {
      return set("batches_per_epoch", n);
    }

    /** "auto" (only on a terminal, the default), "1" or "0". */
    public Options progress(String mode) {
      return set("progress", mode);
    }

    /** lr * factor^floor(update / step). */
    public Options lrFactor(int step, double factor) {
      return set("lr_scheduler", "factor").set("step", step).set("factor", factor);
    }

    /** lr * factor^(steps passed). */
    public Options lrMultiFactor(int[] steps, double factor) {
      return set("lr_scheduler", "multifactor").set("steps", steps).set("factor", factor);
    }

    /** Cosine decay from lr to finalLr over maxUpdate updates. */
    public Options lrCosine(int maxUpdate, double finalLr) {
      return set("lr_scheduler", "cosine").set("max_update", maxUpdate).set("final_lr", finalLr);
    }

    /** Stops after patience epochs without monitor ("val_loss", ...) improving by minDelta. */
    public Options earlyStopping(int patience, double minDelta, String monitor) {
      return set("early_stopping_patience", patience)
          .set("early_stopping_min_delta", minDelta)
          .set("monitor", monitor);
    }

    /** A CSV row per epoch in path (appended to on resume). */
    public Options csv(String path) {
      return set("csv", path);
    }

    /** TensorBoard event files in dir. */
    public Options tensorboard(String dir) {
      return set("tensorboard", dir);
    }

    /** A checkpoint PREFIX-EEEE.fit after every period-th epoch. */
    public Options checkpoint(String prefix, int period) {
      return set("checkpoint_prefix", prefix).set("checkpoint_period", period);
    }

    /**
     * Trains data-parallel through kv (mxc_fit_set_kvstore): under {@code
     * mpirun -np N} with a "dist_sync" store every worker trains on its part
     * of the training data, gradients are summed over the workers and every
     * worker keeps the same parameters; files and progress come from rank 0.
     * A "local" store trains as without one. The fit holds its own
     * reference to the store: kv may be closed after {@link Fit#create}.
     */
    public Options kvstore(KVStore kv) {
      this.kvstore = kv;
      return this;
    }

    /** As {@link #kvstore(KVStore)} with a new store of type ("local", "dist_sync"). */
    public Options kvstore(String type) {
      this.kvstore = type;
      return this;
    }

    /** A checkpoint to resume from when run starts. */
    public Options resume(String path) {
      return set("resume", path);
    }
  }

  /**
   * The one native listener of a fit: calls the Java listeners and turns
   * what they throw into an error code. Held by a JNI global reference
   * until the fit is freed, so it refers to the Fit weakly (the Fit stays
   * collectable).
   */
  private static final class Dispatch {
    private static final TrainingListener.Event[] EVENTS = TrainingListener.Event.values();
    private final WeakReference<Fit> fit;
    final List<TrainingListener> listeners = new CopyOnWriteArrayList<>();
    volatile Throwable failure;

    Dispatch(Fit fit) {
      this.fit = new WeakReference<>(fit);
    }

    /** Called from C (mxc_java.i): MXC_FIT_* event in, MXC_ERR_* code out. */
    @SuppressWarnings("unused")
    int event(int event) {
      Fit f = fit.get();
      if (f == null || event < 1 || event > EVENTS.length) return 0;
      try {
        for (TrainingListener l : listeners) l.on(EVENTS[event - 1], f);
        return 0;
      } catch (Throwable t) {
        failure = t;
        return t instanceof MxcException ? ((MxcException) t).code() : MxcException.INTERNAL;
      }
    }
  }

  private Dispatch dispatch;
  /** The thread in {@link #run}, or null: the fit is not freed (or run again) meanwhile. */
  private volatile Thread runner;

  private Fit(long handle) {
    super(handle, MxcNative::fit_free, "Fit");
  }

  /**
   * A fit of net with loss (a two-input block) and opt (an optimizer of
   * net), trained through the options' KVStore if they name one.
   */
  public static Fit create(Block net, Block loss, Optimizer opt, Options options) {
    Map<String, Object> m = options == null ? null : options.map;
    Fit fit;
    try {
      fit = new Fit(MxcNative.fit_create(net.handle(), loss.handle(), opt.handle(), Op.kv(m)));
    } finally {
      Reference.reachabilityFence(net);
      Reference.reachabilityFence(loss);
      Reference.reachabilityFence(opt);
    }
    if (options == null || options.kvstore == null) return fit;
    try {
      fit.useStore(options.kvstore);
      return fit;
    } catch (RuntimeException e) {
      fit.close();
      throw e;
    }
  }

  /** Sets a KVStore or a new store of a type (a String): see Options.kvstore. */
  private void useStore(Object kv) {
    if (kv instanceof KVStore) {
      setKVStore((KVStore) kv);
      return;
    }
    // The fit keeps its own reference: this handle can go at once.
    try (KVStore made = KVStore.create((String) kv)) {
      setKVStore(made);
    }
  }

  /**
   * Trains through kv from the next run on (see Options.kvstore); null
   * trains alone again. The fit holds its own reference to the store.
   */
  public Fit setKVStore(KVStore kv) {
    try {
      MxcNative.fit_set_kvstore(handle(), kv == null ? 0 : kv.handle());
      return this;
    } finally {
      Reference.reachabilityFence(kv);
    }
  }

  /** Adds a listener, called in the order added. */
  public synchronized Fit addListener(TrainingListener listener) {
    if (listener == null) {
      throw new MxcException(MxcException.INVALID_ARGUMENT, "Fit.addListener: listener is null");
    }
    if (dispatch == null) {
      Dispatch d = new Dispatch(this);
      MxcNative.java_fit_add_listener(handle(), d);
      dispatch = d;
    }
    dispatch.listeners.add(listener);
    return this;
  }

  /**
   * Trains on train (reset each epoch) and evaluates on val (may be null)
   * until the epochs are reached, early stopping or {@link #stop()}.
   */
  public Fit run(DataIter train, DataIter val) {
    Dispatch d;
    synchronized (this) {
      if (runner != null) {
        throw new MxcException(MxcException.INVALID_ARGUMENT, "Fit.run: the fit is already running");
      }
      runner = Thread.currentThread();
      d = dispatch;
    }
    Upcalls.clear();
    try {
      MxcNative.fit_run(handle(), train.handle(), val == null ? 0 : val.handle());
      return this;
    } catch (MxcException e) {
      Throwable cause = d == null ? null : d.failure;
      if (cause == null) throw e;
      d.failure = null;
      MxcException wrapped =
          new MxcException(e.code(), "Fit.run: a listener threw " + cause + " (" + e.getMessage() + ")");
      wrapped.initCause(cause);
      throw wrapped;
    } finally {
      runner = null;
      Reference.reachabilityFence(train);
      Reference.reachabilityFence(val);
    }
  }

  /**
   * Frees the fit; idempotent. Throws MxcException (INVALID_ARGUMENT)
   * while {@link #run} runs (from a listener, say): C would free what the
   * run is using.
   */
  @Override
  public void close() {
    if (runner != null) {
      throw new MxcException(MxcException.INVALID_ARGUMENT,
          "Fit.close: the fit is running; close it after run returns");
    }
    super.close();
  }

  /**
   * A value of the run by name: epoch, batch, num_update, lr, train_loss,
   * train_accuracy, val_loss, val_accuracy (NaN before an evaluation),
   * samples_per_sec, best, epochs, rank, num_workers (NOT_FOUND for others).
   */
  public double value(String name) {
    return MxcNative.fit_value(handle(), name);
  }

  /** Epochs done. */
  public int epoch() {
    return (int) value("epoch");
  }

  /** Mean training loss of the current epoch so far. */
  public double trainLoss() {
    return value("train_loss");
  }

  /** Training accuracy of the current epoch so far. */
  public double trainAccuracy() {
    return value("train_accuracy");
  }

  /** Validation loss of the last evaluation. */
  public double valLoss() {
    return value("val_loss");
  }

  /** Validation accuracy of the last evaluation. */
  public double valAccuracy() {
    return value("val_accuracy");
  }

  /** Ends the run after the current batch (from a listener). */
  public void stop() {
    MxcNative.fit_stop(handle());
  }

  /** Writes a checkpoint (parameters, optimizer states, progress, random stream). */
  public void saveCheckpoint(String path) {
    MxcNative.fit_save_checkpoint(handle(), path);
  }

  /** Loads a checkpoint: the next run continues exactly where it was written. */
  public void loadCheckpoint(String path) {
    MxcNative.fit_load_checkpoint(handle(), path);
  }
}
