package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mxc.examples.ClassifyFashionMnist;

/**
 * Predictor and Checkpoint on the model scripts/make_predictor_model.py
 * writes (its numpy forward is the reference; files from the Bazel target
 * //tests/predict:model), and the real Fashion-MNIST model of the shared
 * mxnet-models directory through the example (skipped when absent).
 */
class PredictorTest {
  static final Path DIR = Paths.get(System.getenv().getOrDefault("TEST_SRCDIR", "."),
      System.getenv().getOrDefault("TEST_WORKSPACE", "mxc"), "tests/predict/model");
  static final String PREFIX = DIR.resolve("model").toString();

  static float[] floats(String name) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(DIR.resolve(name)))
        .order(ByteOrder.LITTLE_ENDIAN);
    float[] v = new float[b.remaining() / 4];
    b.asFloatBuffer().get(v);
    return v;
  }

  static int[] meta() throws IOException {
    return Arrays.stream(Files.readString(DIR.resolve("meta.txt")).trim().split(" "))
        .mapToInt(Integer::parseInt).toArray();
  }

  static long[] shape(int batch, int[] m) {
    return new long[] {batch, m[1], m[2], m[3]};
  }

  static void assertClose(float[] want, int from, float[] got) {
    for (int i = 0; i < got.length; i++) {
      assertEquals(want[from + i], got[i], 2e-5, "element " + i);
    }
  }

  @Test
  void checkpointMatchesNumpyForward() throws IOException {
    int[] m = meta();
    float[] x = floats("input.f32"), want = floats("expected.f32");
    try (Predictor p = Predictor.fromCheckpoint(PREFIX, 0, Map.of("data", shape(m[0], m))) ) {
      assertEquals(1, p.numOutputs());
      assertArrayEquals(new long[] {m[0], m[4]}, p.outputShape(0));
      assertClose(want, 0, p.predict(x));
    }
  }

  @Test
  void bytesReshapeShareAndNamedOutputs() throws IOException {
    int[] m = meta();
    float[] x = floats("input.f32"), want = floats("expected.f32");
    String json = Files.readString(Paths.get(PREFIX + "-symbol.json"));
    byte[] params = Files.readAllBytes(Paths.get(PREFIX + "-0000.params"));
    int image = m[1] * m[2] * m[3];
    try (Predictor p = Predictor.create(json, params, Map.of("data", shape(m[0], m)),
            List.of("fc", "softmax"));
        Predictor one = p.reshape(Map.of("data", shape(1, m)));
        Predictor other = one.share()) {
      p.setInput("data", x).forward();
      assertEquals(2, p.numOutputs());
      assertClose(want, 0, p.outputFloats(1));
      try (NDArray scores = p.output(0)) {
        assertArrayEquals(new long[] {m[0], m[4]}, scores.shape());
      }
      for (int i = 0; i < m[0]; i++) {
        float[] xi = Arrays.copyOfRange(x, i * image, (i + 1) * image);
        Predictor q = i % 2 == 0 ? one : other;
        assertClose(want, i * m[4], q.setInput("data", xi).forward().outputFloats(1));
      }
    }
  }

  @Test
  void threadsSharingWeightsAgree() throws Exception {
    int[] m = meta();
    float[] x = floats("input.f32");
    int image = m[1] * m[2] * m[3];
    try (Predictor base = Predictor.fromCheckpoint(PREFIX, 0, Map.of("data", shape(1, m)))) {
      List<float[]> ref = new ArrayList<>();
      for (int i = 0; i < m[0]; i++) {
        ref.add(base.predict(Arrays.copyOfRange(x, i * image, (i + 1) * image)));
      }
      List<Thread> threads = new ArrayList<>();
      List<String> bad = java.util.Collections.synchronizedList(new ArrayList<>());
      for (int t = 0; t < 4; t++) {
        Predictor mine = base.share();
        int tt = t;
        threads.add(new Thread(() -> {
          try (mine) {
            for (int r = 0; r < 20; r++) {
              int i = (tt + r) % m[0];
              float[] y = mine.predict(Arrays.copyOfRange(x, i * image, (i + 1) * image));
              if (!Arrays.equals(y, ref.get(i))) bad.add(tt + "/" + r);
            }
          }
        }));
      }
      threads.forEach(Thread::start);
      for (Thread th : threads) th.join();
      assertTrue(bad.isEmpty(), "mismatches " + bad);
    }
  }

  /**
   * 16 threads share a pool of 3 predictors (one copy of the weights):
   * every answer equals the single-thread one, and closing the pool (and
   * the model) leaves no handle behind.
   */
  @Test
  void poolServesManyThreads() throws Exception {
    int[] m = meta();
    float[] x = floats("input.f32");
    int image = m[1] * m[2] * m[3];
    long before = ScopeTest.settledHandles();
    List<float[]> ref = new ArrayList<>();
    PredictorPool pool;
    try (Predictor base = Predictor.fromCheckpoint(PREFIX, 0, Map.of("data", shape(1, m)));
        Scope s = Scope.open()) { // the pool's predictors are not the scope's
      for (int i = 0; i < m[0]; i++) {
        ref.add(base.predict(Arrays.copyOfRange(x, i * image, (i + 1) * image)));
      }
      pool = new PredictorPool(base, 3);
    }
    List<String> bad = java.util.Collections.synchronizedList(new ArrayList<>());
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 16; t++) {
      int tt = t;
      threads.add(new Thread(() -> {
        try {
          for (int r = 0; r < 40; r++) {
            int i = (tt * 7 + r) % m[0];
            float[] y = pool.predict(Arrays.copyOfRange(x, i * image, (i + 1) * image));
            if (!Arrays.equals(y, ref.get(i))) bad.add(tt + "/" + r);
          }
        } catch (Throwable e) {
          bad.add(e.toString());
        }
      }));
    }
    threads.forEach(Thread::start);
    for (Thread th : threads) th.join();
    assertTrue(bad.isEmpty(), "failures " + bad);
    assertEquals(3, pool.size());
    pool.close();
    assertThrows(MxcException.class, () -> pool.predict(x));
    assertEquals(before, ScopeTest.settledHandles());
    assertThrows(MxcException.class, () -> new PredictorPool(null, 0));
  }

  @Test
  void badInputThrows() throws IOException {
    int[] m = meta();
    String json = Files.readString(Paths.get(PREFIX + "-symbol.json"));
    byte[] params = Files.readAllBytes(Paths.get(PREFIX + "-0000.params"));
    MxcException e = assertThrows(MxcException.class,
        () -> Predictor.fromCheckpoint(PREFIX, 0, Map.of("image", shape(1, m))));
    assertEquals(MxcException.NOT_FOUND, e.code());
    e = assertThrows(MxcException.class, () -> Predictor.create(json,
        Arrays.copyOf(params, params.length - 5), Map.of("data", shape(1, m)), List.of()));
    assertEquals(MxcException.IO, e.code());
    assertTrue(e.getMessage().contains("offset"), e.getMessage());
    e = assertThrows(MxcException.class,
        () -> Predictor.fromCheckpoint(PREFIX, 0, Map.of("data", new long[] {1, 2, 6, 6})));
    assertEquals(MxcException.SHAPE, e.code());
    try (Predictor p = Predictor.fromCheckpoint(PREFIX, 0, Map.of("data", shape(1, m)))) {
      e = assertThrows(MxcException.class, () -> p.setInput("data", new float[3]));
      e = assertThrows(MxcException.class, () -> p.setInput("label", new float[3]));
      assertEquals(MxcException.NOT_FOUND, e.code());
      p.close();
      e = assertThrows(MxcException.class, p::forward);
      assertEquals(MxcException.INVALID_HANDLE, e.code());
    }
  }

  @Test
  void checkpointLoadSaveRoundTrip(@TempDir Path tmp) throws IOException {
    int[] m = meta();
    float[] x = floats("input.f32"), want = floats("expected.f32");
    String again = tmp.resolve("again").toString();
    try (Checkpoint c = Checkpoint.load(PREFIX, 0)) {
      assertTrue(c.aux().containsKey("bn_moving_var"));
      assertArrayEquals(new long[] {4, 3, 3, 3}, c.args().get("conv_weight").shape());
      Checkpoint.save(again, 7, c.symbol(), c.args(), c.aux());
    }
    assertTrue(Files.exists(Paths.get(again + "-0007.params")));
    try (Predictor p = Predictor.fromCheckpoint(again, 7, Map.of("data", shape(m[0], m)))) {
      assertClose(want, 0, p.predict(x));
    }
    MxcException e = assertThrows(MxcException.class, () -> Checkpoint.load(again, 8));
    assertEquals(MxcException.IO, e.code());
  }

  /** The real model classifies the real test set at its known accuracy. */
  @Test
  void fashionMnistExample() {
    String models = System.getenv("MXC_MXNET_MODELS");
    if (models == null) models = sharedModels();
    String data = System.getenv().getOrDefault("MXC_FASHION_MNIST",
        "/usr/share/datasets/fashion-mnist");
    String prefix = models + "/mentalblood_fashion-mnist";
    assumeTrue(models != null && ClassifyFashionMnist.available(prefix, data),
        "SKIP: shared mxnet-models or Fashion-MNIST not found");
    ClassifyFashionMnist.Result r = ClassifyFashionMnist.classify(prefix, 39, data);
    assertEquals(10000, r.images);
    assertEquals(0.868, r.accuracy(), 0.005);
  }

  /** shared/mxnet-models beside or above the source tree (from the script's real path). */
  static String sharedModels() {
    try {
      Path script = Paths.get(System.getenv().getOrDefault("TEST_SRCDIR", "."),
          System.getenv().getOrDefault("TEST_WORKSPACE", "mxc"),
          "scripts/make_predictor_model.py").toRealPath();
      Path root = script.getParent().getParent();
      for (String up : new String[] {"../shared", "../../shared", "shared"}) {
        Path d = root.resolve(up).resolve("mxnet-models").normalize();
        if (Files.isReadable(d.resolve("README.md"))) return d.toString();
      }
    } catch (IOException e) {
      return null;
    }
    return null;
  }
}
