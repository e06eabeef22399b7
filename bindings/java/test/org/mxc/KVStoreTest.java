package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
