package org.mxc;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/**
 * The Cleaner safety net: arrays that are never closed are freed, and a
 * million of them leave resident memory flat.
 */
class MemoryTest {
  /** VmRSS of this process in bytes (Linux). */
  static long rssBytes() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return 1024 * Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IOException("no VmRSS in /proc/self/status");
  }

  /**
   * GCs until mxc's bytes in use are at most limit (Long.MIN_VALUE: until
   * they stop falling for five rounds) or 30 s pass; returns them.
   */
  static long collectUntil(long limit) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    Mxc.waitAll();
    long now = Mxc.bytesInUse();
    int steady = 0;
    while (System.nanoTime() < deadline) {
      if (limit == Long.MIN_VALUE ? steady >= 5 : now <= limit) break;
      System.gc();
      Thread.sleep(20);
      Mxc.waitAll();
      long next = Mxc.bytesInUse();
      steady = next < now ? 0 : steady + 1;
      now = next;
    }
    return now;
  }

  /** False under --config=asan/tsan (bindings/test_prefix.sh sets MXC_SANITIZER). */
  static boolean noSanitizer() {
    String san = System.getenv("MXC_SANITIZER");
    return san == null || san.isEmpty();
  }

  @Test
  void cleanerFreesForgottenArrays() throws InterruptedException {
    long baseline = collectUntil(Long.MIN_VALUE); // earlier tests' garbage gone
    float[] data = new float[1024];
    java.util.List<NDArray> held = new java.util.ArrayList<>();
    for (int i = 0; i < 5000; i++) held.add(NDArray.of(data)); // 4 KiB each
    long peak = Mxc.bytesInUse();
    assertTrue(peak >= baseline + 5000 * 4096, "allocated: " + peak + ", baseline " + baseline);
    held = null; // dropped, never closed
    long after = collectUntil(baseline);
    assertTrue(after <= baseline,
        "forgotten arrays freed: " + after + " bytes in use, baseline " + baseline);
  }

  /**
   * A million arrays created and dropped without close(). The JVM heap is
   * fixed and pre-touched (run_tests.sh), so RSS growth is native memory.
   * Bound: 64 MiB. A leak would keep at least the ~200 bytes of handle and
   * array records plus the 16 data bytes of each array, over 200 MiB for a
   * million, while allocator and JIT noise after the warm-up stays within
   * a few MiB.
   */
  @Test
  void millionDroppedArraysKeepRssFlat() throws IOException, InterruptedException {
    float[] four = {1, 2, 3, 4};
    Op add = Op.get("add");
    NDArray keep = NDArray.of(four);
    for (int i = 0; i < 300_000; i++) NDArray.empty(DType.FLOAT32, 4);
    long baseline = collectUntil(Long.MIN_VALUE);
    long rss0 = rssBytes();
    for (int i = 0; i < 1_000_000; i++) {
      if (i % 2 == 0) {
        NDArray.empty(DType.FLOAT32, 4);
      } else {
        add.call(keep, keep); // operator results are dropped too
      }
      if (i % 100_000 == 0) Mxc.waitAll();
    }
    Mxc.waitAll();
    long bytes = collectUntil(baseline);
    long rss1 = rssBytes();
    keep.close();
    long grownMiB = (rss1 - rss0) >> 20;
    System.out.printf("rss before %d MiB, after a million dropped arrays %d MiB%n", rss0 >> 20,
        rss1 >> 20);
    assertTrue(bytes <= baseline, "mxc bytes in use back to " + baseline + ": " + bytes);
    assumeTrue(noSanitizer(), "RSS bound not checked under a sanitizer: ASan keeps freed "
        + "memory in its quarantine (256 MiB) and both keep shadow memory; bytes in use were "
        + "checked, and LeakSanitizer checks for leaks at exit");
    assertTrue(grownMiB < 64, "RSS grew by " + grownMiB + " MiB");
  }
}
