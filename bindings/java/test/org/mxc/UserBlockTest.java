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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mxc.nn.Activation;
import org.mxc.nn.Dense;
import org.mxc.nn.Loss;
import org.mxc.nn.Sequential;

/**
 * UserBlock: a forward pass written in Java over child blocks (a residual
 * MLP), checked against a hand computation from the children's parameters
 * (loops here); fit() on three separable blobs; hybridized (traced once)
 * against imperative, and the export against the Predictor; exceptions
 * from the function as MxcException with the exception as cause; forward
 * passes from several Java threads; the blocks and the callbacks' global
 * references freed by close(), a Scope and the Cleaner.
 */
class UserBlockTest {
  @TempDir static Path dir;

  /** y = fc2(relu(fc1(x))) + x: units = the input width. */
  private static UserBlock residual(String name, int units, AtomicInteger calls) {
    Dense fc1 = new Dense(8, "relu", name + "_fc1", null);
    Dense fc2 = new Dense(units, null, name + "_fc2", null);
    return new UserBlock(name, x -> {
      if (calls != null) calls.incrementAndGet();
      return fc2.forward(fc1.forward(x[0])).add(x[0]);
    }, fc1, fc2);
  }

  private static float[] randoms(Random r, int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) v[i] = r.nextFloat() * 2 - 1;
    return v;
  }

  /** Fills every parameter of b with random values (biases too: not zeros). */
  private static void randomize(Block b, long seed) {
    Random r = new Random(seed);
    for (NDArray p : b.parameters().values()) p.copyFrom(randoms(r, (int) p.size()));
  }

  /** fc2(relu(fc1(x))) + x by loops, from the parameters of residual(name, d, _). */
  private static float[] byHand(Block b, String name, float[] x, int rows, int d) {
    float[] w1 = b.parameter(name + "_fc1_weight").toFloatArray();
    float[] b1 = b.parameter(name + "_fc1_bias").toFloatArray();
    float[] w2 = b.parameter(name + "_fc2_weight").toFloatArray();
    float[] b2 = b.parameter(name + "_fc2_bias").toFloatArray();
    float[] y = new float[rows * d];
    for (int n = 0; n < rows; n++) {
      float[] h = new float[8];
      for (int j = 0; j < 8; j++) {
        double s = b1[j];
        for (int k = 0; k < d; k++) s += (double) w1[j * d + k] * x[n * d + k];
        h[j] = (float) Math.max(s, 0);
      }
      for (int i = 0; i < d; i++) {
        double s = b2[i];
        for (int j = 0; j < 8; j++) s += (double) w2[i * 8 + j] * h[j];
        y[n * d + i] = (float) (s + x[n * d + i]);
      }
    }
    return y;
  }

  @Test
  void forwardEqualsHandComputationFromChildrenParameters() {
    try (Scope s = Scope.open()) {
      UserBlock b = residual("res", 5, null);
      assertEquals("res", b.name());
      assertEquals(2, b.numChildren());
      assertEquals(List.of("res_fc1_weight", "res_fc1_bias", "res_fc2_weight", "res_fc2_bias"),
          b.parameterNames());
      b.initialize("xavier");
      float[] x = randoms(new Random(3), 4 * 5);
      NDArray in = NDArray.of(x, 4, 5);
      b.forward(in); // makes the parameters (deferred initialization)
      randomize(b, 4);
      float[] got = b.forward(in).toFloatArray();
      assertArrayEquals(byHand(b, "res", x, 4, 5), got, 1e-5f);
      assertEquals(20, in.size()); // the input stays the caller's
    }
  }

  /** A classifier: a residual user block inside a user block, then Dense(3). */
  private static UserBlock classifier(String name) {
    Dense in = new Dense(4, "relu", name + "_in", null);
    UserBlock res = residual(name + "_res", 4, null);
    Dense out = new Dense(3, null, name + "_out", null);
    return new UserBlock(name, x -> out.forward(res.forward(in.forward(x[0]))), in, res, out);
  }

  @Test
  void fitTrainsAUserBlockImperativeAndHybridized() throws IOException {
    Path d = dir.resolve("blobs.csv"), l = dir.resolve("blobs_labels.csv");
    Path vd = dir.resolve("val.csv"), vl = dir.resolve("val_labels.csv");
    FitTest.blobs(d, l, 240, 1);
    FitTest.blobs(vd, vl, 120, 2);
    for (boolean hybrid : new boolean[] {false, true}) {
      try (Scope s = Scope.open()) {
        Mxc.seed(3);
        UserBlock net = classifier(hybrid ? "h" : "i");
        net.initialize("xavier");
        if (hybrid) net.hybridize(true);
        Fit fit = Fit.create(net, Loss.softmaxCrossEntropy(), Optimizer.sgd(net, 0.1, 0.9),
            new Fit.Options().epochs(4).progress("0"));
        List<Double> losses = new ArrayList<>();
        fit.addListener(TrainingListener.onEpochEnd(f -> losses.add(f.trainLoss())));
        fit.run(DataIter.csv(d.toString(), l.toString(), 16),
            DataIter.csv(vd.toString(), vl.toString(), 16));
        assertEquals(4, losses.size());
        assertTrue(losses.get(3) < losses.get(0) * 0.5, "hybrid " + hybrid + ": " + losses);
        assertTrue(fit.valAccuracy() >= 0.95, "hybrid " + hybrid + ": " + fit.valAccuracy());
        // The optimizer trained the children's parameters through the user blocks.
        assertEquals(8, net.parameterNames().size());
      }
    }
  }

  @Test
  void hybridizedTracesOnceEqualsImperativeAndExportsForThePredictor() {
    try (Scope s = Scope.open()) {
      AtomicInteger calls = new AtomicInteger();
      UserBlock b = residual("hy", 6, calls);
      b.initialize("xavier");
      float[] x = randoms(new Random(5), 3 * 6);
      NDArray in = NDArray.of(x, 3, 6);
      b.forward(in);
      randomize(b, 6);
      float[] imperative = b.forward(in).toFloatArray();
      assertEquals(2, calls.get());
      b.hybridize(true);
      for (int i = 0; i < 3; i++) {
        assertArrayEquals(imperative, b.forward(in).toFloatArray(), 1e-5f);
      }
      assertEquals(3, calls.get()); // traced once, then the bound graph
      assertArrayEquals(byHand(b, "hy", x, 3, 6), imperative, 1e-5f);
      String prefix = dir.resolve("user").toString();
      b.export(prefix, 0);
      try (Predictor p = Predictor.fromCheckpoint(prefix, 0, Map.of("data", new long[] {3, 6}))) {
        assertArrayEquals(imperative, p.predict(x), 1e-5f);
      }
      b.hybridize(false);
      assertArrayEquals(imperative, b.forward(in).toFloatArray(), 1e-6f);
      assertEquals(4, calls.get());
    }
  }

  @Test
  void exceptionsBecomeMxcExceptionsWithTheCauseAndTheBlockStillWorks() throws IOException {
    try (Scope s = Scope.open()) {
      AtomicBoolean fail = new AtomicBoolean(true);
      IllegalStateException boom = new IllegalStateException("boom from Java");
      Dense fc = new Dense(2);
      UserBlock b = new UserBlock(x -> {
        if (fail.get()) throw boom;
        return fc.forward(x[0]);
      }, fc);
      b.initialize("xavier");
      NDArray in = NDArray.of(new float[] {1, 2, 3, 4}, 2, 2);
      MxcException e = assertThrows(MxcException.class, () -> b.forward(in));
      assertSame(boom, e.getCause());
      assertEquals(Upcalls.OPERATOR, e.code());
      // The message is the exception's: no stale text of an earlier failure.
      String said = "(mxc_\\w+: )+UserBlock forward threw " + boom;
      assertTrue(e.getMessage().matches(said), e.getMessage());
      fail.set(false);
      assertArrayEquals(new long[] {2, 2}, b.forward(in).shape());

      // Inside a container (C calls it), and inside a user block (nested).
      Sequential seq = new Sequential().add(b, new Activation("relu"));
      UserBlock outer = new UserBlock(x -> seq.forward(x[0]), seq);
      fail.set(true);
      e = assertThrows(MxcException.class, () -> outer.forward(in));
      assertEquals(Upcalls.OPERATOR, e.code());
      Throwable root = e;
      while (root.getCause() != null) root = root.getCause();
      assertSame(boom, root);
      assertTrue(e.getMessage().matches(said), e.getMessage());

      // In fit(): the run fails with it.
      Path d = dir.resolve("e.csv"), l = dir.resolve("e_labels.csv");
      Files.writeString(d, "1,2\n3,4\n");
      Files.writeString(l, "0\n1\n");
      Fit fit = Fit.create(b, Loss.softmaxCrossEntropy(), Optimizer.sgd(b, 0.1, 0), null);
      e = assertThrows(MxcException.class,
          () -> fit.run(DataIter.csv(d.toString(), l.toString(), 2), null));
      assertSame(boom, e.getCause());
      assertTrue(e.getMessage().matches(said), e.getMessage());
      fail.set(false);
      fit.run(DataIter.csv(d.toString(), l.toString(), 2), null);

      // Results the function may not return.
      NDArray before = NDArray.zeros(DType.FLOAT32, 2, 2);
      for (UserBlock.Forward bad : new UserBlock.Forward[] {x -> x[0], x -> null, x -> before}) {
        UserBlock u = new UserBlock(bad);
        e = assertThrows(MxcException.class, () -> u.forward(in));
        assertEquals(MxcException.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("must return a new NDArray"), e.getMessage());
      }
      assertEquals(4, before.size()); // not taken over
      assertTrue(assertThrows(MxcException.class, () -> new UserBlock(null)).getMessage()
          .contains("forward is null"));
    }
  }

  @Test
  void inputsAreLentForTheCallOnly() {
    try (Scope s = Scope.open()) {
      NDArray[] kept = new NDArray[1];
      UserBlock b = new UserBlock(x -> {
        kept[0] = x[0];
        assertThrows(MxcException.class, x[0]::keep);
        return x[0].mul(x[0]);
      });
      float[] got = b.forward(NDArray.of(new float[] {1, 2, 3}, 3)).toFloatArray();
      assertArrayEquals(new float[] {1, 4, 9}, got);
      MxcException e = assertThrows(MxcException.class, kept[0]::size);
      assertEquals(MxcException.INVALID_HANDLE, e.code());
    }
  }

  @Test
  void forwardFromSeveralThreads() throws Exception {
    int threads = 6;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    UserBlock shared = residual("sh", 3, null);
    shared.initialize("xavier");
    shared.forward(NDArray.zeros(DType.FLOAT32, 1, 3));
    randomize(shared, 9);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      final int seed = t;
      done.add(pool.submit(() -> {
        start.await();
        Random r = new Random(seed);
        try (Scope s = Scope.open()) {
          UserBlock own = residual("t" + seed, 3, null); // one block per thread
          own.initialize("xavier");
          for (int i = 0; i < 40; i++) {
            float[] x = randoms(r, 2 * 3);
            NDArray in = NDArray.of(x, 2, 3);
            float[] y = own.forward(in).toFloatArray();
            assertArrayEquals(byHand(own, "t" + seed, x, 2, 3), y, 1e-5f);
            float[] z;
            synchronized (shared) { // a block is used by one thread at a time
              z = shared.forward(in).toFloatArray();
              assertArrayEquals(byHand(shared, "sh", x, 2, 3), z, 1e-5f);
            }
          }
        }
        return null;
      }));
    }
    start.countDown();
    for (Future<?> f : done) f.get(120, TimeUnit.SECONDS);
    pool.shutdown();
    assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
    shared.close();
  }

  /**
   * A forward pass called by a thread the JVM does not know (a C thread):
   * the callback attaches it for the call and detaches it again (its
   * Thread object is then dead), with the same result.
   */
  @Test
  void forwardOnANativeThreadAttachesAndDetachesIt() {
    try (Scope s = Scope.open()) {
      Dense fc = new Dense(3, null, "nt_fc", null);
      List<Thread> seen = java.util.Collections.synchronizedList(new ArrayList<>());
      UserBlock b = new UserBlock("nt", x -> {
        seen.add(Thread.currentThread());
        return fc.forward(x[0]).add(x[0]);
      }, fc);
      b.initialize("xavier");
      NDArray in = NDArray.of(randoms(new Random(8), 6), 2, 3);
      float[] want = b.forward(in).toFloatArray();
      for (int i = 0; i < 3; i++) {
        NDArray y = new NDArray(
            org.mxc.swig.MxcNative.java_test_forward_on_native_thread(b.handle(), in.handle()));
        assertArrayEquals(want, y.toFloatArray());
      }
      assertEquals(4, seen.size());
      assertSame(Thread.currentThread(), seen.get(0));
      for (Thread t : seen.subList(1, 4)) {
        assertTrue(t != Thread.currentThread() && !t.isAlive(), t.toString());
      }
    }
  }

  /** The callbacks' global references and the handles, once the blocks are gone. */
  @Test
  void closeScopeAndCleanerReleaseTheFunction() throws InterruptedException {
    long handles = ScopeTest.settledHandles(), refs = settledCallbacks();
    try (Scope s = Scope.open()) {
      UserBlock b = residual("sc", 2, null);
      b.initialize("xavier");
      b.forward(NDArray.of(new float[] {1, 2}, 1, 2));
      assertEquals(refs + 1, UserBlock.liveCallbacks());
    }
    assertEquals(refs, settledCallbacks());
    assertEquals(handles, ScopeTest.settledHandles(), Scope.dumpAll());

    UserBlock b = residual("cl", 2, null);
    Sequential seq = new Sequential().add(b);
    b.close(); // the container keeps the block, and so its function
    assertEquals(refs + 1, UserBlock.liveCallbacks());
    seq.initialize("xavier");
    seq.forward(NDArray.of(new float[] {1, 2}, 1, 2)).close();
    seq.close();
    assertEquals(refs, UserBlock.liveCallbacks());

    makeAndDrop(); // the Cleaner frees a block nobody closed
    assertEquals(refs, settledCallbacks());
    assertEquals(handles, ScopeTest.settledHandles(), Scope.dumpAll());
  }

  private static void makeAndDrop() {
    residual("gc", 2, null).initialize("xavier");
  }

  /** liveCallbacks() after the Cleaner caught up. */
  static long settledCallbacks() throws InterruptedException {
    long prev = -1;
    for (int i = 0, steady = 0; i < 200 && steady < 3; i++) {
      System.gc();
      Thread.sleep(10);
      long now = UserBlock.liveCallbacks();
      steady = now == prev ? steady + 1 : 0;
      prev = now;
    }
    return prev;
  }
}
