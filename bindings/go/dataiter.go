package mxc

import (
	"runtime"
	"sync"

	"mxc.dev/mxc/internal/cmxc"
)

// DataIter iterates over batches of a data set (float32 data, float32
// labels).
//
// Ownership: Close frees it; a finalizer frees it otherwise. Arrays from
// Data and Label stay valid after Next, Reset and Close. Thread-safety:
// methods are serialized by a mutex (the C iterator has a cursor).
type DataIter struct {
	mu sync.Mutex
	h  uintptr // the mxc_data_iter; 0 once closed
}

// NewIDXIter reads MNIST-style IDX files (gzip or not): images become
// flat float32 rows scaled to [0, 1], labels float32 class indices; the
// last batch is padded to batch rows. shuffle reorders the examples each
// epoch with seed.
func NewIDXIter(images, labels string, batch int64, shuffle bool, seed int64) (*DataIter, error) {
	if err := cstr("path", images); err != nil {
		return nil, err
	}
	if err := cstr("path", labels); err != nil {
		return nil, err
	}
	sh := 0
	if shuffle {
		sh = 1
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := cmxc.Data_iter_idx(images, labels, batch, sh, seed)
	if h == nil || h.Swigcptr() == 0 {
		return nil, lastError()
	}
	it := &DataIter{h: h.Swigcptr()}
	runtime.SetFinalizer(it, (*DataIter).Close)
	return it, nil
}

// NewIDXIterLayout is NewIDXIter with the layout chosen: flat gives
// (batch, rows*cols) batches (an MLP), else (batch, 1, rows, cols) (a
// CNN); discardLast drops an incomplete last batch (training) instead of
// padding it (evaluation; fit leaves pad rows out of its metrics).
func NewIDXIterLayout(images, labels string, batch int64, shuffle bool, seed int64, flat, discardLast bool) (*DataIter, error) {
	if err := cstr("path", images+labels); err != nil {
		return nil, err
	}
	return newIter(func() cmxc.DataIterHandle {
		return cmxc.Data_iter_idx_layout(images, labels, batch, b2i(shuffle), seed, b2i(flat), b2i(discardLast))
	})
}

// NewCSVIter reads CSV rows of numbers (no header; the field count of the
// first row), with labels from a second CSV file ("" for none), in file
// order; the last batch is padded.
func NewCSVIter(data, labels string, batch int64) (*DataIter, error) {
	if err := cstr("path", data+labels); err != nil {
		return nil, err
	}
	return newIter(func() cmxc.DataIterHandle { return cmxc.Data_iter_csv(data, labels, batch) })
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// newIter wraps the iterator make returns, pinned to the OS thread.
func newIter(make func() cmxc.DataIterHandle) (*DataIter, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := make()
	if h == nil || h.Swigcptr() == 0 {
		return nil, lastError()
	}
	it := &DataIter{h: h.Swigcptr()}
	runtime.SetFinalizer(it, (*DataIter).Close)
	return it, nil
}

// NewImageRecordIter is MXNet's ImageRecordIter over a RecordIO file of
// image records, with its parameters by name (path_imgrec, data_shape
// "(3,224,224)", batch_size, shuffle, seed, resize, rand_crop,
// rand_mirror, mean_r, ...: the list is mxc_data_iter_image_record_create's
// in mxc.h). Images are decoded and augmented on worker threads ahead of
// Next. Data batches are float32 (batch, C, H, W), labels (batch) or
// (batch, label_width). Unknown keys and bad values are ErrInvalidArgument
// naming them; an image that cannot be decoded fails the Next that
// reaches its batch with ErrIO. Close stops the threads.
func NewImageRecordIter(params map[string]string) (*DataIter, error) {
	kv, err := packParams(params)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := cmxc.Data_iter_image_record(kv)
	if h == nil || h.Swigcptr() == 0 {
		return nil, lastError()
	}
	it := &DataIter{h: h.Swigcptr()}
	runtime.SetFinalizer(it, (*DataIter).Close)
	return it, nil
}

// Close frees the iterator. Idempotent; always returns nil.
func (it *DataIter) Close() error {
	if it == nil {
		return nil
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.h != 0 {
		cmxc.Data_iter_free(cmxc.SwigcptrDataIterHandle(it.h))
		it.h = 0
	}
	return nil
}

// with runs fn on the live handle, locked and pinned to the OS thread.
func (it *DataIter) with(fn func(cmxc.DataIterHandle) error) error {
	if it == nil {
		return newError(ErrInvalidHandle, "nil DataIter")
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.h == 0 {
		return newError(ErrInvalidHandle, "DataIter used after Close")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return fn(cmxc.SwigcptrDataIterHandle(it.h))
}

// Next advances to the next batch: false at the end of the epoch.
func (it *DataIter) Next() (bool, error) {
	has := false
	err := it.with(func(h cmxc.DataIterHandle) error {
		r := cmxc.Data_iter_next(h)
		if r < 0 {
			return lastError()
		}
		has = r == 1
		return nil
	})
	return has, err
}

// Data is a new array holding the current batch's data (batch x features).
func (it *DataIter) Data() (*NDArray, error) {
	var a *NDArray
	err := it.with(func(h cmxc.DataIterHandle) (err error) {
		a, err = wrapNew(cmxc.Data_iter_data(h))
		return err
	})
	return a, err
}

// Label is a new array holding the current batch's labels (batch).
func (it *DataIter) Label() (*NDArray, error) {
	var a *NDArray
	err := it.with(func(h cmxc.DataIterHandle) (err error) {
		a, err = wrapNew(cmxc.Data_iter_label(h))
		return err
	})
	return a, err
}

// Reset rewinds to the start of the epoch (reshuffling if asked).
func (it *DataIter) Reset() error {
	return it.with(func(h cmxc.DataIterHandle) error {
		cmxc.Data_iter_reset(h)
		return lastError()
	})
}

// Pad is how many trailing examples of the current batch are padding
// (repeated from the start of the epoch).
func (it *DataIter) Pad() (int64, error) {
	var pad int64
	err := it.with(func(h cmxc.DataIterHandle) error {
		pad = cmxc.Data_iter_pad(h)
		return lastError()
	})
	return pad, err
}

// NumExamples is the number of examples an epoch visits.
func (it *DataIter) NumExamples() (int64, error) {
	var n int64
	err := it.with(func(h cmxc.DataIterHandle) error {
		n = cmxc.Data_iter_num_examples(h)
		return lastError()
	})
	return n, err
}

// SetParts makes the iterator read only part partIndex of numParts from
// now on (MXNet's num_parts / part_index, mxc_data_iter_set_parts): the
// parts are disjoint and together hold every example once; an IDX or
// image record part is the contiguous range [n*k/p, n*(k+1)/p) of the
// file's n, shuffled within itself, and NumExamples is its size. Padding
// and the last batch apply to the part. Call it before the first Next or
// right after Reset; it applies to every later epoch. ErrInvalidArgument
// for numParts outside [1, 2^30], partIndex outside [0, numParts) or a
// call in the middle of an epoch, ErrIO for an image record part without
// records; the part then stays as it was.
func (it *DataIter) SetParts(numParts, partIndex int64) error {
	return it.with(func(h cmxc.DataIterHandle) error {
		cmxc.Data_iter_set_parts(h, numParts, partIndex)
		return lastError()
	})
}
