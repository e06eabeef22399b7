package org.mxc;

import org.mxc.swig.MxcNative;

/**
 * Java code that mxc calls back on the calling thread ({@link UserBlock}
 * forward functions, {@link KVStore.Updater}s) cannot throw through C: its
 * dispatcher catches the Throwable, records it here for this thread and
 * returns an {@code MXC_ERR_*} code, which fails the native call that ran
 * the callback (a forward pass, a fit run, a push). The MxcException that
 * call then throws on this same thread takes the recorded exception as its
 * cause ({@link MxcException}'s native constructor); its message is mxc's,
 * which ends with the exception's text (set through mxc_set_last_error). A record is consumed
 * by the next native failure of the thread, and only attached when its
 * code is the one the failure reports.
 */
final class Upcalls {
  /** {@code MXC_ERR_OPERATOR}: work failed with a non-mxc error (a Java exception). */
  static final int OPERATOR = 11;

  /**
   * A callback's exception and the code given to C. Only the exception
   * object is kept here (to become the cause): its text travels through mxc
   * itself (mxc_set_last_error), which keeps it behind the prefixes the
   * failure gathers on its way out ("mxc_kvstore_push: key 2: " + text).
   */
  record Failure(Throwable error, int code) {}

  private static final ThreadLocal<Failure> PENDING = new ThreadLocal<>();

  private Upcalls() {}

  /**
   * Records t, thrown by a callback on this thread (what: "UserBlock
   * forward", ...), makes its text mxc's message of the failure, and
   * returns the code to give C.
   */
  static int fail(Throwable t, String what) {
    int code = t instanceof MxcException ? ((MxcException) t).code() : OPERATOR;
    try {
      MxcNative.java_set_last_error(code, text(t, what));
    } catch (Throwable ignored) {
      // Only the message gets worse: mxc says the code the callback returned.
    }
    PENDING.set(new Failure(t, code));
    return code;
  }

  private static String text(Throwable t, String what) {
    return t instanceof MxcException ? t.getMessage() : what + " threw " + t;
  }

  /**
   * Forgets a record no native failure took (a failure mxc handled
   * itself): called where Java enters code that runs callbacks (forward,
   * fit's run, push), so an old record never lands on a later failure.
   */
  static void clear() {
    PENDING.remove();
  }

  /** The record if its code is code (cleared either way), else null. */
  static Failure take(int code) {
    Failure f = PENDING.get();
    if (f == null) return null;
    PENDING.remove();
    return f.code() == code ? f : null;
  }

  static Throwable cause(Failure f) {
    return f == null ? null : f.error();
  }
}
