package org.mxc;

import java.util.Map;
import org.mxc.swig.MxcNative;

/**
 * mxc's key-value store for parameter synchronisation (docs/kvstore.md):
 * {@code "local"} sums within the process, {@code "dist_sync"} across the
 * processes of an MPI job ({@code mpirun -np N java ...}), so every worker
 * applies the same update. Keys are strings or integers (int[] or long[]
 * overloads, as MXNet's Java API had both): two separate name spaces, so
 * {@code 3} and {@code "3"} are different keys.
 *
 * <pre>{@code
 * try (KVStore kv = KVStore.create("dist_sync")) {
 *   kv.init(names, weights);                 // every worker: rank 0's values
 *   kv.pushPull(names, 0, grads);            // grads summed over the workers
 * }
 * }</pre>
 *
 * <p>Push sums the arrays given for each key (a key may repeat) and stores
 * the sum, or updates the stored array with the optimizer of {@link
 * #setOptimizer} or the Java {@link Updater} of {@link #setUpdater}; pull
 * copies the stored arrays out. Calls return at once: the work runs on
 * mxc's engine in order with all other work on the arrays. With {@code
 * "dist_sync"} every worker must make the same calls in the same order.
 * Methods may be called from any thread (pushes of one store run one at a
 * time). Lifetime as the other handles: {@link #close()}, the {@link
 * Scope} it was made in, or the Cleaner once unreachable; the arrays stay
 * the caller's.
 */
public final class KVStore extends NativeObject {
  /**
   * A store-side update written in Java (MXNet's updater): called by each
   * push once per key pushed, after the values were summed (over the list
   * and, for "dist_sync", the workers), to update {@code local}, the stored
   * array, from {@code recv}, the sum: write into local, e.g. {@code
   * Op.get("sgd_update").callInto(local, params, local, recv)}. key is a
   * String for string keys and a Long for int keys. Both arrays are lent
   * for the call only (they cannot be kept or closed for mxc); arrays the
   * updater makes are freed when it returns (a {@link Scope} per call).
   *
   * <p>It runs on the thread that called push (or pushPull, or a {@link
   * Fit} training through the store), synchronously; it may call other
   * stores, read this one and replace or remove itself ({@link
   * #setUpdater}). An exception it throws fails that push, which throws
   * {@link MxcException} ({@code MXC_ERR_OPERATOR}, or the code of an
   * MxcException thrown) with the exception as cause and a message naming
   * the key and the exception; the keys pushed before in that call were updated, the store
   * stays usable.
   */
  @FunctionalInterface
  public interface Updater {
    /** Updates local (the stored value of key) from recv (this push's sum). */
    void update(Object key, NDArray recv, NDArray local) throws Exception;
  }

  /**
   * Held by pushes made through this object, so that they run (with their
   * updater calls) one at a time, and so that close() can tell it is being
   * called from inside one. The updater's lifetime needs no Java lock: the
   * store owns it (mxc_kvstore_set_updater_ex) and drops it after the last
   * call in progress, whichever thread pushes.
   */
  private final Object pushing = new Object();

  private KVStore(long handle) {
    super(handle, MxcNative::kvstore_free, "KVStore");
  }

  /**
   * A store of type "local" or "dist_sync" (MxcException UNSUPPORTED, saying
   * why, outside an MPI job or without the MPI plug-in).
   */
  public static KVStore create(String type) {
    return new KVStore(MxcNative.kvstore_create(type));
  }

  /** "local" or "dist_sync". */
  public String type() {
    return MxcNative.kvstore_type(handle());
  }

  /** This worker's rank, 0 .. numWorkers() - 1. */
  public int rank() {
    return MxcNative.kvstore_rank(handle());
  }

  /** The number of workers (1 for "local"). */
  public int numWorkers() {
    return MxcNative.kvstore_num_workers(handle());
  }

  /** Returns once every worker called it. */
  public void barrier() {
    MxcNative.kvstore_barrier(handle());
  }

  /** Stores a copy of arrays[i] under keys[i] (new, distinct keys). */
  public void init(String[] keys, NDArray... arrays) {
    MxcNative.kvstore_init(handle(), keys, Op.handles(arrays));
  }

  /** Stores a copy of arrays[i] under the int key keys[i]. */
  public void init(int[] keys, NDArray... arrays) {
    init(longs(keys), arrays);
  }

  /** Stores a copy of arrays[i] under the int key keys[i]. */
  public void init(long[] keys, NDArray... arrays) {
    MxcNative.java_kvstore_init_int(handle(), keys, Op.handles(arrays));
  }

  /** Sums arrays[i] for keys[i] over the list and the workers. */
  public void push(String[] keys, int priority, NDArray... arrays) {
    Upcalls.clear();
    synchronized (pushing) {
      MxcNative.kvstore_push(handle(), keys, Op.handles(arrays), priority);
    }
  }

