package org.mxc;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;
import org.mxc.examples.FitFashionMnist;
import org.mxc.examples.MlpFashionMnist;

/**
 * The fit() example trains both models: 100 batches each are far above
 * chance (10 classes: 0.1); the full runs reach the goals. LeNet (its
 * evaluation of 10000 images takes minutes there) is left out under the
 * sanitizers.
 */
class FitExampleTest {
  @Test
  void mlpAndLenetLearn() {
    String dir = System.getenv().getOrDefault("MXC_FASHION_MNIST", MlpFashionMnist.DEFAULT_DIR);
    assumeTrue(MlpFashionMnist.available(dir),
        "SKIP: Fashion-MNIST not in " + dir + " (Debian: dataset-fashion-mnist)");
    boolean sanitized = !System.getenv().getOrDefault("MXC_SANITIZER", "").isEmpty();
    for (String model : sanitized ? new String[] {"mlp"} : new String[] {"mlp", "lenet"}) {
      double acc = FitFashionMnist.train(model, 1, 100, dir);
      System.out.printf("%s: test accuracy %.3f after 100 batches%n", model, acc);
      assertTrue(acc > 0.7, model + " accuracy " + acc);
    }
  }
}
