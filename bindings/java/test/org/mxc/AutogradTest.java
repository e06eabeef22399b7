package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Gradients against the analytic formula and finite differences. */
class AutogradTest {
  @Test
  void gradientOfSumOfSquaresIsTwoX() {
    float[] xs = {1, -2, 3.5f, 0};
    try (NDArray x = NDArray.of(xs)) {
      Autograd.markVariables(x);
      NDArray loss;
      try (Autograd.Scope s = Autograd.record()) {
        try (NDArray sq = x.mul(x)) {
          loss = Op.invoke("sum", sq);
        }
      }
      Autograd.backward(loss);
      try (NDArray g = x.grad()) {
        assertArrayEquals(new float[] {2, -4, 7, 0}, g.toFloatArray(), 1e-6f);
      }
      loss.close();
    }
  }

  /** f(W) = sum(relu(X W^T + b)): compare with central finite differences. */
  @Test
  void fullyConnectedGradientMatchesFiniteDifferences() {
    Random r = new Random(3);
    int m = 4, k = 5, n = 3;
    double[] x = new double[m * k], w = new double[n * k], b = new double[n];
    for (int i = 0; i < x.length; i++) x[i] = r.nextGaussian();
    for (int i = 0; i < w.length; i++) w[i] = r.nextGaussian();
    for (int i = 0; i < b.length; i++) b[i] = 0.1 * r.nextGaussian();
    double[] analytic;
    try (NDArray xa = NDArray.of(x, m, k); NDArray wa = NDArray.of(w, n, k);
        NDArray ba = NDArray.of(b)) {
      Autograd.markVariables(wa);
      NDArray loss;
      try (Autograd.Scope s = Autograd.record();
          NDArray fc = Op.invoke("FullyConnected", Map.of("num_hidden", n), xa, wa, ba);
          NDArray act = Op.invoke("relu", fc)) {
        loss = Op.invoke("sum", act);
      }
      Autograd.backward(loss);
      loss.close();
      try (NDArray g = Autograd.grad(wa)) {
        analytic = g.toDoubleArray();
      }
    }
    double h = 1e-6;
    for (int i = 0; i < w.length; i++) {
      double saved = w[i];
      w[i] = saved + h;
      double up = f(x, w, b, m, k, n);
      w[i] = saved - h;
      double down = f(x, w, b, m, k, n);
      w[i] = saved;
      assertEquals((up - down) / (2 * h), analytic[i], 1e-5, "dW[" + i + "]");
    }
  }

  private static double f(double[] x, double[] w, double[] b, int m, int k, int n) {
    double s = 0;
    for (int i = 0; i < m; i++) {
      for (int j = 0; j < n; j++) {
        double v = b[j];
        for (int p = 0; p < k; p++) v += x[i * k + p] * w[j * k + p];
        s += Math.max(v, 0);
      }
    }
    return s;
  }

  @Test
  void scopeRestoresModesAndBackwardWithoutGraphFails() {
    try (NDArray x = NDArray.of(new float[] {1, 2})) {
      try (Autograd.Scope outer = Autograd.record()) {
        try (Autograd.Scope inner = Autograd.record(false)) {
          inner.close(); // idempotent
        }
      }
      // Recording is off again: nothing was recorded for this result.
      try (NDArray y = x.add(x)) {
        assertThrows(MxcException.class, () -> Autograd.backward(y));
      }
      assertThrows(MxcException.class, () -> Autograd.grad(x)); // never marked
    }
  }
}
