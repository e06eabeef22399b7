package org.mxc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Memory scopes: try-with-resources frees what the thread made inside (the
 * library's live-handle count comes back), kept results survive, Cleaners
 * never free a scope's objects again, scopes are per thread, and a
 * million arrays made in scopes keep resident memory flat.
 */
class ScopeTest {
  /**
   * The process's live handles once the Cleaner has freed earlier tests'
   * garbage (stable for three rounds of collection), so that it cannot
   * change the counts compared here.
   */
  static long settledHandles() throws InterruptedException {
    long prev = -1;
    for (int i = 0, steady = 0; i < 200 && steady < 3; i++) {
      System.gc();
      Thread.sleep(10);
      long now = Scope.processHandles();
      steady = now == prev ? steady + 1 : 0;
      prev = now;
    }
    return prev;
  }

  private static void assertFreed(NDArray a) {
    MxcException e = assertThrows(MxcException.class, a::size);
    assertEquals(MxcException.INVALID_HANDLE, e.code());
  }

  @Test
  void scopeFreesEverythingMadeInside() throws InterruptedException {
    long before = settledHandles();
    NDArray a, b, c;
    Symbol x;
    try (Scope s = Scope.open()) {
      a = NDArray.of(new float[] {-1, 2, -3}, 3);
      b = a.add(a);
      c = NDArray.zeros(DType.FLOAT32, 2, 2);
      x = Symbol.variable("x");
      assertEquals(4, s.liveHandles());
      assertEquals(4 * (3 + 3 + 4), s.liveBytes());
      assertEquals(-2f, b.toFloatArray()[0]);
    }
    assertEquals(before, settledHandles());
    assertFreed(a);
    assertFreed(b);
    assertFreed(c);
    assertThrows(MxcException.class, x::toJson);
    // close() (and the Cleaner, the same action) does not free them again.
    a.close();
    x.close();
    assertEquals(before, settledHandles());
  }

  private static NDArray sumOfRelu(NDArray x) {
    try (Scope s = Scope.open()) {
      NDArray r = Op.invoke("relu", x);
      return Op.invoke("sum", r).keep();
    }
  }

  @Test
  void keepDetachAndNesting() throws InterruptedException {
    long before = settledHandles();
    NDArray y, z;
    try (Scope outer = Scope.open()) {
      NDArray x = NDArray.of(new float[] {-1, 2, -3, 4});
      y = sumOfRelu(x);
      assertEquals(6f, y.toFloatArray()[0]);
      assertEquals(2, outer.liveHandles()); // x and the kept sum
      z = NDArray.zeros(DType.FLOAT32, 3).detachFromScope();
      assertEquals(2, outer.liveHandles());
      java.lang.ref.Reference.reachabilityFence(x); // not cleaned before the counts
    }
    assertFreed(y);
    assertEquals(0f, z.toFloatArray()[2]);
    z.close();
    assertEquals(before, settledHandles());
  }

  @Test
  void closeOnAnotherThreadThrows() throws InterruptedException {
    Scope s = Scope.open();
    AtomicReference<Throwable> got = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        s.close();
      } catch (Throwable e) {
        got.set(e);
      }
    });
    t.start();
    t.join();
    assertTrue(got.get() instanceof MxcException, String.valueOf(got.get()));
    s.close();
    s.close(); // idempotent
  }

  @Test
  void scopesArePerThread() throws InterruptedException {
    long before = settledHandles();
    List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
    try (Scope mine = Scope.open()) {
      List<Thread> ts = new ArrayList<>();
      for (int k = 0; k < 8; k++) {
        final float v = k;
        ts.add(new Thread(() -> {
          try {
            for (int r = 0; r < 25; r++) {
              try (Scope s = Scope.open()) {
                // Held: a dropped array may be cleaned (freed by hand) first.
                List<NDArray> held = new ArrayList<>();
                for (int i = 0; i < 40; i++) held.add(NDArray.of(new float[] {v, v, v}));
                NDArray last = held.get(39);
                if (s.liveHandles() != 40 || s.liveBytes() != 40 * 12) {
                  errors.add(s.liveHandles() + " " + s.liveBytes());
                }
                if (last.toFloatArray()[1] != v) errors.add("contents");
              }
            }
          } catch (Throwable e) {
            errors.add(e.toString());
          }
        }));
      }
      for (Thread t : ts) t.start();
      for (Thread t : ts) t.join();
      assertEquals(0, mine.liveHandles());
    }
    assertEquals(List.of(), errors);
    assertEquals(before, settledHandles());
  }

  @Test
  void dumpNamesTheOpeningLine() {
    Scope.setDebug(true);
    try (Scope s = Scope.open()) {
      int line = new Throwable().getStackTrace()[0].getLineNumber() + 1;
      NDArray a = NDArray.zeros(DType.FLOAT32, 2);
      String d = s.dump();
      // The line that made the array, not a line inside org.mxc.
      assertTrue(d.contains("8 bytes, made by mxc_ndarray_create at ScopeTest.java:" + line + ","), d);
      a.close();
      assertEquals("", s.dump());
    } finally {
      Scope.setDebug(false);
    }
  }

  @Test
  void millionArraysInScopesKeepMemoryFlat() throws Exception {
    int n = MemoryTest.noSanitizer() ? 1_000_000 : 100_000;
    float[] data = new float[4];
    for (int r = 0; r < 20; r++) { // warm the pool and the allocator
      try (Scope s = Scope.open()) {
        for (int i = 0; i < 1000; i++) NDArray.of(data);
      }
    }
    MemoryTest.collectUntil(Long.MIN_VALUE);
    long handles = settledHandles(), rss = MemoryTest.rssBytes();
    List<NDArray> held = new ArrayList<>();
    for (int r = 0; r < n / 1000; r++) {
      held.clear(); // referenced until the scope ends: only it frees them
      try (Scope s = Scope.open()) {
        for (int i = 0; i < 1000; i++) held.add(NDArray.of(data));
      }
    }
    assertFreed(held.get(0));
    assertEquals(handles, settledHandles());
    long grown = MemoryTest.rssBytes() - rss;
    if (MemoryTest.noSanitizer()) {
      assertTrue(grown < (32L << 20), "RSS grew by " + grown + " bytes");
    }
  }
}
