package org.mxc;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import org.mxc.swig.MxcNative;

/**
 * A dense n-dimensional array on a {@link Device} (the CPU unless created
 * on a GPU), owning one mxc array handle. Reads of a GPU array ({@link
 * #toFloatArray()}, ...) copy it to host memory.
 *
 * <p><b>Lifetime.</b> {@link #close()} frees the handle at once and is
 * idempotent; an array that is never closed is freed by a {@link Cleaner}
 * after the garbage collector finds it unreachable. Views ({@link
 * #reshape}, {@link #slice}, {@link #at}) and results of operators are
 * new, independent NDArrays: closing one never invalidates another (mxc
 * counts references to the shared storage). Using a closed array throws
 * {@link MxcException} with code {@code MXC_ERR_INVALID_HANDLE}.
 *
 * <p><b>Threads.</b> Any method may be called from any thread; operators
 * run asynchronously on mxc's engine, and reads ({@link #toFloatArray()},
 * ...) wait for pending writes. Closing an array while another thread is
 * still using it is a race the caller must avoid (as with any resource).
 */
public final class NDArray implements AutoCloseable {
  private static final Op ADD = Op.get("elemwise_add");
  private static final Op SUB = Op.get("elemwise_sub");
  private static final Op MUL = Op.get("elemwise_mul");
  private static final Op DIV = Op.get("elemwise_div");
  private static final Op DOT = Op.get("dot");

  /**
   * The cleaning action: holds only the native handle and the scope that
   * owns it (whose end frees the handle instead; see {@link Scope}).
   */
  private static final class Free implements Runnable {
    private final long handle;
    volatile Scope scope = Scope.current();
    /** The handle was given to mxc (a UserBlock's result): never freed here. */
    volatile boolean given;

    Free(long handle) {
      this.handle = handle;
    }

    @Override
    public void run() {
      if (!given && !Scope.released(scope)) MxcNative.ndarray_free(handle);
      Pressure.LIVE.decrement();
    }
  }

  /**
   * Native memory pressure, which the garbage collector cannot see. A
   * dropped NDArray costs the Java heap some 100 bytes but mxc a few hundred
   * bytes of records plus its data, so a program that never closes arrays
   * could fill native memory long before the heap needs a collection. As
   * java.nio does for direct buffers, a creating thread asks for a
   * collection when the arrays not yet freed (LIVE) or mxc's bytes in use
   * have doubled since the last one (floors: 65536 arrays, 256 MiB), then
   * waits for the Cleaner to catch up. Checked every 1024 creations, so the
   * hot path pays one LongAdder increment (and a decrement when freed).
   */
  static final class Pressure {
    static final LongAdder LIVE = new LongAdder();
    private static final long MIN_ARRAYS = 65536, MIN_BYTES = 256L << 20;
    private static final ReentrantLock LOCK = new ReentrantLock();
    private static int created; // racy on purpose: only paces the checks
    private static volatile long arrayLimit = MIN_ARRAYS, byteLimit = MIN_BYTES;

    private Pressure() {}

    static void created() {
      LIVE.increment();
      if ((++created & 1023) != 0) return;
      long live = LIVE.sum(), bytes = Mxc.bytesInUse();
      if (live > arrayLimit || bytes > byteLimit) {
        collect();
        return;
      }
      // Limits set while many arrays were alive (or while other threads
      // kept creating during a collection) decay once those are gone.
      if (live < arrayLimit / 4 && arrayLimit > MIN_ARRAYS) {
        arrayLimit = Math.max(arrayLimit / 2, MIN_ARRAYS);
      }
      if (bytes < byteLimit / 4 && byteLimit > MIN_BYTES) {
        byteLimit = Math.max(byteLimit / 2, MIN_BYTES);
      }
    }

    private static void collect() {
      if (!LOCK.tryLock()) return; // another thread is collecting
      try {
        if (LIVE.sum() <= arrayLimit && Mxc.bytesInUse() <= byteLimit) return;
        System.gc();
        // The Cleaner frees asynchronously, one array at a time: wait (up
        // to 2 s) until the count has stopped falling, so the limits below
        // come from the arrays really alive. Meanwhile this thread creates
        // nothing: that is the back-pressure. "Stopped" is 3 ms once at
        // least half of the limit's arrays are gone, but 50 ms before: on
        // a busy machine the Cleaner thread can go unscheduled for a few
        // ms, and limits taken from that pause would let the backlog (and
        // resident memory) grow by hundreds of thousands of arrays.
        long half = arrayLimit / 2;
        long now = LIVE.sum();
        for (int i = 0, still = 0; i < 2000 && (i < 5 || still < (now > half ? 50 : 3)); i++) {
          Thread.sleep(1);
          long prev = now;
          now = LIVE.sum();
          still = now < prev ? 0 : still + 1;
        }
        arrayLimit = Math.max(2 * now, MIN_ARRAYS);
        byteLimit = Math.max(2 * Mxc.bytesInUse(), MIN_BYTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        LOCK.unlock();
      }
    }
  }

