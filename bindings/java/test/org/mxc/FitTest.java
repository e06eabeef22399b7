package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mxc.nn.Dense;
import org.mxc.nn.Loss;
import org.mxc.nn.Sequential;

/**
 * The layer API and fit() from Java on a small synthetic problem: three
 * Gaussian blobs in 4-D (separable; written as CSV so the C library's CSV
 * iterator feeds fit). Checked against independent facts: accuracy on
 * held-out data, bit-equal parameters of a resumed and an uninterrupted
 * run, the imperative forward pass against the hybridized one and against
 * the Predictor loading the export, live-handle counts.
 */
class FitTest {
  @TempDir static Path dir;
  static String train, trainLabels, val, valLabels;

  /** n examples of 3 classes, centers 3 apart on the first 3 axes (CSV; UserBlockTest too). */
  static void blobs(Path data, Path labels, int n, long seed) throws IOException {
    Random r = new Random(seed);
    StringBuilder d = new StringBuilder(), l = new StringBuilder();
    for (int i = 0; i < n; i++) {
      int c = i % 3;
      for (int j = 0; j < 4; j++) {
        d.append(j > 0 ? "," : "").append((j == c ? 3.0 : 0.0) + r.nextGaussian() * 0.7);
      }
      d.append('\n');
      l.append(c).append('\n');
    }
    Files.writeString(data, d);
    Files.writeString(labels, l);
  }

  @BeforeAll
  static void writeData() throws IOException {
    train = dir.resolve("train.csv").toString();
    trainLabels = dir.resolve("train_labels.csv").toString();
    val = dir.resolve("val.csv").toString();
    valLabels = dir.resolve("val_labels.csv").toString();
    blobs(Path.of(train), Path.of(trainLabels), 240, 1);
    blobs(Path.of(val), Path.of(valLabels), 120, 2);
  }

  private static Sequential mlp() {
    // Named layers: a checkpoint finds parameters by name.
    Sequential net = new Sequential("mlp")
        .add(new Dense(16, "relu", "fc1", null), new Dense(3, null, "fc2", null));
    net.initialize("xavier");
    return net;
  }

  /** A network and the fit training it. */
  private record Run(Block net, Fit fit) {}

  /** A fit of a fresh MLP with SGD + momentum and these options. */
  private static Run newRun(Fit.Options o) {
    Sequential net = mlp();
    return new Run(net, Fit.create(net, Loss.softmaxCrossEntropy(),
        Optimizer.sgd(net, 0.1, 0.9), o.progress("0")));
  }

  private static Fit newFit(Fit.Options o) {
    return newRun(o).fit();
  }

  private static DataIter trainIter() {
    return DataIter.csv(train, trainLabels, 16);
  }

  private static DataIter valIter() {
    return DataIter.csv(val, valLabels, 16);
  }

  @Test
  void fitReachesAccuracyAndTellsListeners() {
    try (Scope s = Scope.open()) {
      Mxc.seed(7);
      Fit fit = newFit(new Fit.Options().epochs(4));
      AtomicInteger epochs = new AtomicInteger(), batches = new AtomicInteger();
      List<Double> accs = new ArrayList<>();
      fit.addListener(TrainingListener.onEpochEnd(f -> accs.add(f.valAccuracy())))
          .addListener(TrainingListener.onBatchEnd(f -> batches.incrementAndGet()))
          .addListener((e, f) -> {
            if (e == TrainingListener.Event.EPOCH_END) epochs.incrementAndGet();
          });
      fit.run(trainIter(), valIter());
      assertEquals(4, epochs.get());
      assertEquals(4 * 240 / 16, batches.get());
      assertEquals(4, fit.epoch());
      assertTrue(fit.valAccuracy() >= 0.95, "val accuracy " + fit.valAccuracy());
      assertEquals(fit.valAccuracy(), accs.get(3));
    }
  }

