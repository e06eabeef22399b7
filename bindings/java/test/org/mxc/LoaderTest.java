package org.mxc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Loading libmxc_jni.so from the jar, and the error when libmxc.so.1 is missing. */
class LoaderTest {
  /** Run in a child JVM: prints the version, or the loader's error. */
  public static final class Probe {
    public static void main(String[] args) {
      try {
        System.out.println("version " + Mxc.versionString());
      } catch (UnsatisfiedLinkError e) {
        System.out.println("error " + e.getMessage());
      }
    }
  }

  static String run(boolean withLibraryPath) throws Exception {
    String cp = path(NDArray.class) + File.pathSeparator + path(Probe.class);
    ProcessBuilder pb = new ProcessBuilder(
        Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
        "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"), "-cp", cp,
        Probe.class.getName());
    if (!withLibraryPath) pb.environment().remove("LD_LIBRARY_PATH");
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    return out.trim();
  }

  static String path(Class<?> c) throws Exception {
    return Paths.get(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
  }

  @Test
  void loadsFromTheJar() throws Exception {
    assertEquals("version " + Mxc.versionString(), run(true));
  }

  @Test
  void missingLibmxcIsAClearError() throws Exception {
    String out = run(false);
    // Where mxc is installed system-wide the load succeeds; otherwise the
    // message must say what was tried and that libmxc.so.1 is needed.
    if (!out.startsWith("version")) {
      assertTrue(out.contains("libmxc.so.1"), out);
      assertTrue(out.contains("jar resource"), out);
      assertTrue(out.contains("java.library.path"), out);
    }
  }
}
