package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * KVStore: "local" sums against loops here in list order, an optimizer
 * against calling its operator directly, errors, "dist_sync" outside an
 * MPI job; distSync runs across the ranks of an MPI job (run_tests.sh
 * starts it with mpirun -np 2 when Open MPI is installed).
 */
class KVStoreTest {
  private static float[] randoms(long seed, int n) {
    Random r = new Random(seed);
    float[] out = new float[n];
    for (int i = 0; i < n; i++) out[i] = r.nextFloat() * 4 - 2;
    return out;
  }

  @Test
  void localSumsInListOrder() {
    try (KVStore kv = KVStore.create("local")) {
      assertEquals("local", kv.type());
      assertEquals(0, kv.rank());
      assertEquals(1, kv.numWorkers());
      int n = 40;
      kv.init(new String[] {"w"}, NDArray.zeros(DType.FLOAT32, n));
      float[][] v = {randoms(1, n), randoms(2, n), randoms(3, n)};
      kv.push(new String[] {"w", "w", "w"}, 0,
          NDArray.of(v[0], n), NDArray.of(v[1], n), NDArray.of(v[2], n));
      NDArray out = NDArray.zeros(DType.FLOAT32, n);
      kv.pull(new String[] {"w"}, 0, out);
      float[] got = out.toFloatArray();
      for (int i = 0; i < n; i++) {
        float want = v[0][i];
        want += v[1][i];
        want += v[2][i];
        assertEquals(want, got[i], 0.0f, "element " + i);
      }
    }
  }

  @Test
  void optimizerMatchesItsOperator() {
    Map<String, Object> p = Map.of("lr", 0.1, "momentum", 0.9, "wd", 0.01);
    try (KVStore kv = KVStore.create("local")) {
      kv.setOptimizer("sgd_mom_update", p);
      float[] w0 = randoms(4, 20), g = randoms(5, 20);
      kv.init(new String[] {"w"}, NDArray.of(w0, 20));
      NDArray ref = NDArray.of(w0, 20), mom = NDArray.zeros(DType.FLOAT32, 20);
      Op sgd = Op.get("sgd_mom_update");
      for (int step = 0; step < 3; step++) {
        NDArray ga = NDArray.of(g, 20);
        kv.push(new String[] {"w"}, 0, ga);
        sgd.callInto(ref, p, ref, ga, mom);
      }
      NDArray out = NDArray.zeros(DType.FLOAT32, 20);
      kv.pull(new String[] {"w"}, 0, out);
      assertArrayEquals(ref.toFloatArray(), out.toFloatArray());
    }
  }

  @Test
  void errors() {
    try (KVStore kv = KVStore.create("local")) {
      NDArray a = NDArray.zeros(DType.FLOAT32, 3);
      MxcException e =
          assertThrows(MxcException.class, () -> kv.push(new String[] {"nope"}, 0, a));
      assertEquals(MxcException.NOT_FOUND, e.code());
      assertTrue(e.getMessage().contains("key 'nope'"), e.getMessage());
      kv.init(new String[] {"w"}, a);
      NDArray b = NDArray.zeros(DType.FLOAT32, 4);
      e = assertThrows(MxcException.class, () -> kv.push(new String[] {"w"}, 0, b));
      assertEquals(MxcException.SHAPE, e.code());
      e = assertThrows(MxcException.class, () -> kv.setOptimizer("relu", null));
      assertTrue(e.getMessage().contains("not an update operator"), e.getMessage());
    }
    MxcException e = assertThrows(MxcException.class, () -> KVStore.create("dist_sync"));
    assertEquals(MxcException.UNSUPPORTED, e.code());
    assertTrue(e.getMessage().contains("MPI launcher"), e.getMessage());
  }