  @Test
  void scopeFreesEveryBlockOptimizerAndFit() throws InterruptedException {
    long before = ScopeTest.settledHandles();
    Block kept;
    try (Scope s = Scope.open()) {
      Fit fit = newFit(new Fit.Options().epochs(1));
      fit.addListener(TrainingListener.onEpochEnd(f -> f.trainLoss()));
      fit.run(trainIter(), null);
      kept = new Dense(2);
      kept.keep();
      assertTrue(s.liveHandles() >= 6, s.dump());
    }
    assertEquals(before + 1, ScopeTest.settledHandles(), Scope.dumpAll());
    kept.close();
    assertEquals(before, ScopeTest.settledHandles(), Scope.dumpAll());
  }

  /** Parameters of net as float arrays, by name. */
  private static Map<String, float[]> values(Block net) {
    Map<String, float[]> m = new java.util.TreeMap<>();
    net.parameters().forEach((k, v) -> m.put(k, v.toFloatArray()));
    return m;
  }

  @Test
  void resumedRunEqualsUninterruptedBitForBit() {
    Map<String, float[]> whole, resumed;
    try (Scope s = Scope.open()) {
      Mxc.seed(11);
      Run a = newRun(new Fit.Options().epochs(4).lrFactor(20, 0.5));
      a.fit().run(trainIter(), null);
      whole = values(a.net());
    }
    String prefix = dir.resolve("ck").toString();
    try (Scope s = Scope.open()) {
      Mxc.seed(11);
      newFit(new Fit.Options().epochs(2).lrFactor(20, 0.5).checkpoint(prefix, 1))
          .run(trainIter(), null);
      Mxc.seed(999); // the checkpoint restores the random stream
      Run b = newRun(new Fit.Options().epochs(4).lrFactor(20, 0.5).resume(prefix + "-0002.fit"));
      b.fit().run(trainIter(), null);
      assertEquals(4, b.fit().epoch());
      resumed = values(b.net());
    }
    assertEquals(whole.keySet(), resumed.keySet());
    whole.forEach((k, v) -> assertArrayEquals(v, resumed.get(k), k));
  }

