package org.mxc;

import org.mxc.swig.MxcNative;

/**
 * A device of mxc: the CPU or GPU number {@code id}. Immutable value
 * (equals/hashCode by kind and id); thread-safe. Making one checks
 * nothing: arrays and executors created on a GPU that cannot be used (no
 * CUDA plug-in, no driver, id out of range, ...) throw {@link
 * MxcException} with code {@link MxcException#UNSUPPORTED} and mxc's
 * reason; {@link #check()} throws the same up front.
 */
public final class Device {
  /** The kind of device (mxc's {@code MXC_DEVICE_*} codes). */
  public enum Kind {
    CPU(1),
    GPU(2);

    final int code;

    Kind(int code) {
      this.code = code;
    }

    static Kind of(int code) {
      for (Kind k : values()) if (k.code == code) return k;
      throw new MxcException(MxcException.INTERNAL, "unknown device type " + code);
    }
  }

  private static final Device CPU0 = new Device(Kind.CPU, 0);

  private final Kind kind;
  private final int id;

  private Device(Kind kind, int id) {
    if (id < 0) throw new IllegalArgumentException("device id " + id + ", expected >= 0");
    this.kind = kind;
    this.id = id;
  }

  /** The CPU. */
  public static Device cpu() {
    return CPU0;
  }

  /** GPU number id (>= 0; not checked until used). */
  public static Device gpu(int id) {
    return new Device(Kind.GPU, id);
  }

  static Device of(int typeCode, int id) {
    return typeCode == Kind.CPU.code && id == 0 ? CPU0 : new Device(Kind.of(typeCode), id);
  }

  /**
   * How many GPUs this process can use: 0 without the CUDA plug-in, a
   * driver or a GPU (not an error; {@code gpu(0).check()} says why). The
   * first call loads the plug-in.
   */
  public static int gpuCount() {
    return MxcNative.device_count(Kind.GPU.code);
  }

  /** Returns this device when mxc can use it, else throws MxcException. */
  public Device check() {
    MxcNative.device_check(kind.code, id);
    return this;
  }

  public Kind kind() {
    return kind;
  }

  public int id() {
    return id;
  }

  int typeCode() {
    return kind.code;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Device && ((Device) o).kind == kind && ((Device) o).id == id;
  }

  @Override
  public int hashCode() {
    return kind.code * 31 + id;
  }

  /** {@code "cpu(0)"}, {@code "gpu(1)"}. */
  @Override
  public String toString() {
    return kind.name().toLowerCase(java.util.Locale.ROOT) + "(" + id + ")";
  }
}