  @Test
  void intKeysSumLikeStringKeysInTheirOwnNameSpace() {
    try (KVStore kv = KVStore.create("local")) {
      int n = 10;
      kv.init(new int[] {3, 7}, NDArray.zeros(DType.FLOAT32, n), NDArray.zeros(DType.FLOAT32, n));
      kv.init(new String[] {"3"}, NDArray.of(randoms(9, n), n));
      float[][] v = {randoms(11, n), randoms(12, n), randoms(13, n)};
      kv.push(new long[] {3, 7, 3}, 0,
          NDArray.of(v[0], n), NDArray.of(v[1], n), NDArray.of(v[2], n));
      NDArray a = NDArray.zeros(DType.FLOAT32, n), b = NDArray.zeros(DType.FLOAT32, n);
      NDArray c = NDArray.zeros(DType.FLOAT32, n);
      kv.pull(new int[] {3, 7}, 0, a, b);
      kv.pull(new String[] {"3"}, 0, c);
      float[] sum = a.toFloatArray();
      for (int i = 0; i < n; i++) {
        float want = v[0][i];
        want += v[2][i];
        assertEquals(want, sum[i], 0.0f, "key 3, element " + i);
      }
      assertArrayEquals(v[1], b.toFloatArray());
      assertArrayEquals(randoms(9, n), c.toFloatArray()); // "3" is another key
      NDArray p = NDArray.of(v[0], n);
      kv.pushPull(new int[] {7}, 0, p);
      assertArrayEquals(v[0], p.toFloatArray());
      MxcException e = assertThrows(MxcException.class,
          () -> kv.push(new int[] {8}, 0, NDArray.zeros(DType.FLOAT32, n)));
      assertEquals(MxcException.NOT_FOUND, e.code());
      e = assertThrows(MxcException.class, () -> kv.pull(new int[] {3, 7}, 0, a));
      assertEquals(MxcException.INVALID_ARGUMENT, e.code());
    }
  }

  /** w -= lr * g written in Java with operators. */
  private static KVStore.Updater sgdInJava(double lr, java.util.List<Object> keys) {
    Op mulScalar = Op.get("_mul_scalar"), sub = Op.get("elemwise_sub");
    return (key, grad, weight) -> {
      if (keys != null) keys.add(key);
      sub.callInto(weight, null, weight, mulScalar.call(Map.of("scalar", lr), grad));
    };
  }

  @Test
  void javaUpdaterMatchesTheSgdUpdateOptimizer() {
    int n = 50, steps = 4;
    float[] w0 = randoms(20, n);
    float[][] g = new float[steps][];
    for (int s = 0; s < steps; s++) g[s] = randoms(30 + s, n);
    java.util.List<Object> keys = new java.util.ArrayList<>();
    float[] viaJava, viaOptimizer, viaJavaOp;
    try (KVStore kv = KVStore.create("local")) {
      kv.setUpdater(sgdInJava(0.1, keys));
      kv.init(new int[] {5}, NDArray.of(w0, n));
      kv.init(new String[] {"w"}, NDArray.of(w0, n));
      for (int s = 0; s < steps; s++) {
        kv.push(new int[] {5}, 0, NDArray.of(g[s], n));
        kv.push(new String[] {"w"}, 0, NDArray.of(g[s], n));
      }
      NDArray out = NDArray.zeros(DType.FLOAT32, n), other = NDArray.zeros(DType.FLOAT32, n);
      kv.pull(new int[] {5}, 0, out);
      kv.pull(new String[] {"w"}, 0, other);
      viaJava = out.toFloatArray();
      assertArrayEquals(viaJava, other.toFloatArray());
    }
    assertEquals(steps * 2, keys.size());
    assertEquals(5L, keys.get(0));
    assertEquals("w", keys.get(1));
    Map<String, Object> p = Map.of("lr", 0.1);
    try (KVStore kv = KVStore.create("local")) {
      kv.setOptimizer("sgd_update", p);
      kv.init(new int[] {5}, NDArray.of(w0, n));
      for (int s = 0; s < steps; s++) kv.push(new int[] {5}, 0, NDArray.of(g[s], n));
      NDArray out = NDArray.zeros(DType.FLOAT32, n);
      kv.pull(new int[] {5}, 0, out);
      viaOptimizer = out.toFloatArray();
      // The same operator called from a Java updater: the same bits.
      Op sgd = Op.get("sgd_update");
      kv.setUpdater((key, grad, weight) -> sgd.callInto(weight, p, weight, grad));
      kv.init(new int[] {6}, NDArray.of(w0, n));
      for (int s = 0; s < steps; s++) kv.push(new int[] {6}, 0, NDArray.of(g[s], n));
      kv.pull(new int[] {6}, 0, out);
      viaJavaOp = out.toFloatArray();
    }
    assertArrayEquals(viaOptimizer, viaJavaOp);
    float[] hand = w0.clone();
    for (int s = 0; s < steps; s++) {
      for (int i = 0; i < n; i++) hand[i] = (float) (hand[i] - 0.1 * g[s][i]);
    }
    assertArrayEquals(hand, viaOptimizer, 1e-6f);
    assertArrayEquals(hand, viaJava, 1e-6f);
  }

