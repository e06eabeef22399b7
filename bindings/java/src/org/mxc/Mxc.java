package org.mxc;

import java.lang.ref.Cleaner;
import org.mxc.swig.MxcNative;

/**
 * Library-wide functions: version, engine synchronization, seeding, the
 * allocator's statistics. Every method is thread-safe (mxc's engine may be
 * called from any thread).
 */
public final class Mxc {
  /**
   * The one Cleaner (one daemon thread) that frees the native memory of
   * every org.mxc object its owner forgot to close. Cleaning actions only
   * hold the native handle, never the Java object.
   */
  static final Cleaner CLEANER = Cleaner.create();

  private Mxc() {}

  /** The library version as MAJOR*10000 + MINOR*100 + PATCH. */
  public static int version() {
    return MxcNative.version();
  }

  /** The library version as text, e.g. {@code "1.0.0"}. */
  public static String versionString() {
    return MxcNative.version_string();
  }

  /**
   * Waits until all pushed work has finished; throws the first asynchronous
   * failure since the previous call (from any thread's work).
   */
  public static void waitAll() {
    MxcNative.wait_all();
  }

  /** Seeds mxc's random generators (all threads). */
  public static void seed(long seed) {
    MxcNative.random_seed(seed);
  }

  /** Sets the number of engine worker threads. */
  public static void setNumThreads(int n) {
    MxcNative.set_num_threads(n);
  }

  /**
   * Whether operators invoked from the calling thread run in training mode
   * (Dropout, BatchNorm); per thread. Returns the previous mode.
   */
  public static boolean setTraining(boolean train) {
    return MxcNative.set_training(train ? 1 : 0) != 0;
  }

  /** A CPU allocator statistic ({@code MxcNativeConstants.MXC_STORAGE_*}). */
  public static long storageStat(int stat) {
    return MxcNative.storage_stat(stat);
  }

  /** Bytes the CPU allocator has handed to live arrays now. */
  public static long bytesInUse() {
    return MxcNative.storage_stat(0 /* MXC_STORAGE_BYTES_IN_USE */);
  }
}