  /**
   * A "local" store of one worker trains as without a store (mxc.h), so the
   * parameters after the same seeded run are the same bits, whether the
   * store is given by type or as a KVStore closed before the run (the fit
   * holds its own reference). A store that changed the updates (the
   * gradient not summed, the batch size not the global one) would differ.
   */
  @Test
  void localKVStoreTrainsAsWithout() {
    List<Map<String, float[]>> runs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      try (Scope s = Scope.open()) {
        Mxc.seed(5);
        Fit.Options o = new Fit.Options().epochs(2);
        KVStore kv = i == 2 ? KVStore.create("local") : null;
        if (i == 1) o.kvstore("local");
        if (kv != null) o.kvstore(kv);
        Run r = newRun(o);
        if (kv != null) kv.close();
        r.fit().run(trainIter(), null);
        assertEquals(1.0, r.fit().value("num_workers"));
        assertEquals(0.0, r.fit().value("rank"));
        runs.add(values(r.net()));
      }
    }
    for (Map<String, float[]> other : runs.subList(1, 3)) {
      assertEquals(runs.get(0).keySet(), other.keySet());
      runs.get(0).forEach((k, v) -> assertArrayEquals(v, other.get(k), k));
    }
    try (Scope s = Scope.open()) {
      MxcException e = assertThrows(MxcException.class,
          () -> newRun(new Fit.Options().kvstore("no_such_store")));
      assertTrue(e.getMessage().contains("no_such_store"), e.getMessage());
    }
  }

  /**
   * A Fit pushes from C, without any Java lock, so the store's Java updater
   * may be replaced on another thread while it runs (the store drops each
   * replaced one after its last call; under ASan a dropped global
   * reference still called is a use after free, under TSan a race). The
   * fit refuses a store that has an updater when it sets up its keys (the
   * first step), so the replacing starts after the first batch, which waits
   * for the first replacement (every later push then runs some updater).
   * Every updater stores the plain sum (recv copied into local), as a store
   * without one does, so the parameters must be the same bits as a run
   * without a store; and the JNI references must all be dropped at the end.
   */
  @Test
  void replacingTheUpdaterWhileTheFitPushesIsSafe() throws Exception {
    long refs = UserBlockTest.settledCallbacks();
    Map<String, float[]> alone, withStore;
    AtomicInteger calls = new AtomicInteger(), replaced = new AtomicInteger();
    CountDownLatch firstBatch = new CountDownLatch(1), firstUpdater = new CountDownLatch(1);
    AtomicBoolean done = new AtomicBoolean();
    KVStore.Updater copy = (key, recv, local) -> {
      calls.incrementAndGet();
      recv.copyTo(local);
    };
    try (Scope s = Scope.open()) {
      Mxc.seed(5);
      Run r = newRun(new Fit.Options().epochs(2));
      r.fit().run(trainIter(), null);
      alone = values(r.net());
    }
    try (Scope s = Scope.open(); KVStore kv = KVStore.create("local")) {
      Mxc.seed(5);
      Run r = newRun(new Fit.Options().epochs(2).kvstore(kv));
      r.fit().addListener((event, f) -> {
        if (firstBatch.getCount() == 0) return;
        firstBatch.countDown();
        try {
          firstUpdater.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      Thread replacer = new Thread(() -> {
        try {
          firstBatch.await();
          for (int i = 0; !done.get() || i < 200; i++) {
            // Each a new object, so a new global reference each time.
            kv.setUpdater((key, recv, local) -> copy.update(key, recv, local));
            replaced.incrementAndGet();
            firstUpdater.countDown();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } finally {
          firstUpdater.countDown(); // never leave the fit waiting
        }
      });
      replacer.start();
      try {
        r.fit().run(trainIter(), null);
      } finally {
        done.set(true);
        firstBatch.countDown();
        replacer.join();
      }
      withStore = values(r.net());
    }
    assertTrue(calls.get() > 0, "the fit never ran an updater");
    assertTrue(replaced.get() >= 200, "replaced " + replaced.get());
    assertEquals(alone.keySet(), withStore.keySet());
    alone.forEach((k, v) -> assertArrayEquals(v, withStore.get(k), k));
    assertEquals(refs, UserBlockTest.settledCallbacks());
  }

  /** Rows of the validation set as one (n, 4) array. */
  private static NDArray valBatch(int n) {
    try (DataIter it = DataIter.csv(val, valLabels, n)) {
      it.next();
      return it.data();
    }
  }

  @Test
  void hybridizedEqualsImperativeAndExportLoadsInPredictor() {
    try (Scope s = Scope.open()) {
      Run r = newRun(new Fit.Options().epochs(1));
      r.fit().run(trainIter(), null);
      NDArray x = valBatch(8);
      float[] imperative = r.net().forward(x).toFloatArray();
      r.net().hybridize(true);
      float[] hybrid = r.net().forward(x).toFloatArray();
      assertArrayEquals(imperative, hybrid, 1e-5f);
      String prefix = dir.resolve("exported").toString();
      r.net().export(prefix, 0);
      try (Predictor p = Predictor.fromCheckpoint(prefix, 0, Map.of("data", new long[] {8, 4}))) {
        assertArrayEquals(imperative, p.predict(x.toFloatArray()), 1e-5f);
      }
    }
  }

  @Test
  void throwingListenerGivesMxcExceptionAndLeaksNothing() throws InterruptedException {
    long before = ScopeTest.settledHandles();
    IllegalStateException thrown = new IllegalStateException("listener failed on purpose");
    try (Scope s = Scope.open()) {
      Fit fit = newFit(new Fit.Options().epochs(3));
      AtomicInteger calls = new AtomicInteger();
      fit.addListener(TrainingListener.onEpochEnd(f -> {
        calls.incrementAndGet();
        throw thrown;
      }));
      MxcException e = assertThrows(MxcException.class, () -> fit.run(trainIter(), null));
      assertSame(thrown, e.getCause());
      assertEquals(MxcException.INTERNAL, e.code());
      assertEquals(1, calls.get());
      assertEquals(1, fit.epoch()); // the run ended at the first epoch's end
    }
    assertEquals(before, ScopeTest.settledHandles(), Scope.dumpAll());
  }

  @Test
  void fitCannotBeClosedOrRunAgainFromItsListener() {
    try (Scope s = Scope.open()) {
      Fit fit = newFit(new Fit.Options().epochs(2));
      List<Integer> codes = new ArrayList<>();
      fit.addListener(TrainingListener.onEpochEnd(f -> {
        codes.add(assertThrows(MxcException.class, f::close).code());
        codes.add(assertThrows(MxcException.class, () -> f.run(trainIter(), null)).code());
      }));
      fit.run(trainIter(), null);
      assertEquals(List.of(1, 1, 1, 1), codes);
      assertEquals(2, fit.epoch());
      fit.close();
      assertCode(MxcException.INVALID_HANDLE, fit::epoch);
    }
  }

  /** The typed options reach C's fit: schedule, early stopping, CSV and TensorBoard logs. */
  @Test
  void optionsReachTheCFit() throws IOException {
    Path csv = dir.resolve("log.csv"), tb = dir.resolve("tb");
    try (Scope s = Scope.open()) {
      Fit fit = newFit(new Fit.Options().epochs(5).lrCosine(15, 0.001)
          .earlyStopping(1, 1e9, "train_loss").csv(csv.toString()).tensorboard(tb.toString()));
      fit.run(trainIter(), null);
      assertEquals(2, fit.epoch()); // epoch 2 cannot improve by 1e9: stop
      assertEquals(0.001, fit.value("lr"), 1e-12); // past max_update: final_lr
    }
    List<String> rows = Files.readAllLines(csv);
    assertEquals(3, rows.size(), rows.toString());
    assertTrue(rows.get(0).startsWith("epoch,train_loss"), rows.get(0));
    try (var files = Files.list(tb)) {
      assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("events.out.tfevents.")));
    }
  }

  @Test
  void listenerStopsTheRun() {
    try (Scope s = Scope.open()) {
      Fit fit = newFit(new Fit.Options().epochs(5));
      fit.addListener(TrainingListener.onEpochEnd(f -> {
        if (f.epoch() == 2) f.stop();
      }));
      fit.run(trainIter(), valIter());
      assertEquals(2, fit.epoch());
    }
  }

  @Test
  void badArgumentsThrowMxcException() {
    try (Scope s = Scope.open()) {
      assertCode(MxcException.INVALID_ARGUMENT, () -> Block.create("no_such_layer", null, null));
      assertCode(MxcException.INVALID_ARGUMENT, () -> new Dense(4, "no_such_activation"));
      assertCode(MxcException.INVALID_ARGUMENT,
          () -> Block.create("dense", null, Map.of("units", 4, "bogus", 1)));
      Sequential net = mlp();
      assertCode(MxcException.INVALID_ARGUMENT, net::parameters); // not made yet
      assertCode(MxcException.NOT_FOUND, () -> net.parameter("nope"));
      assertThrows(MxcException.class, () -> Optimizer.create(net, "no_such_update", null));
      Optimizer opt = Optimizer.sgd(net, 0.1, 0);
      assertCode(MxcException.INVALID_ARGUMENT,
          () -> Fit.create(net, Loss.l2(), opt, new Fit.Options().set("bogus", 1)));
      assertCode(MxcException.INVALID_ARGUMENT,
          () -> Fit.create(net, Loss.l2(), opt, new Fit.Options().epochs(-1)));
      Fit fit = Fit.create(net, Loss.softmaxCrossEntropy(), opt, null);
      assertCode(MxcException.INVALID_ARGUMENT, () -> fit.addListener(null));
      assertCode(MxcException.NOT_FOUND, () -> fit.value("nope"));
      assertThrows(MxcException.class, () -> fit.loadCheckpoint(dir.resolve("none.fit").toString()));
      assertCode(MxcException.INVALID_ARGUMENT, () -> net.forward(NDArray.zeros(DType.FLOAT32, 2, 4),
          NDArray.zeros(DType.FLOAT32, 2, 4), NDArray.zeros(DType.FLOAT32, 2)));
      Dense d = new Dense(3);
      d.close();
      assertCode(MxcException.INVALID_HANDLE, () -> d.forward(NDArray.zeros(DType.FLOAT32, 2, 4)));
    }
  }

  private static void assertCode(int code, org.junit.jupiter.api.function.Executable call) {
    MxcException e = assertThrows(MxcException.class, call);
    assertEquals(code, e.code(), e.getMessage());
    assertTrue(!e.getMessage().isEmpty());
  }
}
