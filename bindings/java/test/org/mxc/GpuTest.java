package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Arrays and executors on GPUs, copies between devices, and the error for
 * a GPU that cannot be used. The GPU cases are skipped (assumptions) when
 * mxc sees no GPU; Bazel's java_test runs them on the fake plug-in
 * (tests/gpu/fake_plugin.c: two GPUs whose memory the host cannot read,
 * so a path that read device memory on the host would crash here).
 */
class GpuTest {
  private static void needGpus(int n) {
    assumeTrue(Device.gpuCount() >= n, "needs " + n + " GPU(s); mxc sees " + Device.gpuCount());
  }

  @Test
  void deviceValues() {
    assertEquals("gpu(1)", Device.gpu(1).toString());
    assertEquals(Device.gpu(1), Device.gpu(1));
    assertNotEquals(Device.gpu(0), Device.cpu());
    assertEquals(Device.Kind.GPU, Device.gpu(3).kind());
    assertThrows(IllegalArgumentException.class, () -> Device.gpu(-1));
    try (NDArray a = NDArray.zeros(Device.cpu(), DType.FLOAT32, 2)) {
      assertEquals(Device.cpu(), a.device());
    }
  }

  @Test
  void createCopyBetweenGpusAndBack() {
    needGpus(2);
    float[] x = {-2f, -1.5f, 0f, 0.25f, 3f, 8.5f};
    try (NDArray h = NDArray.of(x, 2, 3);
        NDArray g0 = h.copyTo(Device.gpu(0));
        NDArray g1 = g0.copyTo(Device.gpu(1));
        NDArray back = g1.copyTo(Device.cpu())) {
      assertEquals(Device.gpu(0), g0.device());
      assertEquals(Device.gpu(1), g1.device());
      assertEquals(Device.cpu(), back.device());
      assertArrayEquals(new long[] {2, 3}, g1.shape());
      assertArrayEquals(x, back.toFloatArray());
      assertArrayEquals(x, g1.toFloatArray()); // a read copies to the host
    }
  }

  @Test
  void emptyAndZerosOnGpu() {
    needGpus(1);
    try (NDArray z = NDArray.zeros(Device.gpu(0), DType.FLOAT64, 4);
        NDArray e = NDArray.empty(Device.gpu(0), DType.FLOAT64, 4);
        NDArray src = NDArray.of(new double[] {1, 2, 3, 4})) {
      assertEquals(Device.gpu(0), e.device());
      assertArrayEquals(new double[4], z.toDoubleArray());
      src.copyTo(e);
      assertArrayEquals(new double[] {1, 2, 3, 4}, e.toDoubleArray());
    }
  }

  @Test
  void elementwiseOperatorsRunOnTheGpu() {
    needGpus(1);
    try (NDArray a = NDArray.of(new float[] {-1.5f, 0f, 2f, 3.25f}).copyTo(Device.gpu(0));
        NDArray b = NDArray.of(new float[] {0.5f, -4f, 1f, 0.75f}).copyTo(Device.gpu(0));
        NDArray sum = a.add(b);
        NDArray r = Op.invoke("relu", a)) {
      assertEquals(Device.gpu(0), sum.device());
      // Expected values worked out by hand.
      assertArrayEquals(new float[] {-1f, -4f, 3f, 4f}, sum.toFloatArray());
      assertArrayEquals(new float[] {0f, 0f, 2f, 3.25f}, r.toFloatArray());
    }
  }

  @Test
  void executorBoundOnAGpu() {
    needGpus(2);
    float[] x = {-3f, 1f, -0.5f, 2f, 0f, 4f};
    try (Symbol data = Symbol.variable("data");
        Symbol net = Symbol.op("relu", Map.of(), "r", data);
        Executor ex = net.simpleBind(Device.gpu(1), Map.of("data", new long[] {2, 3}), false)) {
      try (NDArray d = ex.arg("data")) {
        assertEquals(Device.gpu(1), d.device());
        assertArrayEquals(new float[6], d.toFloatArray()); // simple_bind's zeros
        d.copyFrom(x);
      }
      ex.forward(false);
      try (NDArray out = ex.output(0)) {
        assertEquals(Device.gpu(1), out.device());
        assertArrayEquals(new float[] {0f, 1f, 0f, 2f, 0f, 4f}, out.toFloatArray());
      }
    }
  }

  @Test
  void unusableGpuThrowsMxcException() {
    int n = Device.gpuCount();
    Device missing = Device.gpu(n + 5);
    MxcException e =
        assertThrows(MxcException.class, () -> NDArray.empty(missing, DType.FLOAT32, 2));
    assertEquals(MxcException.UNSUPPORTED, e.code());
    assertTrue(e.getMessage().length() > 0);
    assertThrows(MxcException.class, missing::check);
    try (NDArray h = NDArray.of(new float[] {1f})) {
      MxcException c = assertThrows(MxcException.class, () -> h.copyTo(missing));
      assertEquals(MxcException.UNSUPPORTED, c.code());
    }
    if (n > 0) assertEquals(Device.gpu(0), Device.gpu(0).check());
  }
}
