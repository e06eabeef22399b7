package mxc

import (
	"io"
	"runtime"
	"sync"

	"mxc.dev/mxc/internal/cmxc"
)

// RecordIO is a RecordIO file (MXNet's .rec, as im2rec writes it) open for
// reading or writing, with its .idx index when one is named. Records are
// byte slices; mxc does the framing (the magic word, continuation flags,
// padding).
//
// A damaged or truncated file is an ErrIO naming the file and the byte
// offset. Ownership: Close flushes a writer and frees the handle; a
// finalizer frees it otherwise (without reporting write errors: Close or
// Flush writers). Records returned belong to the caller. Thread-safety:
// methods are serialized by a mutex (the file has a cursor).
type RecordIO struct {
	mu sync.Mutex
	h  uintptr // the mxc_recordio; 0 once closed
}

// OpenRecordIO opens path for reading; idxPath ("" for none) is the index
// that ReadKey needs.
func OpenRecordIO(path, idxPath string) (*RecordIO, error) {
	return openRecordIO(path, idxPath, "r")
}

// CreateRecordIO creates (or truncates) path for writing, and idxPath
// ("" for none) for the index lines of WriteKey.
func CreateRecordIO(path, idxPath string) (*RecordIO, error) {
	return openRecordIO(path, idxPath, "w")
}

func openRecordIO(path, idxPath, mode string) (*RecordIO, error) {
	if err := cstr("path", path); err != nil {
		return nil, err
	}
	if err := cstr("index path", idxPath); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := cmxc.Recordio_open(path, idxPath, mode)
	if h == nil || h.Swigcptr() == 0 {
		return nil, lastError()
	}
	r := &RecordIO{h: h.Swigcptr()}
	runtime.SetFinalizer(r, (*RecordIO).Close)
	return r, nil
}

// Close flushes a writer and frees the handle, also when the flush fails
// (then the flush's error is returned). Idempotent.
func (r *RecordIO) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.h == 0 {
		return nil
	}
	h := cmxc.SwigcptrRecordIOHandle(r.h)
	r.h = 0
	runtime.SetFinalizer(r, nil)
	err := call(func() { cmxc.Recordio_flush(h) })
	cmxc.Recordio_free(h)
	return err
}

