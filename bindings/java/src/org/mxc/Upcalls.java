package org.mxc;

import org.mxc.swig.MxcNative;

/**
 * Java code that mxc calls back on the calling thread ({@link UserBlock}
 * forward functions, {@link KVStore.Updater}s) cannot throw through C: its
 * dispatcher catches the Throwable, records it here for this thread and
 * returns an {@code MXC_ERR_*} code, which fails the native call that ran
 * the callback (a forward pass, a fit run, a push). The MxcException that
 * call then throws on this same thread takes the recorded exception as its
 * cause ({@link MxcException}'s native constructor). A record is consumed
 * by the next native failure of the thread, and only attached when its
 * code is the one the failure reports.
 */
final class Upcalls {
  /** {@code MXC_ERR_OPERATOR}: work failed with a non-mxc error (a Java exception). */
  static final int OPERATOR = 11;

  /**
   * A callback's exception, the code given to C, what threw (for the
   * message) and mxc's message of the thread at that moment: mxc only
   * prefixes a message as a failure travels up ("fn: " + message), and the
   * C API gives a forward function no way to set its own, so the message
   * the native call ends with is prefixes + that stale text, which {@link
   * #describe} replaces with the exception's.
   */
  record Failure(Throwable error, int code, String what, String stale) {}

  private static final ThreadLocal<Failure> PENDING = new ThreadLocal<>();

  private Upcalls() {}

  /**
   * Records t, thrown by a callback on this thread (what: "UserBlock
   * forward", ...); returns the code to give C.
   */
  static int fail(Throwable t, String what) {
    int code = t instanceof MxcException ? ((MxcException) t).code() : OPERATOR;
    String stale = "";
    try {
      stale = MxcNative.java_last_error();
    } catch (Throwable ignored) {
      // Only the message gets worse.
    }
    PENDING.set(new Failure(t, code, what, stale));
    return code;
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

  /** The message of a native failure that f (may be null) caused. */
  static String describe(String message, Failure f) {
    if (f == null) return message;
    Throwable t = f.error();
    String text = t instanceof MxcException ? t.getMessage() : f.what() + " threw " + t;
    if (message == null) message = "";
    String stale = f.stale();
    if (!stale.isEmpty() && message.endsWith(stale)) {
      return message.substring(0, message.length() - stale.length()) + text;
    }
    return message.isEmpty() ? text : message + ": " + text;
  }
}
