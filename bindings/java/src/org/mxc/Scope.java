package org.mxc;

import org.mxc.swig.MxcNative;

/**
 * A memory scope: every NDArray, Symbol, Executor, DataIter, Predictor,
 * RecordIO, Block, Optimizer or Fit this thread makes while the scope is
 * its innermost open one is freed when the scope closes, unless moved out first ({@link
 * NDArray#keep()} to the enclosing scope, {@link NDArray#detachFromScope()} out of
 * every scope). One implementation for every binding: mxc_scope_* in the
 * C library.
 *
 * <pre>{@code
 * try (Scope s = Scope.open()) {
 *   NDArray t = x.mul(w).add(b);      // temporaries: freed at the end
 *   result = Op.invoke("relu", t).keep(); // survives this scope
 * }
 * }</pre>
 *
 * <p>Objects freed by their scope are marked, so their Cleaner never
 * frees them again; using one afterwards throws {@link MxcException}
 * ({@code MXC_ERR_INVALID_HANDLE}). Scopes are per thread: open and close
 * one on the same thread, innermost first (try-with-resources does both);
 * closing it on another thread throws. Objects made by other threads
 * never land in this thread's scopes.
 *
 * <p>Introspection: {@link #liveHandles()} and {@link #liveBytes()} for
 * this scope, {@link #processHandles()} and {@link #processBytes()} for
 * the process, and {@link #dump()} / {@link #dumpAll()} listing live
 * handles with the C function that made them and, with handle debugging
 * on ({@code MXC_DEBUG_HANDLES=1} or {@link #setDebug}), the source line
 * that made each (the first frame outside org.mxc's classes).
 */
public final class Scope implements AutoCloseable {
  private static final ThreadLocal<Scope> TOP = new ThreadLocal<>();
  /** Handle debugging on? Cached: asked once, then set by setDebug. */
  private static volatile boolean debug = MxcNative.handle_debug_enabled() != 0;

  private final long handle;
  private final Scope parent;
  private final String tag; // the opening line, with debugging on
  private volatile boolean ended;

  /** The classes whose frames a caller line skips. */
  private static final java.util.Set<String> BINDING =
      java.util.Set.of(
          Scope.class.getName(), NDArray.class.getName(), NativeObject.class.getName(),
          Op.class.getName(), Symbol.class.getName(), Executor.class.getName(),
          DataIter.class.getName(), Predictor.class.getName(), RecordIO.class.getName(),
          Autograd.class.getName(), Checkpoint.class.getName(), PredictorPool.class.getName(),
          Image.class.getName(), ImageRecord.class.getName(), Metric.class.getName(),
          Mxc.class.getName(), Profiler.class.getName(), Block.class.getName(),
          Optimizer.class.getName(), Fit.class.getName());

  private Scope(long handle, Scope parent, String tag) {
    this.handle = handle;
    this.parent = parent;
    this.tag = tag;
  }

  /** Opens a scope on the calling thread. */
  public static Scope open() {
    String tag = debug ? callerLine() : null;
    if (tag != null) MxcNative.handle_tag_set(tag);
    Scope s = new Scope(MxcNative.scope_begin(), TOP.get(), tag);
    TOP.set(s);
    return s;
  }

  /** The calling thread's innermost open scope, or null. */
  static Scope current() {
    return TOP.get();
  }

  /** Whether objects owned by s were freed by its end (s may be null). */
  static boolean released(Scope s) {
    return s != null && s.ended;
  }

  Scope parent() {
    return parent;
  }

  /** Frees what is still in the scope; idempotent. */
  @Override
  public void close() {
    if (ended) return;
    if (TOP.get() != this) {
      throw new MxcException(
          MxcException.INVALID_ARGUMENT,
          "Scope.close: not this thread's innermost open scope (close scopes on the thread "
              + "that opened them, innermost first)");
    }
    ended = true; // first: Cleaners running meanwhile must not free again
    TOP.set(parent);
    MxcNative.scope_end(handle);
    if (tag != null) MxcNative.handle_tag_set(parent != null ? parent.tag : null);
  }

  /** Live handles registered in this scope (not in scopes inside it). */
  public long liveHandles() {
    return MxcNative.scope_handles(live());
  }

  /** Bytes of the array data registered in this scope. */
  public long liveBytes() {
    return MxcNative.scope_bytes(live());
  }

  /** A line per live handle of this scope. */
  public String dump() {
    return MxcNative.handle_dump(live());
  }

  private long live() {
    if (ended) throw new MxcException(MxcException.INVALID_HANDLE, "Scope is closed");
    return handle;
  }

  /** Live handles of every kind in the process. */
  public static long processHandles() {
    return MxcNative.scope_handles(0);
  }

  /** Bytes of the data of every live array handle in the process. */
  public static long processBytes() {
    return MxcNative.scope_bytes(0);
  }

  /** A line per live handle of the process (for finding leaks). */
  public static String dumpAll() {
    return MxcNative.handle_dump(0);
  }

  /**
   * Turns handle debugging on or off: while on, every object records the
   * source line that made it, which {@link #dump()} shows.
   */
  public static void setDebug(boolean on) {
    MxcNative.handle_debug_set(on ? 1 : 0);
    debug = on;
  }

  /** With debugging on, tags a new handle with the line that made it. */
  static void tagNew(long handle) {
    if (debug) MxcNative.handle_tag(handle, callerLine());
  }

  /** The first frame outside the binding's classes, as "File.java:line". */
  private static String callerLine() {
    return StackWalker.getInstance()
        .walk(
            frames ->
                frames
                    .filter(f -> !BINDING.contains(f.getClassName())
                        && !f.getClassName().startsWith("org.mxc.nn."))
                    .findFirst()
                    .map(f -> f.getFileName() + ":" + f.getLineNumber())
                    .orElse("(unknown)"));
  }
}
