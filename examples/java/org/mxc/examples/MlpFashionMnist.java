package org.mxc.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.mxc.DataIter;
import org.mxc.Executor;
import org.mxc.Metric;
import org.mxc.Mxc;
import org.mxc.NDArray;
import org.mxc.Op;
import org.mxc.Symbol;

/**
 * Trains a 784-128-10 MLP (ReLU, softmax) on Fashion-MNIST with plain SGD,
 * batch 128, through org.mxc: a Symbol bound into an Executor, data from
 * a DataIter over the IDX files, parameters updated by the sgd_update
 * operator in place. Prints per-epoch training loss/accuracy and test
 * accuracy.
 *
 * <pre>
 *   bazel run -c opt //examples/java:mlp_fashion_mnist -- [EPOCHS] [DATA_DIR]
 * </pre>
 *
 * DATA_DIR defaults to /usr/share/datasets/fashion-mnist (Debian package
 * dataset-fashion-mnist).
 */
public final class MlpFashionMnist {
  /** Where Debian's dataset-fashion-mnist puts the IDX files. */
  public static final String DEFAULT_DIR = "/usr/share/datasets/fashion-mnist";

  static final int BATCH = 128;
  static final List<String> PARAMS = List.of("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias");

  /** What a training run measured. */
  public static final class Stats {
    /** Mean cross-entropy of the first and of the last window of batches. */
    public double firstLoss, lastLoss;
    /** Training accuracy over the last window of batches. */
    public double lastAccuracy;
    /** Test-set accuracy after training (NaN when not evaluated). */
    public double testAccuracy = Double.NaN;
    /** Batches trained. */
    public long batches;
  }

  private MlpFashionMnist() {}