  /** Sums arrays[i] for the int keys keys[i] over the list and the workers. */
  public void push(int[] keys, int priority, NDArray... arrays) {
    push(longs(keys), priority, arrays);
  }

  /** Sums arrays[i] for the int keys keys[i] over the list and the workers. */
  public void push(long[] keys, int priority, NDArray... arrays) {
    Upcalls.clear();
    synchronized (pushing) {
      MxcNative.java_kvstore_push_int(handle(), keys, Op.handles(arrays), priority);
    }
  }

  /** Copies the stored array of keys[i] into arrays[i]. */
  public void pull(String[] keys, int priority, NDArray... arrays) {
    MxcNative.kvstore_pull(handle(), keys, Op.handles(arrays), priority);
  }

  /** Copies the stored array of the int key keys[i] into arrays[i]. */
  public void pull(int[] keys, int priority, NDArray... arrays) {
    pull(longs(keys), priority, arrays);
  }

  /** Copies the stored array of the int key keys[i] into arrays[i]. */
  public void pull(long[] keys, int priority, NDArray... arrays) {
    MxcNative.java_kvstore_pull_int(handle(), keys, Op.handles(arrays), priority);
  }

  /** Pushes the arrays and pulls the results back into them. */
  public void pushPull(String[] keys, int priority, NDArray... arrays) {
    Upcalls.clear();
    synchronized (pushing) {
      MxcNative.kvstore_pushpull(handle(), keys, Op.handles(arrays), priority);
    }
  }

  /** Pushes the arrays of the int keys and pulls the results back into them. */
  public void pushPull(int[] keys, int priority, NDArray... arrays) {
    pushPull(longs(keys), priority, arrays);
  }

  /** Pushes the arrays of the int keys and pulls the results back into them. */
  public void pushPull(long[] keys, int priority, NDArray... arrays) {
    Upcalls.clear();
    synchronized (pushing) {
      MxcNative.java_kvstore_pushpull_int(handle(), keys, Op.handles(arrays), priority);
    }
  }

  /**
   * Makes the update operator name ("sgd_update", "sgd_mom_update",
   * "adam_update", ...) with params ("lr" = 0.1, ...) the store's updater,
   * replacing any {@link Updater}. May be called from any thread, also
   * while pushes run (from Java, from inside the updater or from a {@link
   * Fit} training through the store): a push runs either the old updater
   * or the new one.
   */
  public void setOptimizer(String name, Map<String, ?> params) {
    MxcNative.kvstore_set_optimizer(handle(), name, Op.kv(params));
  }

  /**
   * Makes updater the store's updater (see {@link Updater}), replacing any
   * updater or optimizer; null removes it (pushes then store the sum).
   * The native store holds updater (a JNI global reference) until it is
   * replaced or removed or the store is freed, and drops it once the last
   * push still calling it has returned: a {@link Fit} training through the
   * store keeps calling it after {@link #close()} until the fit lets go of
   * the store. Thread-safety: may be called from any thread at any time,
   * also while pushes run (from Java, from inside the updater itself, or
   * from a Fit pushing from C on another thread); each push runs either
   * the old updater or the new one.
   */
  public void setUpdater(Updater updater) {
    MxcNative.java_kvstore_set_updater(
        handle(), updater == null ? null : new UpdaterCall(updater));
  }

  /**
   * Frees the store's handle (idempotent); the store itself, and with it
   * its updater, lives on while a {@link Fit} trains through it. Not from
   * inside a push made through this object (INVALID_ARGUMENT).
   */
  @Override
  public void close() {
    if (Thread.holdsLock(pushing)) {
      throw new MxcException(MxcException.INVALID_ARGUMENT,
          "KVStore.close: not from inside a push (the updater is running)");
    }
    super.close();
  }

  private static long[] longs(int[] keys) {
    if (keys == null) return null;
    long[] k = new long[keys.length];
    for (int i = 0; i < keys.length; i++) k[i] = keys[i];
    return k;
  }

  /** What C calls (mxc_java.i); holds the updater, never the store. */
  private static final class UpdaterCall {
    private final Updater updater;

    UpdaterCall(Updater updater) {
      this.updater = updater;
    }

    /** Called from C: MXC_ERR_* code out. */
    @SuppressWarnings("unused")
    int update(String strKey, long intKey, long recv, long local) {
      NDArray r = NDArray.borrowed(recv), l = NDArray.borrowed(local);
      Scope temporaries = Scope.open();
      try {
        updater.update(strKey != null ? strKey : (Object) Long.valueOf(intKey), r, l);
        return 0;
      } catch (Throwable t) {
        return Upcalls.fail(t, "KVStore updater");
      } finally {
        temporaries.close();
        r.invalidate();
        l.invalidate();
      }
    }
  }
}
