package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** Arrays: round trips per dtype, views, direct buffers, lifetime errors. */
class NDArrayTest {
  @Test
  void roundTripsEveryJavaArrayType() {
    float[] f = {1.5f, -2f, 3.25f, 0f, 1e-3f, 7f};
    try (NDArray a = NDArray.of(f, 2, 3)) {
      assertEquals(DType.FLOAT32, a.dtype());
      assertArrayEquals(new long[] {2, 3}, a.shape());
      assertEquals(6, a.size());
      assertEquals(2, a.ndim());
      assertArrayEquals(f, a.toFloatArray());
    }
    double[] d = {Math.PI, -1e300, 0.5};
    try (NDArray a = NDArray.of(d)) {
      assertEquals(DType.FLOAT64, a.dtype());
      assertArrayEquals(new long[] {3}, a.shape());
      assertArrayEquals(d, a.toDoubleArray());
    }
    int[] i = {Integer.MIN_VALUE, -1, 0, Integer.MAX_VALUE};
    try (NDArray a = NDArray.of(i, 2, 2)) {
      assertEquals(DType.INT32, a.dtype());
      assertArrayEquals(i, a.toIntArray());
    }
    long[] l = {Long.MIN_VALUE, 42, Long.MAX_VALUE};
    try (NDArray a = NDArray.of(l, 3, 1)) {
      assertEquals(DType.INT64, a.dtype());
      assertArrayEquals(l, a.toLongArray());
    }
    byte[] b = {0, 1, (byte) 200, (byte) 255};
    try (NDArray a = NDArray.of(b)) {
      assertEquals(DType.UINT8, a.dtype());
      assertArrayEquals(b, a.toByteArray());
    }
  }

  @Test
  void zerosAndCopyFromOverwrite() {
    try (NDArray z = NDArray.zeros(DType.FLOAT64, 2, 2)) {
      assertArrayEquals(new double[4], z.toDoubleArray());
      z.copyFrom(new double[] {1, 2, 3, 4});
      assertArrayEquals(new double[] {1, 2, 3, 4}, z.toDoubleArray());
    }
    try (NDArray s = NDArray.empty(DType.FLOAT32)) { // a scalar
      assertEquals(0, s.ndim());
      assertEquals(1, s.size());
      s.copyFrom(new float[] {9});
      assertArrayEquals(new float[] {9}, s.toFloatArray());
    }
  }

  @Test
  void viewsShareStorageAndOutliveTheirParent() {
    NDArray a = NDArray.of(new float[] {0, 1, 2, 3, 4, 5}, 3, 2);
    NDArray r = a.reshape(2, 3);
    NDArray s = a.slice(1, 3);
    NDArray row = a.at(2);
    a.close();
    assertArrayEquals(new long[] {2, 3}, r.shape());
    assertArrayEquals(new float[] {0, 1, 2, 3, 4, 5}, r.toFloatArray());
    assertArrayEquals(new float[] {2, 3, 4, 5}, s.toFloatArray());
    assertArrayEquals(new float[] {4, 5}, row.toFloatArray());
    row.copyFrom(new float[] {40, 50});
    assertArrayEquals(new float[] {0, 1, 2, 3, 40, 50}, r.toFloatArray());
    r.close();
    s.close();
    row.close();
  }

  @Test
  void directByteBuffersBothWays() {
    ByteBuffer in = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
    in.asFloatBuffer().put(new float[] {1, 2, 3, 4});
    try (NDArray a = NDArray.empty(DType.FLOAT32, 4)) {
      a.copyFrom(in);
      assertArrayEquals(new float[] {1, 2, 3, 4}, a.toFloatArray());
      ByteBuffer out = ByteBuffer.allocateDirect(24).order(ByteOrder.nativeOrder());
      out.position(8); // the window is position..limit
      a.copyTo(out);
      assertEquals(8, out.position());
      float[] back = new float[4];
      out.position(8);
      out.slice().order(ByteOrder.nativeOrder()).asFloatBuffer().get(back);
      assertArrayEquals(new float[] {1, 2, 3, 4}, back);
    }
  }

  @Test
  void wrongSizesAndTypesAreMxcExceptions() {
    try (NDArray a = NDArray.empty(DType.FLOAT32, 2, 2)) {
      MxcException e = assertThrows(MxcException.class, () -> a.copyFrom(new float[3]));
      assertEquals(MxcException.SHAPE, e.code());
      assertEquals("MXC_ERR_SHAPE", e.codeName());
      assertTrue(e.getMessage().contains("16 bytes"), e.getMessage());
      assertThrows(MxcException.class, () -> a.copyFrom(ByteBuffer.allocateDirect(15)));
      assertThrows(MxcException.class, () -> a.copyTo(ByteBuffer.allocateDirect(17)));
      assertEquals(MxcException.INVALID_ARGUMENT,
          assertThrows(MxcException.class, () -> a.copyFrom(ByteBuffer.allocate(16))).code());
      assertEquals(MxcException.DTYPE,
          assertThrows(MxcException.class, () -> a.copyFrom(new int[4])).code());
      assertEquals(MxcException.DTYPE, assertThrows(MxcException.class, a::toDoubleArray).code());
      assertThrows(MxcException.class, () -> a.reshape(3, 2));
      assertThrows(MxcException.class, () -> a.slice(1, 5));
      assertThrows(MxcException.class, () -> a.at(-1));
      assertThrows(MxcException.class, () -> a.copyFrom((float[]) null));
    }
    assertThrows(MxcException.class, () -> NDArray.empty(DType.FLOAT32, 2, -1));
    assertThrows(MxcException.class, () -> NDArray.empty(DType.FLOAT32, 1, 1, 1, 1, 1, 1, 1, 1, 1));
    assertThrows(MxcException.class, () -> NDArray.of(new float[4], 3));
  }

  @Test
  void closeIsIdempotentAndUseAfterCloseThrows() {
    NDArray a = NDArray.of(new float[] {1, 2});
    NDArray b = NDArray.of(new float[] {1, 2});
    assertFalse(a.isClosed());
    a.close();
    a.close();
    assertTrue(a.isClosed());
    assertEquals("NDArray(closed)", a.toString());
    assertEquals(MxcException.INVALID_HANDLE, assertThrows(MxcException.class, a::size).code());
    assertThrows(MxcException.class, a::toFloatArray);
    assertThrows(MxcException.class, () -> a.copyFrom(new float[2]));
    assertThrows(MxcException.class, () -> a.add(b));
    assertThrows(MxcException.class, () -> b.add(a));
    assertThrows(MxcException.class, () -> a.reshape(2));
    b.close();
  }
}
