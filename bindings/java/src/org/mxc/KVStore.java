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
   * stores and read this one. An exception it throws fails that push,
   * which throws {@link MxcException} ({@code MXC_ERR_OPERATOR}, or the code
   * of an MxcException thrown) with the exception as cause and names the
   * key; the keys pushed before in that call were updated, the store
   * stays usable.
   */
  @FunctionalInterface
  public interface Updater {
    /** Updates local (the stored value of key) from recv (this push's sum). */
    void update(Object key, NDArray recv, NDArray local) throws Exception;
  }

  /**
   * The Java updater's native holder (a JNI global reference, which the C
   * API leaves the binding to drop: mxc_kvstore_set_updater has no free
   * function). Its monitor serialises pushes (which may run the updater)
   * with replacing and dropping it, so a holder is released only while no
   * push can be calling it. Holds nothing of the KVStore, so the Cleaner
   * can use it.
   */
  private static final class Slot {
    long token; // 0: no Java updater
    Scope hooked; // the scope whose end drops the updater, once registered

    void release() {
      long t = token;
      token = 0;
      if (t != 0) MxcNative.java_upcall_release(t);
    }

    /** Removes the Java updater from the live store h and drops it. */
    void drop(long h) {
      if (token == 0) return;
      try {
        // A fit may hold the store beyond this handle: it must not call
        // the dropped updater.
        MxcNative.java_kvstore_set_updater(h, null);
      } catch (MxcException e) {
        // The store is gone already: nothing can call the updater.
      }
      release();
    }
  }

  private final Slot slot;

  private KVStore(long handle, Slot slot) {
    super(handle, h -> free(h, slot), "KVStore");
    this.slot = slot;
  }

  private static void free(long h, Slot slot) {
    synchronized (slot) {
      slot.drop(h);
      MxcNative.kvstore_free(h);
    }
  }

  /**
   * A store of type "local" or "dist_sync" (MxcException UNSUPPORTED, saying
   * why, outside an MPI job or without the MPI plug-in).
   */
  public static KVStore create(String type) {
    return new KVStore(MxcNative.kvstore_create(type), new Slot());
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
    synchronized (slot) {
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
    synchronized (slot) {
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
    synchronized (slot) {
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
    synchronized (slot) {
      MxcNative.java_kvstore_pushpull_int(handle(), keys, Op.handles(arrays), priority);
    }
  }

  /**
   * Makes the update operator name ("sgd_update", "sgd_mom_update",
   * "adam_update", ...) with params ("lr" = 0.1, ...) the store's updater,
   * replacing any {@link Updater}.
   */
  public void setOptimizer(String name, Map<String, ?> params) {
    notFromTheUpdater("setOptimizer");
    synchronized (slot) {
      MxcNative.kvstore_set_optimizer(handle(), name, Op.kv(params));
      slot.release(); // replaced in C: no push is running it (they hold slot)
    }
  }

  /**
   * Makes updater the store's updater (see {@link Updater}), replacing any
   * updater or optimizer; null removes it (pushes then store the sum).
   * The store holds updater (a JNI global reference) until it is replaced
   * or removed, or the store is closed (by {@link #close()}, its Scope's
   * end or the Cleaner), then drops it: a {@link Fit} still training
   * through a closed store trains without it. Thread-safety: pushes made
   * through this object are serialised with this call, but a {@link Fit}
   * training through the store pushes from C without that lock, so do not
   * replace or remove the updater (nor call {@link #setOptimizer}) while
   * such a fit runs on another thread.
   */
  public void setUpdater(Updater updater) {
    notFromTheUpdater("setUpdater");
    synchronized (slot) {
      long token = MxcNative.java_kvstore_set_updater(
          handle(), updater == null ? null : new UpdaterCall(updater));
      slot.release(); // the one replaced (no push is running it)
      slot.token = token;
    }
    if (updater != null) dropAtScopeEnd();
  }

  /**
   * Frees the store (idempotent) and drops its Java updater; a {@link Fit}
   * holding the store trains on without the updater. Not from inside the
   * updater (INVALID_ARGUMENT).
   */
  @Override
  public void close() {
    notFromTheUpdater("close");
    super.close();
  }

  /**
   * The updater runs inside push, which holds slot: replacing or dropping
   * it from there would free what the running push still calls.
   */
  private void notFromTheUpdater(String what) {
    if (Thread.holdsLock(slot)) {
      throw new MxcException(MxcException.INVALID_ARGUMENT,
          "KVStore." + what + ": not from inside a push (the updater is running)");
    }
  }

  /** The end of the scope owning this store drops the updater while the handle works. */
  private void dropAtScopeEnd() {
    Scope s = ownerScope();
    synchronized (slot) {
      if (s == null || slot.hooked == s) return;
      slot.hooked = s;
    }
    s.beforeEnd(() -> scopeEnding(s));
  }

  private void scopeEnding(Scope s) {
    synchronized (slot) {
      slot.hooked = null;
      if (!isOpen() || slot.token == 0) return;
      if (ownerScope() == s) {
        slot.drop(handle());
        return;
      }
    }
    dropAtScopeEnd(); // moved out of s (keep()): its new scope's end, if any
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
