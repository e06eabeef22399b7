package org.mxc;

import java.lang.ref.Cleaner;
import java.util.function.LongConsumer;
import org.mxc.swig.MxcNative;

/**
 * Ownership of one native handle, shared by Symbol, Executor and DataIter
 * (NDArray has its own, with allocation pacing): an idempotent
 * {@link #close()} frees it now, and a Cleaner frees it if the owner is
 * collected without being closed. The cleaning action holds only the
 * handle and a static free function, never the Java object (else the
 * object would stay reachable and never be cleaned).
 *
 * <p>close() must not race with other use of the same object (as with
 * streams); using an object after close() throws MxcException
 * (INVALID_HANDLE) naming its kind instead of touching freed memory.
 */
abstract class NativeObject implements AutoCloseable {
  private static final class Free implements Runnable {
    private final long handle;
    private final LongConsumer free;
    volatile Scope scope = Scope.current(); // whose end frees it instead

    Free(long handle, LongConsumer free) {
      this.handle = handle;
      this.free = free;
    }

    @Override
    public void run() {
      if (!Scope.released(scope)) free.accept(handle);
    }
  }

  private long handle;
  private final Free free;
  private final Cleaner.Cleanable cleanable;
  private final String kind;

  /** Takes ownership of handle (nonzero), freed with free. */
  NativeObject(long handle, LongConsumer free, String kind) {
    this.handle = handle;
    this.kind = kind;
    this.free = new Free(handle, free);
    this.cleanable = Mxc.CLEANER.register(this, this.free);
    Scope.tagNew(handle);
  }

  /**
   * Moves this object out of its {@link Scope}: into the enclosing one
   * ({@code all} false; from an outermost scope into none), or out of
   * every scope ({@code all} true).
   */
  void moveOut(boolean all) {
    MxcNative.scope_keep(handle(), all ? 1 : 0);
    Scope s = free.scope;
    free.scope = all || s == null ? null : s.parent();
  }

  /** Moves this object to the enclosing {@link Scope} (see NDArray#keep). */
  public void keep() {
    moveOut(false);
  }

  /** Moves this object out of every {@link Scope}: close() frees it. */
  public void detachFromScope() {
    moveOut(true);
  }

  /** The scope whose end frees this object (null: none). */
  Scope ownerScope() {
    return free.scope;
  }

  /** The live handle; throws when closed. */
  long handle() {
    long h = handle;
    if (h == 0) throw new MxcException(MxcException.INVALID_HANDLE, kind + " is closed");
    return h;
  }

  /** Whether the handle is still live (not closed). */
  boolean isOpen() {
    return handle != 0;
  }

  /** Frees the native object now; idempotent. */
  @Override
  public void close() {
    if (handle != 0) {
      handle = 0;
      cleanable.clean();
    }
  }
}