  private long handle;
  private final Free free;
  private final Cleaner.Cleanable cleanable;

  /** Takes ownership of a new handle (non-zero) returned by mxc. */
  NDArray(long handle) {
    this.handle = handle;
    this.free = new Free(handle);
    this.cleanable = Mxc.CLEANER.register(this, free);
    Pressure.created();
    Scope.tagNew(handle);
  }

  /**
   * A view of a handle mxc lends to a callback (a {@link UserBlock}'s
   * inputs, a {@link KVStore.Updater}'s arrays): no Cleaner, never freed
   * here, in no scope; {@link #invalidate()} when the call returns, so a
   * callback that kept it gets MxcException instead of a freed handle.
   */
  private NDArray(long handle, boolean borrowed) {
    this.handle = handle;
    this.free = null;
    this.cleanable = null;
  }

  static NDArray borrowed(long handle) {
    return new NDArray(handle, true);
  }

  /** The scope that frees this array (null: none, or borrowed). */
  Scope ownerScope() {
    return free == null ? null : free.scope;
  }

  /** Whether this is a borrowed view (see {@link #borrowed}). */
  boolean isBorrowed() {
    return free == null;
  }

  /** Ends a borrowed view: later use throws INVALID_HANDLE. */
  void invalidate() {
    handle = 0;
  }

  /**
   * Gives this array's handle to mxc (a user block's result: mxc owns it
   * from now on) and closes this object without freeing the handle. The
   * handle leaves every scope first, so no scope frees it either.
   */
  long giveToMxc() {
    long h = handle();
    MxcNative.scope_keep(h, 1);
    free.given = true;
    handle = 0;
    cleanable.clean();
    return h;
  }

  /**
   * Moves this array out of its {@link Scope} into the enclosing one (out
   * of an outermost scope: into none), so that it outlives the scope; a
   * no-op outside scopes. Returns this, for {@code return y.keep();}.
   */
  public NDArray keep() {
    return moveOut(false);
  }

  /**
   * Moves this array out of every {@link Scope}: only {@link #close()} or
   * the Cleaner frees it. Returns this. (Not {@link #detach()}, which makes
   * an array without gradient history.)
   */
  public NDArray detachFromScope() {
    return moveOut(true);
  }

