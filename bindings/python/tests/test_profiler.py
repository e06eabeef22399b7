"""The profiler from Python: a run's trace parses as JSON and holds the
operator, the scope and the marker; statistics count the calls made."""
import json
import os
import tempfile
import unittest

import numpy as np

import mxc
from mxc import profiler


class ProfilerTest(unittest.TestCase):
    def tearDown(self):
        profiler.stop()

    def test_trace_and_stats(self):
        profiler.stop()
        profiler.set_config(profile_all=True, profile_engine=False)
        profiler.start()
        self.assertEqual(profiler.state(), profiler.RUN)
        a = mxc.array(np.ones((4, 5), np.float32))
        with profiler.scope("py scope"):
            for _ in range(3):
                b = mxc.op.relu(a)
        profiler.mark("py mark")
        profiler.counter("py counter", 7)
        mxc.wait_all()
        np.testing.assert_array_equal(b.asnumpy(), np.ones((4, 5)))
        trace = json.loads(profiler.dumps())
        events = trace["traceEvents"]
        relu = [e for e in events
                if e.get("cat") == "operator" and e["name"] == "relu"]
        self.assertEqual(len(relu), 3)
        self.assertEqual(relu[0]["args"]["shapes"], "(4,5) -> (4,5)")
        names = {e["name"] for e in events if e.get("cat") == "user"}
        self.assertEqual(names, {"py scope", "py mark", "py counter"})
        st = profiler.stats(as_json=True)
        self.assertEqual(st["spans"]["operator"]["relu"]["calls"], 3)
        self.assertIn("relu", profiler.stats())
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.json")
            profiler.set_config(filename=path)
            profiler.dump()
            with open(path, encoding="utf-8") as f:
                self.assertIn("traceEvents", json.load(f))
        self.assertEqual(profiler.state(), profiler.STOP)

    def test_bad_key_raises(self):
        with self.assertRaises(mxc.MxcError) as cm:
            profiler.set_config(no_such_key=True)
        self.assertIn("no_such_key", str(cm.exception))
        with self.assertRaises(mxc.MxcError):
            profiler.set_state(7)


if __name__ == "__main__":
    unittest.main()