  /** Whether dir holds the four Fashion-MNIST files. */
  public static boolean available(String dir) {
    for (String f : new String[] {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
        "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}) {
      if (!Files.isReadable(Paths.get(dir, f))) return false;
    }
    return true;
  }

  /** The network: data -> FC(128) -> ReLU -> FC(10) -> SoftmaxOutput. */
  static Symbol network() {
    try (Symbol data = Symbol.variable("data");
        Symbol label = Symbol.variable("softmax_label");
        Symbol fc1 = Symbol.op("FullyConnected", Map.of("num_hidden", 128), "fc1", data);
        Symbol act = Symbol.op("Activation", Map.of("act_type", "relu"), "relu1", fc1);
        Symbol fc2 = Symbol.op("FullyConnected", Map.of("num_hidden", 10), "fc2", act)) {
      return Symbol.op("SoftmaxOutput", null, "softmax", fc2, label);
    }
  }

  /**
   * Trains for the given epochs, stopping early after maxBatches batches
   * (<= 0: no limit); window is the number of batches averaged for the
   * first/last loss. Prints progress when verbose.
   */
  public static Stats train(String dir, int epochs, long maxBatches, int window, boolean verbose) {
    Mxc.seed(42);
    Stats st = new Stats();
    Map<String, long[]> shapes = new LinkedHashMap<>();
    shapes.put("data", new long[] {BATCH, 784});
    shapes.put("softmax_label", new long[] {BATCH});
    Map<String, Object> sgd = Map.of("lr", 0.1, "wd", 1e-4, "rescale_grad", 1.0 / BATCH);
    Op update = Op.get("sgd_update");
    Path d = Paths.get(dir);
    try (Symbol net = network();
        Executor ex = net.simpleBind(shapes, true);
        DataIter train = DataIter.idx(d.resolve("train-images-idx3-ubyte.gz").toString(),
            d.resolve("train-labels-idx1-ubyte.gz").toString(), BATCH, true, 7);
        NDArray x = ex.arg("data");
        NDArray y = ex.arg("softmax_label");
        NDArray out = ex.output(0)) {
      NDArray[] w = new NDArray[PARAMS.size()];
      NDArray[] g = new NDArray[PARAMS.size()];
      for (int i = 0; i < w.length; i++) {
        w[i] = ex.arg(PARAMS.get(i));
        g[i] = ex.grad(PARAMS.get(i));
        if (PARAMS.get(i).endsWith("weight")) {
          w[i].initialize("xavier", Map.of("magnitude", 2));
        } else {
          w[i].initialize("zeros", null);
        }
      }
      double[] losses = new double[Math.max(1, window)];
      long[] correct = new long[losses.length];
      double firstSum = 0;
      long n = 0;
      stop:
      for (int epoch = 1; epoch <= epochs; epoch++) {
        double epochLoss = 0;
        long epochCorrect = 0, epochBatches = 0;
        train.reset();
        while (train.next()) {
          try (NDArray bx = train.data(); NDArray by = train.label()) {
            bx.copyTo(x);
            by.copyTo(y);
          }
          ex.forward(true);
          ex.backward();
          for (int i = 0; i < w.length; i++) update.callInto(w[i], sgd, w[i], g[i]);
          double loss = crossEntropy(out.toFloatArray(), y.toFloatArray());
          long ok = Metric.correct(out, y);
          int slot = (int) (n % losses.length);
          if (n < losses.length) firstSum += loss;
          losses[slot] = loss;
          correct[slot] = ok;
          n++;
          epochLoss += loss;
          epochCorrect += ok;
          epochBatches++;
          if (maxBatches > 0 && n >= maxBatches) break stop;
        }
        if (verbose) {
          System.out.printf("epoch %d: train loss %.4f, train accuracy %.4f, test accuracy %.4f%n",
              epoch, epochLoss / epochBatches, (double) epochCorrect / (epochBatches * BATCH),
              evaluate(dir, net, ex));
        }
      }
      Mxc.waitAll();
      int k = (int) Math.min(n, losses.length);
      double sum = 0;
      long ok = 0;
      for (int i = 0; i < k; i++) {
        sum += losses[i];
        ok += correct[i];
      }
      st.batches = n;
      st.lastLoss = sum / k;
      st.lastAccuracy = (double) ok / ((long) k * BATCH);
      st.firstLoss = firstSum / k;
      for (NDArray a : w) a.close();
      for (NDArray a : g) a.close();
    }
    return st;
  }

  /** Accuracy on the 10000 test images, with ex's current weights. */
  public static double evaluate(String dir, Symbol net, Executor ex) {
    Path d = Paths.get(dir);
    long ok = 0, seen = 0;
    try (DataIter test = DataIter.idx(d.resolve("t10k-images-idx3-ubyte.gz").toString(),
            d.resolve("t10k-labels-idx1-ubyte.gz").toString(), BATCH, false, 0);
        NDArray x = ex.arg("data");
        NDArray y = ex.arg("softmax_label");
        NDArray out = ex.output(0)) {
      while (test.next()) {
        try (NDArray bx = test.data(); NDArray by = test.label()) {
          bx.copyTo(x);
          by.copyTo(y);
        }
        ex.forward(false);
        ok += Metric.correct(out, y);
        seen += BATCH; // the padded last batch counts its repeats: a close estimate
      }
    }
    return (double) ok / seen;
  }

  /** Mean -log p[label] over the rows of a (batch x 10) probability matrix. */
  static double crossEntropy(float[] probs, float[] labels) {
    int classes = probs.length / labels.length;
    double s = 0;
    for (int r = 0; r < labels.length; r++) {
      s -= Math.log(Math.max(probs[r * classes + (int) labels[r]], 1e-12));
    }
    return s / labels.length;
  }

  /** Usage: MlpFashionMnist [EPOCHS (default 5)] [DATA_DIR]. */
  public static void main(String[] args) {
    int epochs = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    String dir = args.length > 1 ? args[1] : DEFAULT_DIR;
    if (!available(dir)) {
      System.err.println("Fashion-MNIST not found in " + dir
          + " (Debian: apt-get install dataset-fashion-mnist)");
      System.exit(2);
    }
    Stats st = train(dir, epochs, 0, 50, true);
    System.out.printf("done: %d batches, last-50 loss %.4f, accuracy %.4f%n", st.batches,
        st.lastLoss, st.lastAccuracy);
  }
}
