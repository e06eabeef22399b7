package org.mxc.bench;

import org.mxc.Mxc;
import org.mxc.NDArray;
import org.mxc.Op;

/**
 * Per-call cost of a tiny operator invoke through org.mxc against the same
 * loop in C in the same process (bench_jni.c), alternated ROUNDS times (default 11: the shared machine is noisy),
 * best of each. Prints name=value lines: c_invoke_us, java_invoke_us,
 * java_overhead_us (their difference).
 *
 * <p>Run: {@code bazel run -c opt //bench/bindings/java:bench [-- CALLS ROUNDS]}.
 * The system property org.mxc.bench.jni names libmxc_bench_jni.so.
 */
public final class InvokeBench {
  private InvokeBench() {}

  /** The C loop: microseconds per call over n calls (-1 on failure). */
  static native double cInvokeUs(int n);

  /** The same loop through org.mxc. */
  static double javaInvokeUs(Op add, NDArray a, NDArray b, int n) {
    long t0 = System.nanoTime();
    for (int i = 0; i < n; i++) {
      add.call(a, b).close();
      if ((i + 1) % 1000 == 0) Mxc.waitAll();
    }
    Mxc.waitAll();
    return (System.nanoTime() - t0) / 1e3 / n;
  }

  public static void main(String[] args) {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 11;
    System.load(System.getProperty("org.mxc.bench.jni"));
    Op add = Op.get("elemwise_add");
    double bestC = Double.MAX_VALUE, bestJava = Double.MAX_VALUE;
    try (NDArray a = NDArray.of(new float[] {1, 2, 3, 4});
        NDArray b = NDArray.of(new float[] {5, 6, 7, 8})) {
      // Warm-up: JIT compilation of the Java path, the pool, the engine.
      javaInvokeUs(add, a, b, calls);
      cInvokeUs(calls);
      for (int r = 0; r < rounds; r++) {
        double c = cInvokeUs(calls);
        if (c < 0) throw new IllegalStateException("the C loop failed");
        bestC = Math.min(bestC, c);
        bestJava = Math.min(bestJava, javaInvokeUs(add, a, b, calls));
      }
    }
    System.out.printf("calls=%d%nrounds=%d%n", calls, rounds);
    System.out.printf("c_invoke_us=%.4f%n", bestC);
    System.out.printf("java_invoke_us=%.4f%n", bestJava);
    System.out.printf("java_overhead_us=%.4f%n", bestJava - bestC);
  }
}
