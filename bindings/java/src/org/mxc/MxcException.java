package org.mxc;

import org.mxc.swig.MxcNative;

/**
 * A failure reported by mxc: the {@code MXC_ERR_*} code and the library's
 * own message (from {@code mxc_last_error}, read in the failing call).
 *
 * <p>Unchecked, like the argument errors of the JDK. Immutable, so
 * thread-safe.
 */
public class MxcException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** {@code MXC_ERR_INVALID_ARGUMENT}. */
  public static final int INVALID_ARGUMENT = 1;
  /** {@code MXC_ERR_INVALID_HANDLE}: a closed or foreign handle. */
  public static final int INVALID_HANDLE = 2;
  /** {@code MXC_ERR_SHAPE}. */
  public static final int SHAPE = 3;
  /** {@code MXC_ERR_DTYPE}. */
  public static final int DTYPE = 4;
  /** {@code MXC_ERR_NOT_FOUND}: e.g. an unknown operator. */
  public static final int NOT_FOUND = 7;
  /** {@code MXC_ERR_IO}: a missing, truncated or corrupted file or buffer. */
  public static final int IO = 8;
  /** {@code MXC_ERR_UNSUPPORTED}: valid but not available here (a GPU, MPI). */
  public static final int UNSUPPORTED = 9;
  /** {@code MXC_ERR_INTERNAL}: also a wait the binding gave up (interrupted). */
  public static final int INTERNAL = 10;

  private final int code;

  /**
   * Called from native code with the failing call's code and message, and
   * by org.mxc for failures it detects itself (a closed array).
   */
  public MxcException(int code, String message) {
    super(message);
    this.code = code;
  }

  /**
   * Called from native code only (mxc_java.i): a failure of the library
   * that a Java callback on this thread caused (a {@link UserBlock}'s
   * forward function or a {@link KVStore.Updater} that threw) carries that
   * exception as its cause; mxc's message already says what was thrown.
   */
  @SuppressWarnings("unused")
  private MxcException(int code, String message, boolean fromNative) {
    this(code, message, Upcalls.take(code));
  }

  private MxcException(int code, String message, Upcalls.Failure failure) {
    super(message);
    this.code = code;
    // Only when there is one: a null cause could never be set later.
    Throwable cause = Upcalls.cause(failure);
    if (cause != null) initCause(cause);
  }

  /** The {@code MXC_ERR_*} code (positive). */
  public int code() {
    return code;
  }

  /** The code's name, e.g. {@code "MXC_ERR_SHAPE"}. */
  public String codeName() {
    return MxcNative.error_name(code);
  }

  @Override
  public String toString() {
    return "MxcException[" + codeName() + "]: " + getMessage();
  }
}
