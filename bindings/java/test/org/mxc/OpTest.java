package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Operators against naive Java loops, and their error paths. */
class OpTest {
  static float[] random(Random r, int n) {
    float[] a = new float[n];
    for (int i = 0; i < n; i++) a[i] = (float) r.nextGaussian();
    return a;
  }

  /** out[m][n] = sum_k a[m][k] * b[k][n] (b transposed when bT: b is n x k). */
  static float[] matmul(float[] a, float[] b, int m, int k, int n, boolean bT) {
    float[] out = new float[m * n];
    for (int i = 0; i < m; i++) {
      for (int j = 0; j < n; j++) {
        double s = 0;
        for (int p = 0; p < k; p++) s += a[i * k + p] * (bT ? b[j * k + p] : b[p * n + j]);
        out[i * n + j] = (float) s;
      }
    }
    return out;
  }

  @Test
  void elementwiseMatchesLoops() {
    Random r = new Random(1);
    float[] x = random(r, 24), y = random(r, 24);
    float[] sum = new float[24], diff = new float[24], prod = new float[24], relu = new float[24];
    for (int i = 0; i < 24; i++) {
      sum[i] = x[i] + y[i];
      diff[i] = x[i] - y[i];
      prod[i] = x[i] * y[i];
      relu[i] = Math.max(x[i], 0f);
    }
    try (NDArray a = NDArray.of(x, 2, 3, 4); NDArray b = NDArray.of(y, 2, 3, 4);
        NDArray s = a.add(b); NDArray d = a.sub(b); NDArray p = a.mul(b);
        NDArray q = Op.get("relu").call(a)) {
      assertArrayEquals(sum, s.toFloatArray(), 1e-6f);
      assertArrayEquals(diff, d.toFloatArray(), 1e-6f);
      assertArrayEquals(prod, p.toFloatArray(), 1e-6f);
      assertArrayEquals(relu, q.toFloatArray(), 0f);
      assertArrayEquals(new long[] {2, 3, 4}, s.shape());
    }
  }

  @Test
  void reductionsWithParameters() {
    float[] x = {1, 2, 3, 4, 5, 6};
    try (NDArray a = NDArray.of(x, 2, 3);
        NDArray all = Op.invoke("sum", a);
        NDArray rows = Op.invoke("sum", Map.of("axis", 1), a);
        NDArray cols = Op.invoke("sum", Map.of("axis", new int[] {0}, "keepdims", true), a)) {
      assertArrayEquals(new float[] {21}, all.toFloatArray());
      assertArrayEquals(new float[] {6, 15}, rows.toFloatArray());
      assertArrayEquals(new long[] {1, 3}, cols.shape());
      assertArrayEquals(new float[] {5, 7, 9}, cols.toFloatArray());
    }
  }

  @Test
  void dotAndFullyConnectedMatchNaiveMatmul() {
    Random r = new Random(2);
    int m = 5, k = 7, n = 3;
    float[] x = random(r, m * k), w = random(r, k * n), wt = random(r, n * k), bias = random(r, n);
    float[] fc = matmul(x, wt, m, k, n, true);
    for (int i = 0; i < m; i++) for (int j = 0; j < n; j++) fc[i * n + j] += bias[j];
    try (NDArray a = NDArray.of(x, m, k); NDArray b = NDArray.of(w, k, n);
        NDArray c = a.dot(b); NDArray weight = NDArray.of(wt, n, k);
        NDArray bb = NDArray.of(bias);
        NDArray f = Op.invoke("FullyConnected", Map.of("num_hidden", n), a, weight, bb)) {
      assertArrayEquals(matmul(x, w, m, k, n, false), c.toFloatArray(), 1e-4f);
      assertArrayEquals(fc, f.toFloatArray(), 1e-4f);
    }
  }

  @Test
  void multipleOutputsAndWritingIntoAnArray() {
    try (NDArray a = NDArray.of(new float[] {1, 2, 3, 4, 5, 6}, 3, 2)) {
      Op split = Op.get("split");
      Map<String, ?> p = Map.of("num_outputs", 3, "axis", 0);
      assertEquals(3, split.numOutputs(p));
      NDArray[] parts = split.callMulti(p, a);
      assertEquals(3, parts.length);
      assertArrayEquals(new float[] {5, 6}, parts[2].toFloatArray());
      for (NDArray x : parts) x.close();
      try (NDArray out = NDArray.zeros(DType.FLOAT32, 3, 2)) {
        Op.get("add").callInto(out, null, a, a);
        assertArrayEquals(new float[] {2, 4, 6, 8, 10, 12}, out.toFloatArray());
      }
    }
  }

  @Test
  void opsAreCachedAndListed() {
    assertSame(Op.get("FullyConnected"), Op.get("FullyConnected"));
    assertEquals("add", Op.get("elemwise_add").name()); // an alias
    assertTrue(Op.names().contains("FullyConnected"));
    assertTrue(Op.names().size() > 100);
  }

  @Test
  void errorsCarryCodeAndMessage() {
    MxcException e = assertThrows(MxcException.class, () -> Op.get("no_such_op"));
    assertEquals(MxcException.NOT_FOUND, e.code());
    assertTrue(e.getMessage().contains("no_such_op"), e.getMessage());
    try (NDArray a = NDArray.of(new float[] {1, 2, 3, 4}, 2, 2);
        NDArray b = NDArray.of(new float[] {1, 2, 3}, 3)) {
      e = assertThrows(MxcException.class, () -> Op.invoke("sum", Map.of("axis", "x"), a));
      assertEquals(MxcException.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("axis"), e.getMessage());
      e = assertThrows(MxcException.class, () -> Op.invoke("sum", Map.of("no_such", 1), a));
      assertTrue(e.getMessage().contains("no_such"), e.getMessage());
      e = assertThrows(MxcException.class, () -> a.add(b));
      assertEquals(MxcException.SHAPE, e.code());
      assertThrows(MxcException.class, () -> Op.invoke("add", a)); // arity
      assertThrows(MxcException.class, () -> Op.invoke("add", a, null));
      assertThrows(MxcException.class, () -> Op.get("FullyConnected").call(a, a)); // num_hidden
      assertThrows(MxcException.class, () -> Op.get("relu").call(a, a, a));
      try (NDArray out = NDArray.zeros(DType.FLOAT32, 3)) {
        assertThrows(MxcException.class, () -> Op.get("add").callInto(out, null, a, a));
      }
    }
  }
}
