package org.mxc;

import java.util.Map;
import org.mxc.swig.MxcNative;

/**
 * mxc's key-value store for parameter synchronisation (docs/kvstore.md):
 * {@code "local"} sums within the process, {@code "dist_sync"} across the
 * processes of an MPI job ({@code mpirun -np N java ...}), so every worker
 * applies the same update. Keys are strings here.
 *
 * <pre>{@code
 * try (KVStore kv = KVStore.create("dist_sync")) {
 *   kv.init(names, weights);                 // every worker: rank 0's values
 *   kv.pushPull(names, grads, 0);            // grads summed over the workers
 * }
 * }</pre>
 *
 * <p>Push sums the arrays given for each key (a key may repeat) and stores
 * the sum, or updates the stored array with the optimizer of {@link
 * #setOptimizer}; pull copies the stored arrays out. Calls return at once:
 * the work runs on mxc's engine in order with all other work on the arrays.
 * With {@code "dist_sync"} every worker must make the same calls in the
 * same order. Methods may be called from any thread. Lifetime as the other
 * handles: {@link #close()}, or the Cleaner once unreachable; the arrays
 * stay the caller's.
 */
public final class KVStore extends NativeObject {
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

  /** Sums arrays[i] for keys[i] over the list and the workers. */
  public void push(String[] keys, int priority, NDArray... arrays) {
    MxcNative.kvstore_push(handle(), keys, Op.handles(arrays), priority);
  }

  /** Copies the stored array of keys[i] into arrays[i]. */
  public void pull(String[] keys, int priority, NDArray... arrays) {
    MxcNative.kvstore_pull(handle(), keys, Op.handles(arrays), priority);
  }

  /** Pushes the arrays and pulls the results back into them. */
  public void pushPull(String[] keys, int priority, NDArray... arrays) {
    MxcNative.kvstore_pushpull(handle(), keys, Op.handles(arrays), priority);
  }

  /**
   * Makes the update operator name ("sgd_update", "sgd_mom_update",
   * "adam_update", ...) with params ("lr" = 0.1, ...) the store's updater.
   */
  public void setOptimizer(String name, Map<String, ?> params) {
    MxcNative.kvstore_set_optimizer(handle(), name, Op.kv(params));
  }
}
