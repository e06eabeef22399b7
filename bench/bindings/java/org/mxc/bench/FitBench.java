package org.mxc.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import org.mxc.Block;
import org.mxc.DataIter;
import org.mxc.Fit;
import org.mxc.Optimizer;
import org.mxc.Scope;
import org.mxc.nn.Dense;
import org.mxc.nn.Loss;
import org.mxc.nn.Sequential;

/**
 * Seconds per Fashion-MNIST epoch (60000 images) of fit() from Java on the
 * main job's MLP (784-512-256-10, batch 128, SGD momentum 0.9): a fit of
 * WARMUP batches first, then a fit of BATCHES batches timed and scaled,
 * without validation. The network is hybridized, as a user after speed
 * would run it, so that it runs through the executor like the C path it
 * is compared with and the difference is what Java and fit() add; a third
 * argument "imperative" runs it through autograd instead.
 * bench/bindings/fit_bench.sh compares it with the C executor path
 * (bench/train) and Go.
 *
 * <pre>
 *   java -cp mxc.jar:mxc-bench.jar org.mxc.bench.FitBench [BATCHES] [DATA_DIR] [imperative]
 * </pre>
 * prints fit_epoch_s_java=.
 */
public final class FitBench {
  private static final int WARMUP = 5;

  private FitBench() {}

  private static String file(String dir, String name) {
    String p = dir + "/" + name;
    return Files.exists(Path.of(p + ".gz")) ? p + ".gz" : p;
  }

  /** Seconds of one fit of batches batches. */
  private static double timeFit(Block net, Block loss, Optimizer opt, DataIter it, int batches) {
    Fit fit = Fit.create(net, loss, opt,
        new Fit.Options().epochs(1).batchesPerEpoch(batches).progress("0"));
    long t0 = System.nanoTime();
    fit.run(it, null);
    return (System.nanoTime() - t0) * 1e-9;
  }

  /** Arguments: [BATCHES (100)] [DATA_DIR]. */
  @SuppressWarnings("try") // the scope frees what the body makes
  public static void main(String[] args) {
    int batches = args.length > 0 ? Integer.parseInt(args[0]) : 100;
    String dir = args.length > 1 ? args[1] : "/usr/share/datasets/fashion-mnist";
    try (Scope s = Scope.open()) {
      Block net = new Sequential("mlp").add(new Dense(512, "relu", "fc1", null),
          new Dense(256, "relu", "fc2", null), new Dense(10, null, "fc3", null));
      net.initialize("xavier");
      if (args.length < 3 || !args[2].equals("imperative")) {
        net.hybridize(true);
      }
      Block loss = Loss.softmaxCrossEntropy();
      Optimizer opt = Optimizer.sgd(net, 0.1, 0.9);
      DataIter it = DataIter.idx(file(dir, "train-images-idx3-ubyte"),
          file(dir, "train-labels-idx1-ubyte"), 128, true, 1, true, true);
      timeFit(net, loss, opt, it, WARMUP);
      double sec = timeFit(net, loss, opt, it, batches);
      System.out.printf("fit_epoch_s_java=%.4f%n", sec * 60000.0 / (batches * 128.0));
    }
  }
}
