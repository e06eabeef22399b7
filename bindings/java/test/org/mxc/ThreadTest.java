package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Eight threads hammering arrays, operators, autograd and close(). */
class ThreadTest {
  static final int THREADS = 8;

  @Test
  void eightThreadsHammerArraysAndOperators() throws Exception {
    NDArray shared = NDArray.of(new float[] {1, 2, 3, 4}, 2, 2); // read by all
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> results = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      final int seed = t;
      results.add(pool.submit(() -> {
        start.await();
        Random r = new Random(seed);
        for (int i = 0; i < 1500; i++) {
          float[] x = {r.nextFloat(), r.nextFloat(), r.nextFloat(), r.nextFloat()};
          NDArray a = NDArray.of(x, 2, 2);
          try (NDArray s = a.add(shared); NDArray p = Op.invoke("dot", a, shared)) {
            float[] sum = s.toFloatArray();
            for (int k = 0; k < 4; k++) assertEquals(x[k] + (k + 1), sum[k], 1e-6f);
            float[] d = p.toFloatArray();
            assertEquals(x[0] * 1 + x[1] * 3, d[0], 1e-5f);
          }
          if (i % 3 == 0) a.close(); // the rest is left to the Cleaner
          if (i % 50 == 0) {
            try (NDArray v = NDArray.of(x)) {
              Autograd.markVariables(v);
              NDArray loss;
              try (Autograd.Scope sc = Autograd.record(); NDArray sq = v.mul(v)) {
                loss = Op.invoke("sum", sq);
              }
              Autograd.backward(loss);
              loss.close();
              try (NDArray g = v.grad()) {
                float[] gv = g.toFloatArray();
                for (int k = 0; k < 4; k++) assertEquals(2 * x[k], gv[k], 1e-5f);
              }
            }
            assertThrows(MxcException.class, () -> Op.invoke("sum", Map.of("axis", "?"), a));
          }
        }
        return null;
      }));
    }
    start.countDown();
    for (Future<?> f : results) f.get(170, TimeUnit.SECONDS); // rethrows failures
    pool.shutdown();
    assertArrayEquals(new float[] {1, 2, 3, 4}, shared.toFloatArray());
    shared.close();
  }

  @Test
  void concurrentCloseFreesOnce() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    for (int round = 0; round < 200; round++) {
      NDArray a = NDArray.of(new float[] {1});
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        fs.add(pool.submit(() -> {
          go.await();
          a.close();
          return null;
        }));
      }
      go.countDown();
      for (Future<?> f : fs) f.get();
    }
    pool.shutdown();
  }
}
