package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Symbols bound into executors against a naive computation. */
class SymbolExecutorTest {
  static Symbol fc(int hidden) {
    try (Symbol data = Symbol.variable("data")) {
      return Symbol.op("FullyConnected", Map.of("num_hidden", hidden), "fc", data);
    }
  }

  @Test
  void forwardAndBackwardOfFullyConnected() {
    int m = 4, k = 5, n = 3;
    Random r = new Random(4);
    float[] x = OpTest.random(r, m * k), w = OpTest.random(r, n * k), b = OpTest.random(r, n);
    float[] want = OpTest.matmul(x, w, m, k, n, true);
    for (int i = 0; i < m; i++) for (int j = 0; j < n; j++) want[i * n + j] += b[j];
    Map<String, long[]> shapes = new LinkedHashMap<>();
    shapes.put("data", new long[] {m, k});
    try (Symbol net = fc(n); Executor ex = net.simpleBind(shapes, true)) {
      assertEquals(List.of("data", "fc_weight", "fc_bias"), net.listArguments());
      assertEquals(1, net.listOutputs().size());
      try (NDArray xd = ex.arg("data"); NDArray wd = ex.arg("fc_weight");
          NDArray bd = ex.arg("fc_bias")) {
        assertArrayEquals(new long[] {n, k}, wd.shape()); // inferred
        xd.copyFrom(x);
        wd.copyFrom(w);
        bd.copyFrom(b);
      }
      ex.forward(true);
      assertEquals(1, ex.numOutputs());
      try (NDArray out = ex.output(0)) {
        assertArrayEquals(want, out.toFloatArray(), 1e-4f);
      }
      ex.backward(); // head gradient: ones
      float[] dw = new float[n * k];
      for (int j = 0; j < n; j++) {
        for (int p = 0; p < k; p++) {
          for (int i = 0; i < m; i++) dw[j * k + p] += x[i * k + p];
        }
      }
      try (NDArray g = ex.grad("fc_weight"); NDArray gb = ex.grad("fc_bias")) {
        assertArrayEquals(dw, g.toFloatArray(), 1e-4f);
        assertArrayEquals(new float[] {m, m, m}, gb.toFloatArray(), 0f);
      }
    }
  }

  /** BatchNorm's moving mean after one training forward, vs the formula. */
  @Test
  void auxiliaryStatesOfBatchNorm() {
    float[] x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}; // (4, 3): 3 channels
    try (Symbol data = Symbol.variable("data");
        Symbol bn = Symbol.op("BatchNorm", Map.of("momentum", 0.25), "bn", data);
        Executor ex = bn.simpleBind(Map.of("data", new long[] {4, 3}), false);
        NDArray in = ex.arg("data");
        NDArray gamma = ex.arg("bn_gamma")) {
      in.copyFrom(x);
      gamma.copyFrom(new float[] {1, 1, 1});
      ex.forward(true);
      float[] want = new float[3];
      for (int c = 0; c < 3; c++) {
        float mean = 0;
        for (int i = 0; i < 4; i++) mean += x[i * 3 + c] / 4;
        want[c] = 0 * 0.25f + mean * (1 - 0.25f); // moving starts at 0
      }
      try (NDArray moving = ex.aux("bn_moving_mean")) {
        assertArrayEquals(want, moving.toFloatArray(), 1e-5f);
      }
      MxcException e = assertThrows(MxcException.class, () -> ex.aux("bn_no_such_state"));
      assertEquals(MxcException.NOT_FOUND, e.code());
    }
  }

  @Test
  void jsonRoundTripAndGroups() {
    try (Symbol net = fc(2); Symbol back = Symbol.fromJson(net.toJson());
        Symbol other = fc(3); Symbol g = Symbol.group(net, other)) {
      assertEquals(net.listArguments(), back.listArguments());
      assertEquals(2, g.listOutputs().size());
    }
  }

  @Test
  void errorsDoNotCrash() {
    assertThrows(MxcException.class, () -> Symbol.fromJson("{not json"));
    assertThrows(MxcException.class, () -> Symbol.op("no_such_op", null, null));
    Map<String, long[]> bad = new LinkedHashMap<>();
    bad.put("data", new long[] {4, 5});
    bad.put("fc_weight", new long[] {3, 6}); // does not fit data
    try (Symbol net = fc(3)) {
      assertThrows(MxcException.class, () -> net.simpleBind(bad, true));
      try (Executor ex = net.simpleBind(Map.of("data", new long[] {4, 5}), false)) {
        assertEquals(MxcException.NOT_FOUND,
            assertThrows(MxcException.class, () -> ex.arg("nope")).code());
        ex.close();
        ex.close();
        assertThrows(MxcException.class, () -> ex.forward(false));
      }
      net.close();
      assertEquals(MxcException.INVALID_HANDLE,
          assertThrows(MxcException.class, net::listArguments).code());
    }
  }

  @Test
  void arraysOutliveTheirExecutorAndSymbols() {
    Symbol net = fc(2);
    Executor ex = net.simpleBind(Map.of("data", new long[] {3, 4}), true);
    net.close(); // the executor keeps its graph
    try (NDArray w = ex.arg("fc_weight"); NDArray x = ex.arg("data");
        NDArray b = ex.arg("fc_bias")) {
      w.initialize("ones", null);
      x.initialize("ones", null);
      b.initialize("zeros", null);
    }
    ex.forward(false);
    NDArray out = ex.output(0);
    ex.close();
    assertArrayEquals(new float[] {4, 4, 4, 4, 4, 4}, out.toFloatArray(), 0f);
    out.close();
  }
}
