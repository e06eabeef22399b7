package org.mxc.examples;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Map;
import org.mxc.DataIter;
import org.mxc.NDArray;
import org.mxc.Predictor;

/**
 * Runs an Apache MXNet checkpoint with org.mxc.Predictor: the Fashion-MNIST
 * classifier of the shared mxnet-models directory (mentalblood_fashion-mnist,
 * epoch 39) over the 10,000 test images, printing accuracy and images per
 * second. The model was trained on pixels/255 normalised with the data set's
 * mean 0.2860 and deviation 0.3530.
 *
 * <pre>
 *   bazel run -c opt //examples/java:classify_fashion_mnist -- [PREFIX EPOCH [DATA_DIR]]
 *
 * (default: the shared model beside the source tree, epoch 39)
 * </pre>
 */
public final class ClassifyFashionMnist {
  public static final int BATCH = 1000; // divides the 10,000 test images

  private ClassifyFashionMnist() {}

  /** What one pass over the test set gave. */
  public static final class Result {
    public final int images, correct;
    public final double seconds;

    Result(int images, int correct, double seconds) {
      this.images = images;
      this.correct = correct;
      this.seconds = seconds;
    }

    public double accuracy() {
      return (double) correct / images;
    }
  }

  public static boolean available(String prefix, String dir) {
    return Files.isReadable(Paths.get(prefix + "-symbol.json"))
        && Files.isReadable(Paths.get(dir, "t10k-images-idx3-ubyte.gz"))
        && Files.isReadable(Paths.get(dir, "t10k-labels-idx1-ubyte.gz"));
  }

  /** Classifies the test set of dir with the checkpoint prefix/epoch. */
  public static Result classify(String prefix, int epoch, String dir) {
    try (Predictor p = Predictor.fromCheckpoint(prefix, epoch,
            Map.of("data", new long[] {BATCH, 1, 28, 28}));
        DataIter it = DataIter.idx(dir + "/t10k-images-idx3-ubyte.gz",
            dir + "/t10k-labels-idx1-ubyte.gz", BATCH, false, 0)) {
      int images = 0, correct = 0;
      long t0 = System.nanoTime();
      while (it.next()) {
        float[] x, labels;
        try (NDArray d = it.data(); NDArray l = it.label()) {
          x = d.toFloatArray();
          labels = l.toFloatArray();
        }
        for (int i = 0; i < x.length; i++) x[i] = (x[i] - 0.2860f) / 0.3530f;
        float[] probs = p.predict(x);
        for (int r = 0; r < BATCH; r++) {
          correct += argmax(probs, r * 10, 10) == (int) labels[r] ? 1 : 0;
        }
        images += BATCH;
      }
      return new Result(images, correct, (System.nanoTime() - t0) / 1e9);
    }
  }

  private static int argmax(float[] v, int from, int n) {
    int best = 0;
    for (int k = 1; k < n; k++) if (v[from + k] > v[from + best]) best = k;
    return best;
  }

  public static void main(String[] args) {
    if (args.length == 1) {
      System.err.println("usage: ClassifyFashionMnist [PREFIX EPOCH [DATA_DIR]]");
      System.exit(2);
    }
    String ws = System.getenv().getOrDefault("BUILD_WORKSPACE_DIRECTORY", ".");
    String prefix = args.length > 0 ? args[0]
        : ws + "/../shared/mxnet-models/mentalblood_fashion-mnist";
    int epoch = args.length > 1 ? Integer.parseInt(args[1]) : 39;
    String dir = args.length > 2 ? args[2] : MlpFashionMnist.DEFAULT_DIR;
    Result r = classify(prefix, epoch, dir);
    System.out.printf("%d images: accuracy %.4f, %.0f images/s%n", r.images, r.accuracy(),
        r.images / r.seconds);
  }
}
