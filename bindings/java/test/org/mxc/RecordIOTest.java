package org.mxc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
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
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * RecordIO, image records, image decoding and the image record iterator
 * through the binding: records written here and read back; files written
 * by the repository's independent scripts (scripts/recordio_ref.py,
 * image_ref.py and image_iter_ref.py, Debian's python3 with numpy and PIL)
 * read here and compared with what those scripts say they hold; damaged
 * files give MxcException (IO) with mxc's message.
 */
class RecordIOTest {
  /** The magic word 0xced7230a as it sits in a file (little-endian). */
  static final byte[] MAGIC = {0x0a, 0x23, (byte) 0xd7, (byte) 0xce};

  static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) n += p.length;
    ByteBuffer b = ByteBuffer.allocate(n);
    for (byte[] p : parts) b.put(p);
    return b.array();
  }

  static byte[] pattern(int n, int seed) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) b[i] = (byte) (i * 31 + seed * 7);
    return b;
  }

  /** Lengths around the 4-byte padding, and the magic at aligned and unaligned offsets. */
  static List<byte[]> records() {
    List<byte[]> r = new ArrayList<>();
    for (int n : new int[] {0, 1, 2, 3, 4, 5, 7, 8, 13, 4099}) r.add(pattern(n, n));
    r.add(MAGIC);
    r.add(concat(MAGIC, MAGIC));
    r.add(concat("head".getBytes(), MAGIC, "tail".getBytes()));
    r.add(concat("ab".getBytes(), MAGIC, "cd".getBytes()));
    r.add(concat(pattern(8, 1), MAGIC, "x".getBytes(), MAGIC, MAGIC, "yz".getBytes()));
    return r;
  }

  @Test
  void writeThenReadSequentiallyAndByKey(@TempDir Path tmp) {
    String rec = tmp.resolve("a.rec").toString(), idx = tmp.resolve("a.idx").toString();
    List<byte[]> recs = records();
    long[] keys = new long[recs.size()];
    try (RecordIO w = RecordIO.create(rec, idx)) {
      for (int i = 0; i < recs.size(); i++) {
        keys[i] = 1000 + 3L * i;
        w.write(keys[i], recs.get(i));
      }
      assertArrayEquals(keys, w.keys());
    }
    try (RecordIO r = RecordIO.open(rec, idx)) {
      assertArrayEquals(keys, r.keys());
      for (int i = 0; i < recs.size(); i++) assertArrayEquals(recs.get(i), r.read(), "record " + i);
      assertNull(r.read());
      for (int i = recs.size() - 1; i >= 0; i--) {
        assertArrayEquals(recs.get(i), r.read(keys[i]), "key " + keys[i]);
      }
      assertArrayEquals(recs.get(1), r.read(), "reading goes on after read(key)");
      long pos = r.tell();
      assertArrayEquals(recs.get(2), r.read());
      r.seek(pos);
      assertArrayEquals(recs.get(2), r.read(), "seek back to a tell()");
      MxcException e = assertThrows(MxcException.class, () -> r.read(7));
      assertEquals(MxcException.NOT_FOUND, e.code());
    }
    String plain = tmp.resolve("b.rec").toString();
    try (RecordIO w = RecordIO.create(plain, null)) {
      for (byte[] b : recs) w.write(b);
    }
    try (RecordIO r = RecordIO.open(plain, null)) {
      for (byte[] b : recs) assertArrayEquals(b, r.read());
      assertNull(r.read());
      assertThrows(MxcException.class, () -> r.read(1000));
    }
  }

  @Test
  void imageHeaderWithLabelArray(@TempDir Path tmp) {
    float[] labels = {1.5f, -2f, 3.25f};
    long id = (1L << 40) + 7, id2 = -2; // id2: 2^64 - 2 as unsigned
    byte[] img = concat(pattern(9, 3), MAGIC);
    byte[] packed = ImageRecord.pack(labels, id, id2, img);
    // The layout, read here without mxc: flag, label, id, id2, labels, image.
    ByteBuffer b = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(24 + 4 * 3 + img.length, packed.length);
    assertEquals(3, b.getInt(0));
    assertEquals(id, b.getLong(8));
    assertEquals(id2, b.getLong(16));
    for (int i = 0; i < 3; i++) assertEquals(labels[i], b.getFloat(24 + 4 * i));
    assertArrayEquals(img, Arrays.copyOfRange(packed, 36, packed.length));
    byte[] one = ImageRecord.pack(new float[] {4f}, 9, 0, img);
    ByteBuffer o = ByteBuffer.wrap(one).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(24 + img.length, one.length);
    assertEquals(0, o.getInt(0), "one label: flag 0, as im2rec writes it");
    assertEquals(4f, o.getFloat(4));

    String rec = tmp.resolve("i.rec").toString(), idx = tmp.resolve("i.idx").toString();
    try (RecordIO w = RecordIO.create(rec, idx)) {
      w.write(5, packed);
      w.write(6, one);
    }
    try (RecordIO r = RecordIO.open(rec, idx)) {
      ImageRecord u = ImageRecord.unpack(r.read(5));
      assertArrayEquals(labels, u.labels());
      assertEquals(id, u.id());
      assertEquals("18446744073709551614", Long.toUnsignedString(u.id2()));
      assertArrayEquals(img, u.image());
      ImageRecord v = ImageRecord.unpack(r.read(6));
      assertArrayEquals(new float[] {4f}, v.labels());
      assertEquals(9, v.id());
      assertArrayEquals(img, v.image());
    }
    MxcException e = assertThrows(MxcException.class, () -> ImageRecord.unpack(new byte[10]));
    assertEquals(MxcException.IO, e.code());
    assertTrue(e.getMessage().contains("24-byte header"), e.getMessage());
  }

  // ---- files of the independent scripts -----------------------------------

  static Path script(String name) {
    return Paths.get(System.getenv().getOrDefault("TEST_SRCDIR", "."),
        System.getenv().getOrDefault("TEST_WORKSPACE", "mxc"), "scripts", name);
  }

  /** Runs /usr/bin/python3 scripts/NAME ARGS; skips the test without numpy and PIL. */
  static void python(String name, String... args) throws IOException, InterruptedException {
    Path py = Paths.get("/usr/bin/python3");
    assumeTrue(Files.isExecutable(py), "SKIP: needs /usr/bin/python3 (Debian: python3)");
    int has = new ProcessBuilder(py.toString(), "-c", "import numpy, PIL").start().waitFor();
    assumeTrue(has == 0, "SKIP: needs python3-numpy and python3-pil");
    List<String> cmd = new ArrayList<>(List.of(py.toString(), script(name).toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    assertEquals(0, p.waitFor(), String.join(" ", cmd));
  }

  @Test
  void readsTheIndependentWriter(@TempDir Path tmp) throws Exception {
    python("recordio_ref.py", "write", tmp.toString());
    Map<Long, byte[]> plain = new LinkedHashMap<>();
    for (String line : Files.readAllLines(tmp.resolve("plain.txt"))) {
      String[] f = line.split(" ");
      plain.put(Long.parseLong(f[0]), f[1].equals("-") ? new byte[0] : HexFormat.of().parseHex(f[1]));
    }
    try (RecordIO r = RecordIO.open(tmp.resolve("plain.rec").toString(),
        tmp.resolve("plain.idx").toString())) {
      for (byte[] want : plain.values()) assertArrayEquals(want, r.read());
      assertNull(r.read());
      for (Map.Entry<Long, byte[]> e : plain.entrySet()) {
        assertArrayEquals(e.getValue(), r.read(e.getKey()), "key " + e.getKey());
      }
    }
    try (RecordIO r = RecordIO.open(tmp.resolve("images.rec").toString(),
        tmp.resolve("images.idx").toString())) {
      for (String line : Files.readAllLines(tmp.resolve("images.txt"))) {
        String[] halves = line.split(" \\| ");
        String[] f = halves[0].split(" ");
        ImageRecord u = ImageRecord.unpack(r.read(Long.parseLong(f[0])));
        float[] want = new float[f.length - 4];
        for (int i = 0; i < want.length; i++) want[i] = Float.parseFloat(f[4 + i]);
        assertArrayEquals(want, u.labels(), line);
        assertEquals(Long.parseUnsignedLong(f[2]), u.id());
        assertEquals(Long.parseUnsignedLong(f[3]), u.id2());
        assertArrayEquals(HexFormat.of().parseHex(halves[1]), u.image());
        try (NDArray a = Image.decode(u.image(), 3, DType.UINT8)) {
          assertEquals(3, a.shape()[0]);
        }
      }
    }
  }

  @Test
  void decodesAsPilDoes(@TempDir Path tmp) throws Exception {
    python("image_ref.py", "write", tmp.toString());
    for (String line : Files.readAllLines(tmp.resolve("cases.txt"))) {
      String[] f = line.split(" ");
      int h = Integer.parseInt(f[2]), w = Integer.parseInt(f[3]);
      byte[] file = Files.readAllBytes(tmp.resolve(f[1]));
      for (int c : new int[] {1, 3}) {
        byte[] hwc = Files.readAllBytes(tmp.resolve(f[0] + "." + c + ".raw"));
        try (NDArray u8 = Image.decode(file, c, DType.UINT8);
            NDArray f32 = Image.decode(file, c, DType.FLOAT32)) {
          assertArrayEquals(new long[] {c, h, w}, u8.shape(), line);
          byte[] chw = u8.toByteArray();
          float[] fl = f32.toFloatArray();
          for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
              for (int k = 0; k < c; k++) {
                int at = (k * h + y) * w + x, want = hwc[(y * w + x) * c + k] & 0xff;
                assertEquals(want, chw[at] & 0xff, f[0] + " c=" + c + " at " + at);
                assertEquals(want, fl[at], f[0] + " float32 at " + at);
              }
            }
          }
        }
      }
    }
    byte[] png = Files.readAllBytes(tmp.resolve("png_rgb.png"));
    MxcException e = assertThrows(MxcException.class,
        () -> Image.decode(Arrays.copyOf(png, png.length / 2), 3, DType.UINT8));
    assertEquals(MxcException.IO, e.code());
    e = assertThrows(MxcException.class, () -> Image.decode(png, 2, DType.UINT8));
    assertEquals(MxcException.INVALID_ARGUMENT, e.code());
  }

  static float[] floats(Path p) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(p)).order(ByteOrder.LITTLE_ENDIAN);
    float[] v = new float[b.remaining() / 4];
    b.asFloatBuffer().get(v);
    return v;
  }

  @Test
  void imageIterMatchesTheNumpyReference(@TempDir Path tmp) throws Exception {
    python("image_iter_ref.py", "make", tmp.toString());
    String rec = tmp.resolve("images.rec").toString();
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("data_shape", new int[] {3, 10, 12});
    p.put("batch_size", 5);
    p.put("shuffle", true);
    p.put("seed", 11);
    p.put("mean_r", 120.5);
    p.put("std_g", 50);
    p.put("scale", 0.5);
    List<String> ref = new ArrayList<>(List.of(rec, tmp.resolve("ref").toString(), "epoch=0",
        "data_shape=(3,10,12)", "batch_size=5", "shuffle=1", "seed=11", "mean_r=120.5",
        "std_g=50", "scale=0.5"));
    python("image_iter_ref.py", concat(List.of("batches"), ref));
    float[] wantData = floats(tmp.resolve("ref.data")), wantLabel = floats(tmp.resolve("ref.label"));
    long[] wantPad = Arrays.stream(Files.readString(tmp.resolve("ref.pad")).trim().split(" "))
        .mapToLong(Long::parseLong).toArray();
    p.put("path_imgrec", rec);
    p.put("preprocess_threads", 2);
    try (DataIter it = DataIter.imageRecord(p)) {
      assertEquals(23, it.numExamples());
      int batches = 0, at = 0;
      while (it.next()) {
        try (NDArray d = it.data(); NDArray l = it.label()) {
          assertArrayEquals(new long[] {5, 3, 10, 12}, d.shape());
          assertArrayEquals(new long[] {5}, l.shape());
          float[] got = d.toFloatArray(), lab = l.toFloatArray();
          for (int i = 0; i < got.length; i++) {
            assertEquals(wantData[at * 360 + i], got[i], 1e-4, "batch " + batches + " value " + i);
          }
          assertArrayEquals(Arrays.copyOfRange(wantLabel, at, at + 5), lab, "labels");
          assertEquals(wantPad[batches], it.pad());
        }
        batches++;
        at += 5;
      }
      assertEquals(wantPad.length, batches);
      assertEquals(2, wantPad[batches - 1], "23 records in batches of 5: the last is padded by 2");
    }
    // Records 3, 7, ... hold two labels, the others one: label_width 2
    // fails the next that reaches a one-label record, naming the file.
    p.put("label_width", 2);
    p.put("shuffle", false);
    try (DataIter it = DataIter.imageRecord(p)) {
      MxcException e = assertThrows(MxcException.class, () -> {
        while (it.next()) it.label().close();
      });
      assertEquals(MxcException.IO, e.code());
      assertTrue(e.getMessage().contains("images.rec"), e.getMessage());
    }
    p.put("no_such_parameter", 1);
    MxcException e = assertThrows(MxcException.class, () -> DataIter.imageRecord(p));
    assertEquals(MxcException.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("no_such_parameter"), e.getMessage());
  }

  /** The labels of one epoch, without the padding rows pad() reports. */
  static List<Float> epochLabels(DataIter it) {
    List<Float> got = new ArrayList<>();
    while (it.next()) {
      try (NDArray l = it.label()) {
        float[] lab = l.toFloatArray();
        for (int i = 0; i < lab.length - it.pad(); i++) got.add(lab[i]);
      }
    }
    return got;
  }

  /**
   * setParts: the 3 parts of image_iter_ref.py's 23 records (record i has
   * label i) hold, together, the unsharded epoch's labels exactly once.
   * round_batch stays on (off would drop each part's short last batch):
   * the padding rows are left out through pad().
   */
  @Test
  void partsTogetherHoldTheEpochOnce(@TempDir Path tmp) throws Exception {
    python("image_iter_ref.py", "make", tmp.toString());
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("path_imgrec", tmp.resolve("images.rec").toString());
    p.put("data_shape", new int[] {3, 10, 12});
    p.put("batch_size", 4);
    p.put("shuffle", true);
    p.put("seed", 7);
    try (DataIter it = DataIter.imageRecord(p)) {
      List<Float> whole = epochLabels(it), parts = new ArrayList<>();
      for (int k = 0; k < 3; k++) {
        it.reset();
        it.setParts(3, k);
        long lo = 23 * k / 3, hi = 23 * (k + 1) / 3;
        assertEquals(hi - lo, it.numExamples(), "part " + k);
        List<Float> part = epochLabels(it);
        part.sort(null);
        for (int i = 0; i < part.size(); i++) {
          assertEquals((float) (lo + i), part.get(i).floatValue(), "part " + k);
        }
        parts.addAll(part);
      }
      whole.sort(null);
      parts.sort(null);
      assertEquals(23, whole.size());
      assertEquals(whole, parts);
      it.reset();
      assertTrue(it.next());
      MxcException e = assertThrows(MxcException.class, () -> it.setParts(3, 0));
      assertEquals(MxcException.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("mxc_data_iter_set_parts"), e.getMessage());
      assertEquals(23 - 23 * 2 / 3, it.numExamples(), "the part stays as it was");
      it.reset();
      e = assertThrows(MxcException.class, () -> it.setParts(3, 3));
      assertEquals(MxcException.INVALID_ARGUMENT, e.code());
    }
  }

  static String[] concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all.toArray(new String[0]);
  }

  @Test
  void damagedFilesNameTheFileAndOffset(@TempDir Path tmp) throws IOException {
    Path rec = tmp.resolve("d.rec");
    long second;
    try (RecordIO w = RecordIO.create(rec.toString(), null)) {
      w.write(pattern(10, 1));
      second = w.tell();
      w.write(pattern(20, 2));
      w.write(pattern(30, 3));
    }
    byte[] whole = Files.readAllBytes(rec);
    Path cut = tmp.resolve("cut.rec");
    Files.write(cut, Arrays.copyOf(whole, whole.length - 5));
    try (RecordIO r = RecordIO.open(cut.toString(), null)) {
      assertArrayEquals(pattern(10, 1), r.read());
      assertArrayEquals(pattern(20, 2), r.read());
      MxcException e = assertThrows(MxcException.class, r::read);
      assertEquals(MxcException.IO, e.code());
      assertTrue(e.getMessage().contains(cut.toString()) && e.getMessage().contains("truncated")
          && e.getMessage().contains("byte "), e.getMessage());
    }
    byte[] bad = whole.clone();
    bad[(int) second] ^= 0x55;
    Path corrupt = tmp.resolve("corrupt.rec");
    Files.write(corrupt, bad);
    try (RecordIO r = RecordIO.open(corrupt.toString(), null)) {
      r.read();
      MxcException e = assertThrows(MxcException.class, r::read);
      assertEquals(MxcException.IO, e.code());
      assertTrue(e.getMessage().contains(corrupt.toString())
          && e.getMessage().contains("at byte " + second), e.getMessage());
    }
    Path idx = tmp.resolve("d.idx");
    Files.writeString(idx, "0\t0\n1\tnot-a-number\n");
    MxcException e = assertThrows(MxcException.class,
        () -> RecordIO.open(rec.toString(), idx.toString()));
    assertEquals(MxcException.IO, e.code());
    assertTrue(e.getMessage().contains(idx.toString()), e.getMessage());
    e = assertThrows(MxcException.class, () -> RecordIO.open(tmp.resolve("none.rec").toString(), null));
    assertEquals(MxcException.IO, e.code());
    RecordIO r = RecordIO.open(rec.toString(), null);
    r.close();
    r.close();
    e = assertThrows(MxcException.class, r::read);
    assertEquals(MxcException.INVALID_HANDLE, e.code());
    try (RecordIO w = RecordIO.open(rec.toString(), null)) {
      e = assertThrows(MxcException.class, () -> w.write(new byte[1]));
      assertEquals(MxcException.INVALID_ARGUMENT, e.code());
    }
  }
}
