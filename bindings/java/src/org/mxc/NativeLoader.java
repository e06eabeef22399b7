package org.mxc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads the JNI library {@code libmxc_jni.so} once per class loader.
 *
 * <p>Tried in order: the file named by the system property {@code
 * org.mxc.jni.library}; the copy packed in the jar at {@value #RESOURCE}
 * (extracted to a temporary file that is deleted right after loading);
 * {@code System.loadLibrary("mxc_jni")} (java.library.path). The JNI
 * library itself needs {@code libmxc.so.1} from the installed mxc (found
 * by the dynamic linker: the system paths or LD_LIBRARY_PATH). When every
 * attempt fails the {@link UnsatisfiedLinkError} lists each one and why.
 *
 * <p>Thread-safe: {@link #load()} is synchronized and idempotent. Called by
 * the static initializer of the generated {@code org.mxc.swig.MxcNativeJNI},
 * so user code never needs to call it.
 */
public final class NativeLoader {
  /** Where the build packs the JNI library inside mxc.jar. */
  public static final String RESOURCE = "/native/linux-x86_64/libmxc_jni.so";

  private static boolean loaded;

  private NativeLoader() {}

  /** Loads the JNI library if this class loader has not yet; see the class doc. */
  public static synchronized void load() {
    if (loaded) return;
    List<String> tried = new ArrayList<>();
    String explicit = System.getProperty("org.mxc.jni.library");
    if (explicit != null && tryLoad(explicit, "org.mxc.jni.library=" + explicit, tried)) return;
    try (InputStream in = NativeLoader.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        tried.add("jar resource " + RESOURCE + ": not in the class path");
      } else {
        Path tmp = Files.createTempFile("libmxc_jni", ".so");
        try {
          Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
          // Once dlopen has mapped it, the file is no longer needed.
          if (tryLoad(tmp.toString(), "jar resource " + RESOURCE, tried)) return;
        } finally {
          Files.deleteIfExists(tmp);
        }
      }
    } catch (IOException e) {
      tried.add("jar resource " + RESOURCE + ": cannot extract (" + e + ")");
    }
    try {
      System.loadLibrary("mxc_jni");
      loaded = true;
      return;
    } catch (UnsatisfiedLinkError e) {
      tried.add("System.loadLibrary(\"mxc_jni\") with java.library.path="
          + System.getProperty("java.library.path") + ": " + e.getMessage());
    }
    throw new UnsatisfiedLinkError(
        "mxc: cannot load the JNI library libmxc_jni.so. It needs libmxc.so.1 from an "
            + "installed mxc (on the system library path or in LD_LIBRARY_PATH). Tried:\n  "
            + String.join("\n  ", tried));
  }

  private static boolean tryLoad(String file, String what, List<String> tried) {
    try {
      System.load(file);
      loaded = true;
      return true;
    } catch (UnsatisfiedLinkError e) {
      tried.add(what + ": " + e.getMessage());
      return false;
    }
  }
}