  @Test
  void updaterExceptionFailsThePushAndTheStoreGoesOn() {
    try (KVStore kv = KVStore.create("local")) {
      IllegalArgumentException bad = new IllegalArgumentException("updater refuses key 2");
      kv.setUpdater((key, grad, weight) -> {
        if (Long.valueOf(2).equals(key)) throw bad;
        Op.get("elemwise_add").callInto(weight, null, weight, grad);
      });
      kv.init(new int[] {1, 2}, NDArray.of(new float[] {1, 1}, 2), NDArray.of(new float[] {5, 5}, 2));
      NDArray g = NDArray.of(new float[] {10, 20}, 2);
      MxcException e = assertThrows(MxcException.class, () -> kv.push(new int[] {1, 2}, 0, g, g));
      assertSame(bad, e.getCause());
      assertEquals(11, e.code()); // MXC_ERR_OPERATOR
      assertTrue(e.getMessage().matches(".*key 2: .*KVStore updater threw " + bad), e.getMessage());
      e = assertThrows(MxcException.class, () -> kv.pushPull(new int[] {2}, 0, g));
      assertSame(bad, e.getCause());
      NDArray one = NDArray.zeros(DType.FLOAT32, 2);
      kv.pull(new int[] {1}, 0, one);
      assertArrayEquals(new float[] {11, 21}, one.toFloatArray()); // key 1 was updated
      // Closing the store from inside its updater is refused.
      kv.setUpdater((key, grad, weight) -> kv.close());
      e = assertThrows(MxcException.class, () -> kv.push(new int[] {1}, 0, g));
      assertEquals(MxcException.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("not from inside a push"), e.getMessage());
      // Replacing it from inside works: the store drops the running updater
      // once this call returns, and the next push stores the plain sum.
      kv.setUpdater((key, grad, weight) -> {
        Op.get("elemwise_add").callInto(weight, null, weight, grad);
        kv.setUpdater(null);
      });
      kv.push(new int[] {1}, 0, g);
      kv.pull(new int[] {1}, 0, one);
      assertArrayEquals(new float[] {21, 41}, one.toFloatArray()); // 11 + 10, 21 + 20
      kv.push(new int[] {2}, 0, g);
      kv.pull(new int[] {2}, 0, one);
      assertArrayEquals(new float[] {10, 20}, one.toFloatArray());
    }
  }

