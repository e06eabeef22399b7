package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.mxc.nn.GRU;
import org.mxc.nn.LSTM;

/**
 * LSTM and GRU against a case computed by hand: one feature, one unit, every
 * weight 1 and every bias 0 (the default bias initializer), so each gate's
 * pre-activation is x_t + h_{t-1}.
 */
class RnnLayerTest {
  private static double sigm(double v) {
    return 1 / (1 + Math.exp(-v));
  }

  private static float[] byHand(boolean lstm, double[] xs) {
    float[] out = new float[xs.length];
    double h = 0, c = 0;
    for (int t = 0; t < xs.length; t++) {
      double p = xs[t] + h;
      if (lstm) {
        c = sigm(p) * c + sigm(p) * Math.tanh(p);
        h = sigm(p) * Math.tanh(c);
      } else {
        double n = Math.tanh(xs[t] + sigm(p) * h);
        h = (1 - sigm(p)) * n + sigm(p) * h;
      }
      out[t] = (float) h;
    }
    return out;
  }

  private static void check(boolean lstm) {
    try (Scope s = Scope.open()) {
      Block b = lstm ? new LSTM(1, 1, "TNC", "r", null) : new GRU(1, 1, "TNC", "r", null);
      b.initialize("ones");
      // Layout TNC, one sequence of four steps.
      double[] xs = {0.5, -1, 2, 0.25};
      NDArray y = b.forward(NDArray.of(new float[] {0.5f, -1f, 2f, 0.25f}, 4, 1, 1));
      assertArrayEquals(new long[] {4, 1, 1}, y.shape());
      assertArrayEquals(byHand(lstm, xs), y.toFloatArray(), 1e-5f);
      assertEquals(List.of("r_l0_i2h_weight", "r_l0_h2h_weight", "r_l0_i2h_bias", "r_l0_h2h_bias"),
          b.parameterNames());
    }
  }

  @Test
  void lstmMatchesHandComputedSteps() {
    check(true);
  }

  @Test
  void gruMatchesHandComputedSteps() {
    check(false);
  }

  @Test
  void bidirectionalShapeAndBadArguments() {
    try (Scope s = Scope.open()) {
      GRU g = new GRU(3, 2, "NTC", null, Map.of("bidirectional", true));
      g.initialize("xavier");
      assertArrayEquals(new long[] {2, 5, 6},
          g.forward(NDArray.zeros(DType.FLOAT32, 2, 5, 4)).shape());
      MxcException e = assertThrows(MxcException.class, () -> new LSTM(0));
      assertEquals(MxcException.INVALID_ARGUMENT, e.code(), e.getMessage());
      MxcException r = assertThrows(MxcException.class,
          () -> g.forward(NDArray.zeros(DType.FLOAT32, 2, 4)));
      assertEquals(MxcException.SHAPE, r.code(), r.getMessage());
    }
  }
}