// with runs fn on the live handle, locked and pinned to the OS thread.
func (r *RecordIO) with(fn func(cmxc.RecordIOHandle) error) error {
	if r == nil {
		return newError(ErrInvalidHandle, "nil RecordIO")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.h == 0 {
		return newError(ErrInvalidHandle, "RecordIO used after Close")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return fn(cmxc.SwigcptrRecordIOHandle(r.h))
}

// currentRecord copies the record just read (size bytes; -1: none).
func currentRecord(h cmxc.RecordIOHandle, size int64) ([]byte, error) {
	if size < 0 {
		if err := lastError(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	out := make([]byte, size)
	cmxc.Recordio_copy(h, out)
	return out, lastError()
}

// Read returns the next record, or io.EOF at the end of the file.
func (r *RecordIO) Read() ([]byte, error) {
	var rec []byte
	err := r.with(func(h cmxc.RecordIOHandle) (err error) {
		rec, err = currentRecord(h, cmxc.Recordio_read(h))
		return err
	})
	return rec, err
}

// ReadKey returns the record the index lists under key (ErrNotFound when
// none); Read goes on after it.
func (r *RecordIO) ReadKey(key int64) ([]byte, error) {
	var rec []byte
	err := r.with(func(h cmxc.RecordIOHandle) (err error) {
		rec, err = currentRecord(h, cmxc.Recordio_read_key(h, key))
		return err
	})
	return rec, err
}

// Write appends one record (no index line).
func (r *RecordIO) Write(rec []byte) error {
	return r.with(func(h cmxc.RecordIOHandle) error {
		cmxc.Recordio_write(h, -1, rec)
		return lastError()
	})
}

// WriteKey appends one record and its index line "key<TAB>offset" (key >= 0).
func (r *RecordIO) WriteKey(key int64, rec []byte) error {
	if key < 0 {
		return newError(ErrInvalidArgument, "key %d < 0", key)
	}
	return r.with(func(h cmxc.RecordIOHandle) error {
		cmxc.Recordio_write(h, key, rec)
		return lastError()
	})
}

// Flush hands what was written to the OS and reports failed writes.
func (r *RecordIO) Flush() error {
	return r.with(func(h cmxc.RecordIOHandle) error {
		cmxc.Recordio_flush(h)
		return lastError()
	})
}

// Keys lists the index's keys, in the order of its lines (readers) or as
// written (writers).
func (r *RecordIO) Keys() ([]int64, error) {
	var keys []int64
	err := r.with(func(h cmxc.RecordIOHandle) error {
		n := cmxc.Recordio_num_keys(h)
		if n < 0 {
			return lastError()
		}
		keys = make([]int64, n)
		for i := range keys {
			keys[i] = cmxc.Recordio_key(h, int64(i))
			if err := lastError(); err != nil {
				return err
			}
		}
		return nil
	})
	return keys, err
}

// Tell is the byte offset of the next record (readers) or of the end of
// the file (writers).
func (r *RecordIO) Tell() (int64, error) {
	var pos int64
	err := r.with(func(h cmxc.RecordIOHandle) error {
		pos = cmxc.Recordio_tell(h)
		return lastError()
	})
	return pos, err
}

// SeekTo makes the next Read start at pos, a record's start (from Tell or
// the index). Readers only.
func (r *RecordIO) SeekTo(pos int64) error {
	return r.with(func(h cmxc.RecordIOHandle) error {
		cmxc.Recordio_seek(h, pos)
		return lastError()
	})
}

// ImageRecord is an image record as im2rec lays it out: labels (one in
// the header, or an array after it), two ids, and the encoded image.
type ImageRecord struct {
	Labels  []float32
	ID, ID2 uint64
	Image   []byte // JPEG or PNG
}

// PackImageRecord makes an image record's bytes (one label goes into the
// header, as im2rec writes it).
func PackImageRecord(labels []float32, id, id2 uint64, image []byte) ([]byte, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := cmxc.Recordio_pack_image(labels, int64(id), int64(id2), image, nil)
	if n < 0 {
		return nil, lastError()
	}
	out := make([]byte, n)
	if cmxc.Recordio_pack_image(labels, int64(id), int64(id2), image, out) < 0 {
		return nil, lastError()
	}
	return out, nil
}

// UnpackImageRecord parses an image record's header; the labels and the
// image are copies. A record too short for what its header claims is an
// ErrIO.
func UnpackImageRecord(rec []byte) (*ImageRecord, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := cmxc.Recordio_image_labels(rec, nil)
	if n < 0 {
		return nil, lastError()
	}
	out := &ImageRecord{Labels: make([]float32, n)}
	cmxc.Recordio_image_labels(rec, out.Labels)
	out.ID = uint64(cmxc.Recordio_image_field(rec, 0))
	out.ID2 = uint64(cmxc.Recordio_image_field(rec, 1))
	off := cmxc.Recordio_image_field(rec, 2)
	if err := lastError(); err != nil {
		return nil, err
	}
	out.Image = append([]byte(nil), rec[off:]...)
	return out, nil
}

// DecodeImage decodes a JPEG or PNG image (told by content) with
// libjpeg-turbo or libpng into a new (channels, height, width) array:
// channels 1 (gray) or 3 (RGB), dtype Uint8 or Float32 (values 0..255
// either way). A corrupt or truncated image is an ErrIO with the codec's
// message.
func DecodeImage(data []byte, channels int, dtype DType) (*NDArray, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return wrapNew(cmxc.Image_decode(data, channels, int(dtype)))
}
