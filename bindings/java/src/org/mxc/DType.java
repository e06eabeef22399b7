package org.mxc;

/** Element types of an {@link NDArray}, with mxc's codes and byte sizes. */
public enum DType {
  FLOAT32(0, 4),
  FLOAT64(1, 8),
  FLOAT16(2, 2),
  UINT8(3, 1),
  INT32(4, 4),
  INT8(5, 1),
  INT64(6, 8),
  BOOL(7, 1),
  BFLOAT16(12, 2);

  /** The {@code MXC_DTYPE_*} code. */
  public final int code;
  /** Bytes per element. */
  public final int size;

  DType(int code, int size) {
    this.code = code;
    this.size = size;
  }

  /** The type with this {@code MXC_DTYPE_*} code. */
  public static DType of(int code) {
    for (DType d : values()) if (d.code == code) return d;
    throw new MxcException(MxcException.DTYPE, "unknown dtype code " + code);
  }

  /** The name mxc uses in parameters ({@code "float32"}). */
  public String mxcName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