  private NDArray moveOut(boolean all) {
    if (free == null) {
      throw new MxcException(MxcException.INVALID_ARGUMENT,
          "a callback's borrowed array belongs to mxc and lives only for the call: "
              + "keep a result of an operator on it instead");
    }
    try {
      MxcNative.scope_keep(handle(), all ? 1 : 0);
      Scope s = free.scope;
      free.scope = all || s == null ? null : s.parent();
      return this;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The handle, or MxcException when closed. Callers keep this reachable. */
  long handle() {
    long h = handle;
    if (h == 0) {
      throw new MxcException(MxcException.INVALID_HANDLE, "NDArray is closed");
    }
    return h;
  }

  // ---- creation -------------------------------------------------------

  /** A new CPU array of this type and shape with unspecified contents. */
  public static NDArray empty(DType dtype, long... shape) {
    return new NDArray(MxcNative.ndarray_create(shape, dtype.code));
  }

  /**
   * A new array on device with unspecified contents. A GPU that cannot be
   * used throws MxcException ({@link MxcException#UNSUPPORTED}, with mxc's
   * reason).
   */
  public static NDArray empty(Device device, DType dtype, long... shape) {
    return new NDArray(
        MxcNative.ndarray_create_on(shape, dtype.code, device.typeCode(), device.id()));
  }

  /** A new CPU array of zeros. */
  public static NDArray zeros(DType dtype, long... shape) {
    NDArray a = empty(dtype, shape);
    MxcNative.init_array(a.handle, "zeros", null);
    return a;
  }

  /**
   * A new array of zeros on device. On a GPU the zeros are copied from
   * host memory (mxc runs no host fill over device memory).
   */
  public static NDArray zeros(Device device, DType dtype, long... shape) {
    if (device.kind() == Device.Kind.CPU) return zeros(dtype, shape);
    try (NDArray host = zeros(dtype, shape)) {
      return host.copyTo(device);
    }
  }

  /** A float32 array holding a copy of data; no shape means 1-D. */
  public static NDArray of(float[] data, long... shape) {
    return filled(data, data.length, DType.FLOAT32, shape);
  }

  /** A float64 array holding a copy of data; no shape means 1-D. */
  public static NDArray of(double[] data, long... shape) {
    return filled(data, data.length, DType.FLOAT64, shape);
  }

  /** An int32 array holding a copy of data; no shape means 1-D. */
  public static NDArray of(int[] data, long... shape) {
    return filled(data, data.length, DType.INT32, shape);
  }

  /** An int64 array holding a copy of data; no shape means 1-D. */
  public static NDArray of(long[] data, long... shape) {
    return filled(data, data.length, DType.INT64, shape);
  }

  /** A uint8 array holding a copy of data; no shape means 1-D. */
  public static NDArray of(byte[] data, long... shape) {
    return filled(data, data.length, DType.UINT8, shape);
  }

  private static NDArray filled(Object data, int length, DType dtype, long[] shape) {
    NDArray a = empty(dtype, shape.length == 0 ? new long[] {length} : shape);
    try {
      MxcNative.java_copy_from_array(a.handle, data, dtype.size);
    } catch (RuntimeException e) {
      a.close();
      throw e;
    }
    return a;
  }

  /**
   * Fills this array by an initializer (asynchronously): method {@code
   * "zeros"}, {@code "ones"}, {@code "constant"} (value), {@code "uniform"}
   * (scale), {@code "normal"} (sigma), {@code "xavier"} (rnd_type,
   * factor_type, magnitude), {@code "msra"}; params may be null. Random
   * methods draw from the stream {@link Mxc#seed} seeds. Returns this.
   */
  public NDArray initialize(String method, java.util.Map<String, ?> params) {
    try {
      MxcNative.init_array(handle(), method, Op.kv(params));
      return this;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  // ---- properties -----------------------------------------------------

  /** The extents, outermost first (a new array each call). */
  public long[] shape() {
    try {
      long h = handle();
      long[] s = new long[MxcNative.ndarray_ndim(h)];
      for (int i = 0; i < s.length; i++) s[i] = MxcNative.ndarray_dim(h, i);
      return s;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Number of dimensions. */
  public int ndim() {
    try {
      return MxcNative.ndarray_ndim(handle());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Number of elements. */
  public long size() {
    try {
      return MxcNative.ndarray_size(handle());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The element type. */
  public DType dtype() {
    try {
      return DType.of(MxcNative.ndarray_dtype(handle()));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Whether {@link #close()} has been called. */
  public boolean isClosed() {
    return handle == 0;
  }

  // ---- data in and out ------------------------------------------------

  /** Overwrites the contents with data (dtype float32, length == size()). */
  public NDArray copyFrom(float[] data) {
    return copyFromArray(data, DType.FLOAT32);
  }

  /** Overwrites the contents with data (dtype float64, length == size()). */
  public NDArray copyFrom(double[] data) {
    return copyFromArray(data, DType.FLOAT64);
  }

  /** Overwrites the contents with data (dtype int32, length == size()). */
  public NDArray copyFrom(int[] data) {
    return copyFromArray(data, DType.INT32);
  }

  /** Overwrites the contents with data (dtype int64, length == size()). */
  public NDArray copyFrom(long[] data) {
    return copyFromArray(data, DType.INT64);
  }

  /** Overwrites the contents with data (a 1-byte dtype, length == size()). */
  public NDArray copyFrom(byte[] data) {
    return copyFromArray(data, null);
  }

  /**
   * Overwrites the contents with the bytes of a direct buffer from its
   * position to its limit (exactly size() * dtype().size bytes, native byte
   * order), read in place: no copy through the Java heap. The buffer's
   * position is not changed.
   */
  public NDArray copyFrom(ByteBuffer direct) {
    try {
      MxcNative.ndarray_copy_from(handle(), window(direct));
      return this;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Writes the contents into a direct buffer from its position to its limit
   * (exactly size() * dtype().size bytes), in place. Waits for pending
   * writes; the buffer's position is not changed.
   */
  public void copyTo(ByteBuffer direct) {
    try {
      MxcNative.ndarray_copy_to(handle(), window(direct));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Copies this array into dst (same shape and dtype, any device),
   * asynchronously: later work on dst and reads of it see the copy.
   */
  public void copyTo(NDArray dst) {
    try {
      MxcNative.ndarray_copy(handle(), dst.handle());
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(dst);
    }
  }

  /**
   * A new array on device (owned by the caller: close it) holding a copy of
   * this one; the copy is asynchronous, reads of the result wait for it. A
   * GPU that cannot be used throws MxcException (UNSUPPORTED).
   */
  public NDArray copyTo(Device device) {
    NDArray dst = empty(device, dtype(), shape());
    try {
      copyTo(dst);
    } catch (RuntimeException e) {
      dst.close();
      throw e;
    }
    return dst;
  }

  /** The device this array's memory is on. */
  public Device device() {
    try {
      long h = handle();
      return Device.of(MxcNative.ndarray_device_type(h), MxcNative.ndarray_device_id(h));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The contents as a new float[] (dtype must be float32). */
  public float[] toFloatArray() {
    return (float[]) copyToArray(DType.FLOAT32);
  }

  /** The contents as a new double[] (dtype must be float64). */
  public double[] toDoubleArray() {
    return (double[]) copyToArray(DType.FLOAT64);
  }

  /** The contents as a new int[] (dtype must be int32). */
  public int[] toIntArray() {
    return (int[]) copyToArray(DType.INT32);
  }

  /** The contents as a new long[] (dtype must be int64). */
  public long[] toLongArray() {
    return (long[]) copyToArray(DType.INT64);
  }

  /** The contents as a new byte[] (a 1-byte dtype: uint8, int8, bool). */
  public byte[] toByteArray() {
    return (byte[]) copyToArray(null);
  }

  private static ByteBuffer window(ByteBuffer b) {
    if (b == null || !b.isDirect()) {
      throw new MxcException(MxcException.INVALID_ARGUMENT,
          "expected a direct ByteBuffer (ByteBuffer.allocateDirect)");
    }
    return b.position() == 0 && b.limit() == b.capacity() ? b : b.slice();
  }

  private void checkDType(DType want, DType have) {
    if (want == null ? have.size != 1 : want != have) {
      throw new MxcException(MxcException.DTYPE, "NDArray has dtype " + have.mxcName()
          + "; expected " + (want == null ? "a 1-byte dtype" : want.mxcName()));
    }
  }

  private NDArray copyFromArray(Object data, DType want) {
    try {
      long h = handle();
      DType have = DType.of(MxcNative.ndarray_dtype(h));
      checkDType(want, have);
      MxcNative.java_copy_from_array(h, data, have.size);
      return this;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  private Object copyToArray(DType want) {
    try {
      long h = handle();
      DType have = DType.of(MxcNative.ndarray_dtype(h));
      checkDType(want, have);
      long n = MxcNative.ndarray_size(h);
      if (n > Integer.MAX_VALUE - 8) {
        throw new MxcException(MxcException.INVALID_ARGUMENT,
            "NDArray has " + n + " elements: too many for a Java array");
      }
      Object out;
      switch (have) {
        case FLOAT32: out = new float[(int) n]; break;
        case FLOAT64: out = new double[(int) n]; break;
        case INT32: out = new int[(int) n]; break;
        case INT64: out = new long[(int) n]; break;
        default: out = new byte[(int) n]; break;
      }
      MxcNative.java_copy_to_array(h, out, have.size);
      return out;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Waits until pending writes to this array have finished. */
  public void waitToRead() {
    try {
      MxcNative.ndarray_wait_to_read(handle());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  // ---- views ----------------------------------------------------------

  /** A view with another shape of the same size (shares the storage). */
  public NDArray reshape(long... shape) {
    try {
      return new NDArray(MxcNative.ndarray_reshape(handle(), shape));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** A view of rows [begin, end) along the first dimension. */
  public NDArray slice(long begin, long end) {
    try {
      return new NDArray(MxcNative.ndarray_slice(handle(), begin, end));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** A view of row index (one dimension fewer). */
  public NDArray at(long index) {
    try {
      return new NDArray(MxcNative.ndarray_at(handle(), index));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** A new handle to the same data, cut off from autograd's graph. */
  public NDArray detach() {
    try {
      return new NDArray(MxcNative.ndarray_detach(handle()));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  // ---- arithmetic (new arrays) ----------------------------------------

  /** this + other, elementwise (same shape). */
  public NDArray add(NDArray other) {
    return ADD.call(this, other);
  }

  /** this - other, elementwise. */
  public NDArray sub(NDArray other) {
    return SUB.call(this, other);
  }

  /** this * other, elementwise. */
  public NDArray mul(NDArray other) {
    return MUL.call(this, other);
  }

  /** this / other, elementwise. */
  public NDArray div(NDArray other) {
    return DIV.call(this, other);
  }

  /** The matrix product of this and other (2-D). */
  public NDArray dot(NDArray other) {
    return DOT.call(this, other);
  }

  /** The gradient buffer autograd filled for this variable (see {@link Autograd}). */
  public NDArray grad() {
    return Autograd.grad(this);
  }

  // ---- lifetime -------------------------------------------------------

  /**
   * Frees the native array now; later calls do nothing. Other NDArrays that
   * share its storage stay valid. Must not race with another thread's use
   * of this same object.
   */
  @Override
  public void close() {
    if (handle != 0) {
      handle = 0;
      if (cleanable != null) cleanable.clean(); // borrowed: mxc's
    }
  }

  @Override
  public String toString() {
    if (handle == 0) return "NDArray(closed)";
    return "NDArray(" + dtype().mxcName() + ", " + Arrays.toString(shape()) + ")";
  }
}
