package mxc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// RecordIO, image records, image decoding and the image record iterator:
// records written here and read back; files of the repository's
// independent scripts (scripts/recordio_ref.py, image_ref.py,
// image_iter_ref.py: Debian's python3 with numpy and PIL) read here and
// compared with what the scripts say they hold; damaged files.

// magic is 0xced7230a as it sits in a file (little-endian).
var magic = []byte{0x0a, 0x23, 0xd7, 0xce}

func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + seed*7)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// testRecords: lengths around the 4-byte padding, the magic at aligned
// and unaligned offsets.
func testRecords() [][]byte {
	var r [][]byte
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 13, 4099} {
		r = append(r, pattern(n, n))
	}
	return append(r, magic, cat(magic, magic), cat([]byte("head"), magic, []byte("tail")),
		cat([]byte("ab"), magic, []byte("cd")),
		cat(pattern(8, 1), magic, []byte("x"), magic, magic, []byte("yz")))
}

func mustRead(t *testing.T, r *RecordIO, what string, want []byte) {
	t.Helper()
	got, err := r.Read()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s: Read = %x, %v; want %x", what, got, err, want)
	}
}

func TestRecordIOWriteReadByKey(t *testing.T) {
	dir := t.TempDir()
	rec, idx := filepath.Join(dir, "a.rec"), filepath.Join(dir, "a.idx")
	recs := testRecords()
	keys := make([]int64, len(recs))
	w, err := CreateRecordIO(rec, idx)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range recs {
		keys[i] = 1000 + 3*int64(i)
		if err := w.WriteKey(keys[i], b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRecordIO(rec, idx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := r.Keys(); err != nil || fmt.Sprint(got) != fmt.Sprint(keys) {
		t.Fatalf("Keys = %v, %v", got, err)
	}
	for i, b := range recs {
		mustRead(t, r, fmt.Sprint("record ", i), b)
	}
	if b, err := r.Read(); err != io.EOF || b != nil {
		t.Fatalf("Read at the end = %x, %v; want io.EOF", b, err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		got, err := r.ReadKey(keys[i])
		if err != nil || !bytes.Equal(got, recs[i]) {
			t.Fatalf("ReadKey(%d) = %x, %v", keys[i], got, err)
		}
	}
	mustRead(t, r, "after ReadKey", recs[1])
	pos, err := r.Tell()
	if err != nil {
		t.Fatal(err)
	}
	mustRead(t, r, "record 2", recs[2])
	if err := r.SeekTo(pos); err != nil {
		t.Fatal(err)
	}
	mustRead(t, r, "after SeekTo", recs[2])
	_, err = r.ReadKey(7)
	wantErr(t, "unknown key", err, ErrNotFound)

	plain := filepath.Join(dir, "b.rec")
	w, err = CreateRecordIO(plain, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range recs {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write([]byte{1}); err != nil || w.Close() != nil || w.Close() != nil {
		t.Fatalf("write/close: %v", err)
	}
	r2, err := OpenRecordIO(plain, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range append(recs, []byte{1}) {
		mustRead(t, r2, fmt.Sprint("unindexed ", i), b)
	}
	r2.Close()
	_, err = r2.Read()
	wantErr(t, "after Close", err, ErrInvalidHandle)
	err = w.Write([]byte{2})
	wantErr(t, "write after Close", err, ErrInvalidHandle)
}

func TestImageRecordHeader(t *testing.T) {
	labels := []float32{1.5, -2, 3.25}
	id, id2 := uint64(1)<<40+7, uint64(math.MaxUint64-1)
	img := cat(pattern(9, 3), magic)
	packed, err := PackImageRecord(labels, id, id2, img)
	if err != nil {
		t.Fatal(err)
	}
	// The layout, read here without mxc.
	le := binary.LittleEndian
	if len(packed) != 24+12+len(img) || le.Uint32(packed) != 3 ||
		le.Uint64(packed[8:]) != id || le.Uint64(packed[16:]) != id2 ||
		math.Float32frombits(le.Uint32(packed[28:])) != -2 || !bytes.Equal(packed[36:], img) {
		t.Fatalf("packed layout: %x", packed)
	}
	one, err := PackImageRecord([]float32{4}, 9, 0, img)
	if err != nil || len(one) != 24+len(img) || le.Uint32(one) != 0 ||
		math.Float32frombits(le.Uint32(one[4:])) != 4 {
		t.Fatalf("one label: %x, %v (want flag 0, the label in the header)", one, err)
	}
	dir := t.TempDir()
	rec, idx := filepath.Join(dir, "i.rec"), filepath.Join(dir, "i.idx")
	w, err := CreateRecordIO(rec, idx)
	if err != nil {
		t.Fatal(err)
	}
	if w.WriteKey(5, packed) != nil || w.WriteKey(6, one) != nil || w.Close() != nil {
		t.Fatal("writing image records failed")
	}
	r, err := OpenRecordIO(rec, idx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		key     int64
		labels  []float32
		id, id2 uint64
	}{{5, labels, id, id2}, {6, []float32{4}, 9, 0}} {
		b, err := r.ReadKey(c.key)
		if err != nil {
			t.Fatal(err)
		}
		u, err := UnpackImageRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(u.Labels) != fmt.Sprint(c.labels) || u.ID != c.id || u.ID2 != c.id2 ||
			!bytes.Equal(u.Image, img) {
			t.Fatalf("key %d: unpacked %+v", c.key, u)
		}
	}
	_, err = UnpackImageRecord(make([]byte, 10))
	wantErr(t, "short record", err, ErrIO, "24-byte header")
}

// python runs /usr/bin/python3 scripts/NAME ARGS, skipping the test
// without numpy and PIL.
func python(t *testing.T, name string, args ...string) {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy, PIL").Run(); err != nil {
		t.Skipf("SKIP: needs %s with numpy and PIL (Debian: python3-numpy python3-pil): %v", py, err)
	}
	cmd := exec.Command(py, append([]string{runfile("scripts/" + name)}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestRecordIOReadsTheIndependentWriter(t *testing.T) {
	dir := t.TempDir()
	python(t, "recordio_ref.py", "write", dir)
	r, err := OpenRecordIO(filepath.Join(dir, "plain.rec"), filepath.Join(dir, "plain.idx"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := map[int64][]byte{}
	for i, line := range readLines(t, filepath.Join(dir, "plain.txt")) {
		f := strings.Fields(line)
		b, _ := hex.DecodeString(strings.TrimPrefix(f[1], "-"))
		key, _ := strconv.ParseInt(f[0], 10, 64)
		want[key] = b
		mustRead(t, r, fmt.Sprint("plain record ", i), b)
	}
	for key, b := range want {
		if got, err := r.ReadKey(key); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("ReadKey(%d) = %x, %v; want %x", key, got, err, b)
		}
	}
	ri, err := OpenRecordIO(filepath.Join(dir, "images.rec"), filepath.Join(dir, "images.idx"))
	if err != nil {
		t.Fatal(err)
	}
	defer ri.Close()
	for _, line := range readLines(t, filepath.Join(dir, "images.txt")) {
		halves := strings.Split(line, " | ")
		f := strings.Fields(halves[0])
		key, _ := strconv.ParseInt(f[0], 10, 64)
		b, err := ri.ReadKey(key)
		if err != nil {
			t.Fatal(err)
		}
		u, err := UnpackImageRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, v := range u.Labels {
			labels = append(labels, strconv.FormatFloat(float64(v), 'g', -1, 32))
		}
		payload, _ := hex.DecodeString(halves[1])
		if fmt.Sprint(u.ID) != f[2] || fmt.Sprint(u.ID2) != f[3] || !bytes.Equal(u.Image, payload) ||
			!sameFloats(labels, f[4:]) {
			t.Fatalf("image record %d: %v / %v, want %q", key, u.Labels, u.ID, halves[0])
		}
		a, err := DecodeImage(u.Image, 3, Uint8)
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := a.Shape(); len(s) != 3 || s[0] != 3 {
			t.Fatalf("decoded shape %v", s)
		}
		a.Close()
	}
}

// sameFloats compares float32 values written by Go with Python's repr.
func sameFloats(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		a, _ := strconv.ParseFloat(got[i], 32)
		b, _ := strconv.ParseFloat(want[i], 32)
		if float32(a) != float32(b) {
			return false
		}
	}
	return true
}

func TestDecodeImageAsPIL(t *testing.T) {
	dir := t.TempDir()
	python(t, "image_ref.py", "write", dir)
	for _, line := range readLines(t, filepath.Join(dir, "cases.txt")) {
		f := strings.Fields(line)
		h, _ := strconv.Atoi(f[2])
		w, _ := strconv.Atoi(f[3])
		file, err := os.ReadFile(filepath.Join(dir, f[1]))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []int{1, 3} {
			hwc, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s.%d.raw", f[0], c)))
			if err != nil {
				t.Fatal(err)
			}
			u8, err := DecodeImage(file, c, Uint8)
			if err != nil {
				t.Fatal(err)
			}
			f32, err := DecodeImage(file, c, Float32)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := u8.Shape()
			chw, _ := ToSlice[uint8](u8)
			fl, _ := f32.Float32s()
			u8.Close()
			f32.Close()
			if fmt.Sprint(s) != fmt.Sprint([]int64{int64(c), int64(h), int64(w)}) {
				t.Fatalf("%s: shape %v", f[0], s)
			}
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					for k := 0; k < c; k++ {
						at, want := (k*h+y)*w+x, hwc[(y*w+x)*c+k]
						if chw[at] != want || fl[at] != float32(want) {
							t.Fatalf("%s c=%d at %d: %d / %v, PIL %d", f[0], c, at, chw[at], fl[at], want)
						}
					}
				}
			}
		}
	}
	png, err := os.ReadFile(filepath.Join(dir, "png_rgb.png"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecodeImage(png[:len(png)/2], 3, Uint8)
	wantErr(t, "truncated PNG", err, ErrIO)
	_, err = DecodeImage(png, 2, Uint8)
	wantErr(t, "2 channels", err, ErrInvalidArgument)
}

func TestImageRecordIterMatchesTheNumpyReference(t *testing.T) {
	dir := t.TempDir()
	python(t, "image_iter_ref.py", "make", dir)
	rec := filepath.Join(dir, "images.rec")
	params := map[string]string{"data_shape": "(3,10,12)", "batch_size": "5",
		"shuffle": "1", "seed": "11", "mean_r": "120.5", "std_g": "50", "scale": "0.5"}
	args := []string{"batches", rec, filepath.Join(dir, "ref"), "epoch=0"}
	for k, v := range params {
		args = append(args, k+"="+v)
	}
	python(t, "image_iter_ref.py", args...)
	wantData := readF32(t, filepath.Join(dir, "ref.data"))
	wantLabel := readF32(t, filepath.Join(dir, "ref.label"))
	wantPad := strings.Fields(readLines(t, filepath.Join(dir, "ref.pad"))[0])
	params["path_imgrec"] = rec
	params["preprocess_threads"] = "2"
	it, err := NewImageRecordIter(params)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if n, err := it.NumExamples(); n != 23 || err != nil {
		t.Fatalf("NumExamples = %d, %v", n, err)
	}
	batches := 0
	for ; ; batches++ {
		has, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !has {
			break
		}
		d, err := it.Data()
		if err != nil {
			t.Fatal(err)
		}
		l, err := it.Label()
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := d.Shape(); fmt.Sprint(s) != "[5 3 10 12]" {
			t.Fatalf("data shape %v", s)
		}
		if s, _ := l.Shape(); fmt.Sprint(s) != "[5]" {
			t.Fatalf("label shape %v", s)
		}
		checkF32(t, fmt.Sprint("batch ", batches), d, wantData[batches*1800:(batches+1)*1800], 1e-5)
		checkF32(t, fmt.Sprint("labels ", batches), l, wantLabel[batches*5:(batches+1)*5], 0)
		d.Close()
		l.Close()
		if pad, err := it.Pad(); err != nil || fmt.Sprint(pad) != wantPad[batches] {
			t.Fatalf("batch %d: pad %d, %v; want %s", batches, pad, err, wantPad[batches])
		}
	}
	if batches != len(wantPad) || wantPad[batches-1] != "2" {
		t.Fatalf("%d batches, pads %v: want 5 with the last padded by 2", batches, wantPad)
	}
	// Records 3, 7, ... hold two labels, the others one: label_width 2
	// fails the Next that reaches a one-label record, naming the file.
	params["label_width"] = "2"
	params["shuffle"] = "0"
	it2, err := NewImageRecordIter(params)
	if err != nil {
		t.Fatal(err)
	}
	defer it2.Close()
	for err == nil {
		var has bool
		if has, err = it2.Next(); !has && err == nil {
			t.Fatal("label_width 2 read a whole epoch")
		}
	}
	wantErr(t, "label_width 2", err, ErrIO, "images.rec")
	params["no_such_parameter"] = "1"
	_, err = NewImageRecordIter(params)
	wantErr(t, "unknown parameter", err, ErrInvalidArgument, "no_such_parameter")
}

// epochLabels reads one epoch's labels, leaving out the padding rows Pad
// reports.
func epochLabels(t *testing.T, it *DataIter) []float64 {
	t.Helper()
	var got []float64
	for {
		has, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !has {
			return got
		}
		l, err := it.Label()
		if err != nil {
			t.Fatal(err)
		}
		lab, err := l.Float32s()
		l.Close()
		pad, err2 := it.Pad()
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		for _, v := range lab[:int64(len(lab))-pad] {
			got = append(got, float64(v))
		}
	}
}

// SetParts: the 3 parts of image_iter_ref.py's 23 records (record i has
// label i) hold, together, the unsharded epoch's labels exactly once.
// round_batch stays on (off would drop each part's short last batch): the
// padding rows are left out through Pad.
func TestImageRecordIterPartsHoldTheEpochOnce(t *testing.T) {
	dir := t.TempDir()
	python(t, "image_iter_ref.py", "make", dir)
	it, err := NewImageRecordIter(map[string]string{
		"path_imgrec": filepath.Join(dir, "images.rec"), "data_shape": "(3,10,12)",
		"batch_size": "4", "shuffle": "1", "seed": "7"})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	whole := epochLabels(t, it)
	var parts []float64
	for k := int64(0); k < 3; k++ {
		if err := it.Reset(); err != nil {
			t.Fatal(err)
		}
		if err := it.SetParts(3, k); err != nil {
			t.Fatal(err)
		}
		lo, hi := 23*k/3, 23*(k+1)/3
		if n, err := it.NumExamples(); n != hi-lo || err != nil {
			t.Fatalf("part %d: NumExamples = %d, %v; want %d", k, n, err, hi-lo)
		}
		part := epochLabels(t, it)
		sort.Float64s(part)
		for i, v := range part {
			if v != float64(lo+int64(i)) {
				t.Fatalf("part %d: labels %v, want %d..%d", k, part, lo, hi-1)
			}
		}
		parts = append(parts, part...)
	}
	sort.Float64s(whole)
	sort.Float64s(parts)
	if len(whole) != 23 || fmt.Sprint(parts) != fmt.Sprint(whole) {
		t.Fatalf("parts %v, want the unsharded epoch's %v", parts, whole)
	}
	if err := it.Reset(); err != nil {
		t.Fatal(err)
	}
	if has, err := it.Next(); !has || err != nil {
		t.Fatalf("Next = %v, %v", has, err)
	}
	wantErr(t, "SetParts after Next", it.SetParts(3, 0), ErrInvalidArgument,
		"mxc_data_iter_set_parts")
	if n, err := it.NumExamples(); n != 23-23*2/3 || err != nil {
		t.Fatalf("after the failed SetParts: NumExamples = %d, %v; the part should stay", n, err)
	}
	if err := it.Reset(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "SetParts(3, 3)", it.SetParts(3, 3), ErrInvalidArgument)
}

func TestRecordIODamagedFiles(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "d.rec")
	w, err := CreateRecordIO(rec, "")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(pattern(10, 1))
	second, _ := w.Tell()
	w.Write(pattern(20, 2))
	w.Write(pattern(30, 3))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.rec")
	os.WriteFile(cut, whole[:len(whole)-5], 0o644)
	r, err := OpenRecordIO(cut, "")
	if err != nil {
		t.Fatal(err)
	}
	mustRead(t, r, "first", pattern(10, 1))
	mustRead(t, r, "second", pattern(20, 2))
	_, err = r.Read()
	wantErr(t, "truncated", err, ErrIO, cut, "truncated", "byte ")
	r.Close()

	bad := append([]byte(nil), whole...)
	bad[second] ^= 0x55
	corrupt := filepath.Join(dir, "corrupt.rec")
	os.WriteFile(corrupt, bad, 0o644)
	r, err = OpenRecordIO(corrupt, "")
	if err != nil {
		t.Fatal(err)
	}
	mustRead(t, r, "first", pattern(10, 1))
	_, err = r.Read()
	wantErr(t, "bad magic", err, ErrIO, corrupt, fmt.Sprint("at byte ", second))
	r.Close()

	idx := filepath.Join(dir, "d.idx")
	os.WriteFile(idx, []byte("0\t0\n1\tnot-a-number\n"), 0o644)
	_, err = OpenRecordIO(rec, idx)
	wantErr(t, "bad index", err, ErrIO, idx)
	_, err = OpenRecordIO(filepath.Join(dir, "none.rec"), "")
	wantErr(t, "missing file", err, ErrIO)
	_, err = OpenRecordIO(rec, "a\x00b")
	wantErr(t, "NUL in a path", err, ErrInvalidArgument, "NUL")
	r, err = OpenRecordIO(rec, "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = r.Write([]byte{1})
	wantErr(t, "write to a reader", err, ErrInvalidArgument)
	var e *Error
	if _, err := r.ReadKey(0); !errors.As(err, &e) {
		t.Fatalf("ReadKey without an index: %v", err)
	}
}