  @Test
  void replacingRemovingAndClosingReleaseTheUpdater() throws InterruptedException {
    long refs = UserBlockTest.settledCallbacks();
    KVStore.Updater u = (key, grad, weight) -> grad.copyTo(weight);
    try (KVStore kv = KVStore.create("local")) {
      kv.setUpdater(u);
      assertEquals(refs + 1, UserBlock.liveCallbacks());
      kv.setUpdater(sgdInJava(0.5, null));
      assertEquals(refs + 1, UserBlock.liveCallbacks());
      kv.setUpdater(null);
      assertEquals(refs, UserBlock.liveCallbacks());
      kv.setUpdater(u);
      kv.setOptimizer("sgd_update", Map.of("lr", 0.1));
      assertEquals(refs, UserBlock.liveCallbacks());
      kv.setUpdater(u);
      assertEquals(refs + 1, UserBlock.liveCallbacks());
    }
    assertEquals(refs, UserBlock.liveCallbacks()); // close()
    try (Scope s = Scope.open()) {
      KVStore.create("local").setUpdater(u);
      KVStore kept = KVStore.create("local");
      kept.setUpdater(u);
      try (Scope inner = Scope.open()) {
        KVStore.create("local").setUpdater(u);
        KVStore moved = KVStore.create("local");
        moved.setUpdater(u);
        moved.keep(); // to s: its end drops the updater
        assertEquals(refs + 4, UserBlock.liveCallbacks());
      }
      assertEquals(refs + 3, UserBlock.liveCallbacks());
      kept.init(new int[] {1}, NDArray.zeros(DType.FLOAT32, 2));
      kept.push(new int[] {1}, 0, NDArray.of(new float[] {4, 5}, 2));
      NDArray out = NDArray.zeros(DType.FLOAT32, 2);
      kept.pull(new int[] {1}, 0, out);
      assertArrayEquals(new float[] {4, 5}, out.toFloatArray());
    }
    assertEquals(refs, UserBlock.liveCallbacks()); // the scopes' ends
    makeAndDrop(u);
    assertEquals(refs, UserBlockTest.settledCallbacks()); // the Cleaner
  }

  private static void makeAndDrop(KVStore.Updater u) {
    KVStore.create("local").setUpdater(u);
  }

  @Test
  void distSync() throws Exception {
    String np = System.getenv("MXC_TEST_NP");
    assumeTrue(np != null, "runs under mpirun (run_tests.sh sets MXC_TEST_NP)");
    try (KVStore kv = KVStore.create("dist_sync")) {
      int rank = kv.rank(), n = kv.numWorkers();
      assertEquals(Integer.parseInt(np), n);
      NDArray w = NDArray.of(new float[] {rank + 1, 5}, 2);
      kv.init(new String[] {"w"}, w);
      kv.pushPull(new String[] {"w"}, 0, w);
      assertArrayEquals(new float[] {n * (n + 1) / 2, 5 * n}, w.toFloatArray());
      kv.setOptimizer("adam_update", Map.of("lr", 0.01));
      NDArray p = NDArray.of(randoms(10 + rank, 500), 500);
      kv.init(new String[] {"p"}, p);
      for (int step = 0; step < 20; step++) {
        kv.push(new String[] {"p"}, 0, NDArray.of(randoms(100L * step + rank, 500), 500));
      }
      kv.pull(new String[] {"p"}, 0, p);
      float[] mine = p.toFloatArray();
      // An int key and a Java updater (w -= 0.5 * sum): the same on every rank.
      kv.setUpdater(sgdInJava(0.5, null));
      NDArray q = NDArray.of(new float[] {1, 2}, 2);
      kv.init(new int[] {9}, q);
      kv.push(new int[] {9}, 0, NDArray.of(new float[] {rank + 1, 2 * rank}, 2));
      kv.pull(new int[] {9}, 0, q);
      float[] want = {1 - 0.5f * (n * (n + 1) / 2), 2 - 0.5f * (n * (n - 1))};
      assertArrayEquals(want, q.toFloatArray(), 1e-6f);
      Path dir = Path.of(System.getenv().getOrDefault("TEST_TMPDIR", "/tmp"));
      Files.writeString(dir.resolve("java_kv_" + rank), Arrays.toString(mine));
      kv.barrier();
      if (rank == 0) {
        for (int r = 1; r < n; r++) {
          assertEquals(Arrays.toString(mine), Files.readString(dir.resolve("java_kv_" + r)),
              "rank " + r + " holds other values than rank 0");
        }
      }
      kv.barrier();
    }
  }
}
