#!/usr/bin/env python3
"""Checks a trace written by mxc's profiler with Python's own JSON parser:
the Chrome trace event format's required fields for each phase, spans
properly nested on every (pid, tid) track, a thread_name for every track
(engine workers named so), and the aggregate statistics recomputed here
from the spans. Usage: check_trace.py TRACE.json [STATS.json]"""
import collections
import json
import sys

REQUIRED = {
    "X": ("name", "cat", "ts", "dur", "pid", "tid"),
    "B": ("name", "cat", "ts", "pid", "tid"),
    "E": ("ts", "pid", "tid"),
    "i": ("name", "cat", "ts", "pid", "tid", "s"),
    "C": ("name", "cat", "ts", "pid", "args"),
    "M": ("name", "pid", "args"),
}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check_fields(events):
    for ev in events:
        ph = ev.get("ph")
        if ph not in REQUIRED:
            fail("unknown phase %r in %r" % (ph, ev))
        for key in REQUIRED[ph]:
            if key not in ev:
                fail("%s event lacks %r: %r" % (ph, key, ev))
        if ph in "XBEiC" and not isinstance(ev["ts"], (int, float)):
            fail("ts is not a number: %r" % ev)
        if ph == "X" and ev["dur"] < 0:
            fail("negative duration: %r" % ev)
        if ph == "C":
            for v in ev["args"].values():
                if not isinstance(v, (int, float)):
                    fail("counter value is not a number: %r" % ev)


def spans_by_track(events):
    """(begin, end, name) per (pid, tid), from X events and B/E pairs."""
    tracks = collections.defaultdict(list)
    open_b = collections.defaultdict(list)
    for ev in sorted((e for e in events if e["ph"] in "XBE"),
                     key=lambda e: e["ts"]):
        key = (ev["pid"], ev["tid"])
        if ev["ph"] == "X":
            tracks[key].append((ev["ts"], ev["ts"] + ev["dur"], ev["name"]))
        elif ev["ph"] == "B":
            open_b[key].append(ev)
        else:
            if not open_b[key]:
                fail("E without B on track %r" % (key,))
            b = open_b[key].pop()
            tracks[key].append((b["ts"], ev["ts"], b["name"]))
    for key, rest in open_b.items():
        if rest:
            fail("B without E on track %r" % (key,))
    return tracks


def check_nesting(tracks):
    """Spans of one track nest: each starts after, and ends before, the
    enclosing one ends; none overlaps another partially. Timestamps are
    exact (integer ns printed as us with three decimals)."""
    for key, spans in tracks.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for b, e, name in spans:
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack and e > stack[-1][1]:
                fail("track %r: %r [%s, %s] overlaps %r [%s, %s] partially"
                     % (key, name, b, e, stack[-1][2], stack[-1][0],
                        stack[-1][1]))
            stack.append((b, e, name))


def check_tracks(events):
    named = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    for e in events:
        if e["ph"] in "XBEi" and (e["pid"], e["tid"]) not in named:
            fail("track %r has no thread_name" % ((e["pid"], e["tid"]),))
    workers = [n for n in named.values() if n.startswith("engine cpu worker")]
    return named, len(workers)


def check_stats(events, stats):
    """The statistics, recomputed from the trace's spans."""
    sums = collections.defaultdict(lambda: [0, 0])
    for e in events:
        if e["ph"] == "X":
            ns = round(e["dur"] * 1000)
            sums[(e["cat"], e["name"])][0] += 1
            sums[(e["cat"], e["name"])][1] += ns
    got = {(cat, name): (row["calls"], row["total_ns"])
           for cat, rows in stats["spans"].items()
           for name, row in rows.items()}
    want = {k: tuple(v) for k, v in sums.items()}
    if got != want:
        diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want)
                if got.get(k) != want.get(k)}
        fail("statistics differ from the trace (stats, trace): %r" % diff)
    for (cat, name), row in ((k, stats["spans"][k[0]][k[1]]) for k in got):
        if not row["min_ns"] <= row["mean_ns"] <= row["max_ns"]:
            fail("min <= mean <= max fails for %s/%s: %r" % (cat, name, row))


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    if not isinstance(events, list) or not events:
        fail("traceEvents is not a non-empty list")
    check_fields(events)
    check_nesting(spans_by_track(events))
    named, n_workers = check_tracks(events)
    n_tracks = len(named)
    cats = collections.Counter(e.get("cat") for e in events if "cat" in e)
    if len(sys.argv) > 2:
        with open(sys.argv[2], encoding="utf-8") as f:
            check_stats(events, json.load(f))
        for cat in ("operator", "executor", "engine", "wait", "copy",
                    "memory", "user"):
            if not cats[cat]:
                fail("no %s events: %r" % (cat, cats))
        busy = {(e["pid"], e["tid"]) for e in events if e["ph"] == "X"}
        if not any(named[k].startswith("engine cpu worker") for k in busy):
            fail("no engine worker track has events: %r"
                 % sorted(named.values()))
    print("ok: %d events, %d tracks (%d engine workers), %r"
          % (len(events), n_tracks, n_workers, dict(cats)))


if __name__ == "__main__":
    main()
