package org.mxc;

import java.lang.ref.Cleaner;
import java.util.function.LongConsumer;

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

    Free(long handle, LongConsumer free) {
      this.handle = handle;
      this.free = free;
    }

    @Override
    public void run() {
      free.accept(handle);
    }
  }

  private long handle;
  private final Cleaner.Cleanable cleanable;
  private final String kind;

  /** Takes ownership of handle (nonzero), freed with free. */
  NativeObject(long handle, LongConsumer free, String kind) {
    this.handle = handle;
    this.kind = kind;
    this.cleanable = Mxc.CLEANER.register(this, new Free(handle, free));
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
