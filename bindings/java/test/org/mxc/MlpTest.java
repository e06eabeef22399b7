package org.mxc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;
import org.mxc.examples.MlpFashionMnist;

/** The example trains: 300 batches of the Fashion-MNIST MLP. */
class MlpTest {
  @Test
  void lossFallsAndAccuracyBeatsThreshold() {
    String dir = System.getenv().getOrDefault("MXC_FASHION_MNIST", MlpFashionMnist.DEFAULT_DIR);
    assumeTrue(MlpFashionMnist.available(dir),
        "SKIP: Fashion-MNIST not in " + dir + " (Debian: dataset-fashion-mnist)");
    MlpFashionMnist.Stats st = MlpFashionMnist.train(dir, 1, 300, 50, false);
    System.out.printf("MLP: %d batches, loss %.3f -> %.3f, accuracy %.3f%n", st.batches,
        st.firstLoss, st.lastLoss, st.lastAccuracy);
    assertEquals(300, st.batches);
    // Chance is 10% (loss ln 10 = 2.30); this MLP reaches ~80% within 300
    // batches, so 70% and a loss well below the first batches' mean leave
    // room for seeds and thread counts yet catch a broken update.
    assertTrue(st.lastLoss < 0.75 * st.firstLoss, "loss falls");
    assertTrue(st.lastAccuracy > 0.70, "accuracy " + st.lastAccuracy);
  }
}
