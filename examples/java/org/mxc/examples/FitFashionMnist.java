package org.mxc.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import org.mxc.Block;
import org.mxc.DataIter;
import org.mxc.Fit;
import org.mxc.Mxc;
import org.mxc.Optimizer;
import org.mxc.Scope;
import org.mxc.TrainingListener;
import org.mxc.nn.Activation;
import org.mxc.nn.Conv2D;
import org.mxc.nn.Dense;
import org.mxc.nn.Flatten;
import org.mxc.nn.Loss;
import org.mxc.nn.Pool2D;
import org.mxc.nn.Sequential;

/**
 * The main job's MLP (784-512-256-10, 10 epochs, goal >= 87.5%) and LeNet
 * (2 epochs, goal >= 88%) on Fashion-MNIST with the layer API and fit(),
 * as examples/fit_fashion_mnist.c: SGD lr 0.1 / 0.05 with momentum 0.9, a
 * tenth of the rate for the last epochs, batch 128. fit() draws its
 * progress line on a terminal; one line per epoch goes to stdout.
 *
 * <pre>
 *   bazel run -c opt //examples/java:fit_fashion_mnist -- [mlp|lenet] [EPOCHS] [BATCHES] [DATA_DIR]
 * </pre>
 * BATCHES: at most this many batches per epoch (0: all).
 */
public final class FitFashionMnist {
  private FitFashionMnist() {}

  /** The MLP: 784-512-256-10 with ReLU. */
  public static Sequential mlp() {
    return new Sequential("mlp").add(new Dense(512, "relu", "fc1", null),
        new Dense(256, "relu", "fc2", null), new Dense(10, null, "fc3", null));
  }

  /** LeNet: two tanh convolutions with max pooling, then 500 tanh units. */
  public static Sequential lenet() {
    return new Sequential("lenet").add(new Conv2D(20, 5), new Activation("tanh"), Pool2D.max(2),
        new Conv2D(50, 5), new Activation("tanh"), Pool2D.max(2), new Flatten(),
        new Dense(500, "tanh"), new Dense(10));
  }

  /** An IDX iterator over part ("train" or "t10k") of dir, gzip or not. */
  static DataIter idx(String dir, String part, boolean train, boolean flat) {
    String img = dir + "/" + part + "-images-idx3-ubyte", lab = dir + "/" + part + "-labels-idx1-ubyte";
    if (Files.exists(Path.of(img + ".gz"))) img += ".gz";
    if (Files.exists(Path.of(lab + ".gz"))) lab += ".gz";
    return DataIter.idx(img, lab, 128, train, 1, flat, train);
  }

  /** Trains model for epochs (at most batches per epoch); returns the test accuracy. */
  @SuppressWarnings("try") // the scope frees what the body makes
  public static double train(String model, int epochs, int batches, String dir) {
    boolean isMlp = model.equals("mlp");
    int goalEpochs = isMlp ? 10 : 2;
    try (Scope s = Scope.open()) {
      Mxc.seed(1);
      Block net = (isMlp ? mlp() : lenet()).initialize("xavier");
      Fit fit = Fit.create(net, Loss.softmaxCrossEntropy(),
          Optimizer.sgd(net, isMlp ? 0.1 : 0.05, 0.9),
          new Fit.Options().epochs(epochs).batchesPerEpoch(batches)
              .lrMultiFactor(new int[] {(goalEpochs - (isMlp ? 2 : 1)) * 468}, 0.1));
      fit.addListener(TrainingListener.onEpochEnd(f -> System.out.printf(
          "epoch=%d train_loss=%.4f train_accuracy=%.4f test_accuracy=%.4f%n",
          f.epoch(), f.trainLoss(), f.trainAccuracy(), f.valAccuracy())));
      fit.run(idx(dir, "train", true, isMlp), idx(dir, "t10k", false, isMlp));
      return fit.valAccuracy();
    }
  }

  /** Arguments: [mlp|lenet] [EPOCHS] [BATCHES] [DATA_DIR]. */
  public static void main(String[] args) {
    String model = args.length > 0 ? args[0] : "mlp";
    if (!model.equals("mlp") && !model.equals("lenet")) {
      System.err.println("usage: FitFashionMnist [mlp|lenet] [EPOCHS] [BATCHES] [DATA_DIR]");
      System.exit(2);
    }
    int goalEpochs = model.equals("mlp") ? 10 : 2;
    int epochs = args.length > 1 ? Integer.parseInt(args[1]) : goalEpochs;
    int batches = args.length > 2 ? Integer.parseInt(args[2]) : 0;
    String dir = args.length > 3 ? args[3] : MlpFashionMnist.DEFAULT_DIR;
    double acc = train(model, epochs, batches, dir);
    double goal = model.equals("mlp") ? 0.875 : 0.88;
    System.out.printf("final_test_accuracy=%.4f goal=%.3f goal_met=%s%n", acc, goal,
        acc >= goal && epochs >= goalEpochs ? "yes" : "no");
  }
}
