package org.mxc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The profiler from Java: the trace is valid JSON with the run's events. */
class ProfilerTest {
  /** A small strict JSON parser (the JDK has none): objects, arrays,
   * strings, numbers, true/false/null; throws on anything else. */
  static final class Json {
    private final String s;
    private int i;

    Json(String s) {
      this.s = s;
    }

    static Object parse(String s) {
      Json p = new Json(s);
      Object v = p.value();
      p.ws();
      if (p.i != s.length()) throw new IllegalArgumentException("trailing text at " + p.i);
      return v;
    }

    private void ws() {
      while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
    }

    private char expect(char c) {
      ws();
      if (i >= s.length() || s.charAt(i) != c) {
        throw new IllegalArgumentException("expected '" + c + "' at " + i);
      }
      return s.charAt(i++);
    }

    private Object value() {
      ws();
      char c = s.charAt(i);
      if (c == '{') return object();
      if (c == '[') return array();
      if (c == '"') return string();
      for (String lit : new String[] {"true", "false", "null"}) {
        if (s.startsWith(lit, i)) {
          i += lit.length();
          return lit.equals("null") ? null : Boolean.valueOf(lit);
        }
      }
      int j = i;
      while (j < s.length() && "+-0123456789.eE".indexOf(s.charAt(j)) >= 0) j++;
      double d = Double.parseDouble(s.substring(i, j)); // throws on junk
      i = j;
      return d;
    }

    private Map<String, Object> object() {
      Map<String, Object> m = new LinkedHashMap<>();
      expect('{');
      ws();
      if (s.charAt(i) == '}') {
        i++;
        return m;
      }
      do {
        ws();
        String k = string();
        expect(':');
        m.put(k, value());
        ws();
      } while (s.charAt(i++) == ',');
      if (s.charAt(i - 1) != '}') throw new IllegalArgumentException("bad object at " + i);
      return m;
    }

    private List<Object> array() {
      List<Object> l = new ArrayList<>();
      expect('[');
      ws();
      if (s.charAt(i) == ']') {
        i++;
        return l;
      }
      do {
        l.add(value());
        ws();
      } while (s.charAt(i++) == ',');
      if (s.charAt(i - 1) != ']') throw new IllegalArgumentException("bad array at " + i);
      return l;
    }

    private String string() {
      expect('"');
      StringBuilder b = new StringBuilder();
      for (char c; (c = s.charAt(i++)) != '"'; ) {
        if (c < 0x20) throw new IllegalArgumentException("control char in string");
        if (c != '\\') {
          b.append(c);
          continue;
        }
        char e = s.charAt(i++);
        if (e == 'u') {
          b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
        } else {
          int k = "\"\\/bfnrt".indexOf(e);
          if (k < 0) throw new IllegalArgumentException("bad escape at " + i);
          b.append("\"\\/\b\f\n\r\t".charAt(k));
        }
      }
      return b.toString();
    }
  }

  @AfterEach
  void stop() {
    Profiler.stop();
  }

  @Test
  @SuppressWarnings("unchecked")
  void traceParsesWithTheRunsEvents() {
    Profiler.stop();
    Profiler.setConfig("profile_all", true);
    Profiler.setConfig("profile_engine", false);
    Profiler.start();
    assertEquals(Profiler.RUN, Profiler.state());
    try (NDArray a = NDArray.of(new float[] {-1, 2, -3, 4}, 2, 2)) {
      try (Profiler.Scope s = Profiler.scope("java scope")) {
        for (int k = 0; k < 3; k++) {
          try (NDArray r = Op.get("relu").call(a)) {
            r.toFloatArray();
          }
        }
      }
    }
    Profiler.mark("java mark");
    Mxc.waitAll();
    Map<String, Object> trace = (Map<String, Object>) Json.parse(Profiler.dumps());
    List<Object> events = (List<Object>) trace.get("traceEvents");
    int relu = 0, scope = 0, mark = 0;
    for (Object o : events) {
      Map<String, Object> e = (Map<String, Object>) o;
      if ("relu".equals(e.get("name")) && "operator".equals(e.get("cat"))) relu++;
      if ("java scope".equals(e.get("name"))) scope++;
      if ("java mark".equals(e.get("name"))) mark++;
    }
    assertEquals(3, relu);
    assertEquals(1, scope);
    assertEquals(1, mark);
    Map<String, Object> stats = (Map<String, Object>) Json.parse(Profiler.stats(true, false));
    Map<String, Object> spans = (Map<String, Object>) stats.get("spans");
    Map<String, Object> ops = (Map<String, Object>) spans.get("operator");
    assertEquals(3.0, ((Map<String, Object>) ops.get("relu")).get("calls"));
    assertTrue(Profiler.stats(false, true).contains("relu"));
  }

  @Test
  void badConfigThrows() {
    MxcException e =
        assertThrows(MxcException.class, () -> Profiler.setConfig("no_such_key", true));
    assertTrue(e.getMessage().contains("no_such_key"));
    assertThrows(MxcException.class, () -> Profiler.setState(9));
  }
}
