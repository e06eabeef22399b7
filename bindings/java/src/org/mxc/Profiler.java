package org.mxc;

import org.mxc.swig.MxcNative;

/**
 * The profiler: what mxc does, as a Chrome trace (open it in
 * ui.perfetto.dev or chrome://tracing) and as per-operator statistics.
 *
 * <pre>{@code
 * Profiler.setConfig("filename", "trace.json");
 * Profiler.start();
 * try (Profiler.Scope s = Profiler.scope("step")) {
 *   ...operators...
 * }
 * Profiler.dump(true);                 // writes trace.json and stops
 * System.out.println(Profiler.stats(false, false));
 * }</pre>
 *
 * <p>Keys for {@link #setConfig} are those of mxc_profiler_set_config
 * (filename, profile_all, profile_imperative, profile_symbolic,
 * profile_engine, profile_wait, profile_copy, profile_memory, profile_io,
 * profile_user). Every method may be called from any thread; a scope is
 * closed on the thread that opened it.
 */
public final class Profiler {
  private Profiler() {}

  public static final int STOP = 0;
  public static final int RUN = 1;
  public static final int PAUSE = 2;

  /** A named range of the calling thread's track; close ends it. */
  public static final class Scope implements AutoCloseable {
    private boolean closed;

    private Scope() {}

    /** Ends the range; idempotent; same thread only. */
    @Override
    public void close() {
      if (closed) return;
      closed = true;
      MxcNative.profiler_range_end();
    }
  }

  public static void setConfig(String key, String value) {
    MxcNative.profiler_set_config(key, value);
  }

  public static void setConfig(String key, boolean on) {
    setConfig(key, on ? "1" : "0");
  }

  /** STOP, RUN or PAUSE. */
  public static void setState(int state) {
    MxcNative.profiler_set_state(state);
  }

  public static int state() {
    return MxcNative.profiler_get_state();
  }

  public static void start() {
    setState(RUN);
  }

  public static void pause() {
    setState(PAUSE);
  }

  public static void stop() {
    setState(STOP);
  }

  /** Writes the trace to the configured file; finished also stops and clears. */
  public static void dump(boolean finished) {
    MxcNative.profiler_dump(finished ? 1 : 0);
  }

  /** The trace as JSON text. */
  public static String dumps() {
    return MxcNative.profiler_dumps();
  }

  /** Statistics as a table, or JSON; reset discards the events afterwards. */
  public static String stats(boolean json, boolean reset) {
    return MxcNative.profiler_stats(json ? 1 : 0, reset ? 1 : 0);
  }

  public static Scope scope(String name) {
    MxcNative.profiler_range_begin(name);
    return new Scope();
  }

  public static void mark(String name) {
    MxcNative.profiler_mark(name);
  }

  public static void counter(String name, long value) {
    MxcNative.profiler_counter(name, value);
  }
}
