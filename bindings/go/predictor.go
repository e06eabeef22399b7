package mxc

import (
	"runtime"

	"mxc.dev/mxc/internal/cmxc"
)

// Input names an input of a model and gives its shape (float32 values).
type Input struct {
	Name  string
	Shape []int64
}

// Predictor runs an exported MXNet model for inference (mxc's
// mxc_predictor_*): a graph with its weights, bound for given input
// shapes.
//
//	p, err := mxc.LoadPredictor("model", 39, []mxc.Input{{"data", []int64{1, 1, 28, 28}}})
//	defer p.Close()
//	probs, err := p.Predict(image)
//
// Clone and Reshape make predictors sharing the weights (one copy of the
// model in memory) with inputs and outputs of their own. A Predictor must
// be used by one goroutine at a time; different predictors, also sharing
// weights, run in parallel. Close frees it (a finalizer does for one never
// closed).
type Predictor struct {
	owned  // the mxc_predictor
	inputs []Input
}

func freePredictor(h uintptr) { cmxc.Predictor_free(cmxc.SwigcptrPredictorHandle(h)) }

// newPredictor wraps a new handle, or the thread's failure (the caller
// holds the OS thread).
func newPredictor(h cmxc.PredictorHandle, inputs []Input) (*Predictor, error) {
	if h == nil || h.Swigcptr() == 0 {
		return nil, lastError()
	}
	p := &Predictor{owned{h.Swigcptr()}, copyInputs(inputs)}
	tagNew(h.Swigcptr())
	runtime.SetFinalizer(p, (*Predictor).Close)
	return p, nil
}

func copyInputs(in []Input) []Input {
	out := make([]Input, len(in))
	for i, x := range in {
		out[i] = Input{x.Name, append([]int64(nil), x.Shape...)}
	}
	return out
}

// withSpec builds the native description of inputs and outputs, runs
// make with it on one OS thread and frees it.
func withSpec(inputs []Input, outputs []string, make func(cmxc.PredictorSpecHandle) cmxc.PredictorHandle) (cmxc.PredictorHandle, error) {
	for _, in := range inputs {
		if err := cstr("input name", in.Name); err != nil {
			return nil, err
		}
	}
	for _, o := range outputs {
		if err := cstr("output name", o); err != nil {
			return nil, err
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	spec := cmxc.Predictor_spec_new()
	if spec == nil || spec.Swigcptr() == 0 {
		return nil, lastError()
	}
	defer cmxc.Predictor_spec_free(spec)
	for _, in := range inputs {
		if cmxc.Predictor_spec_input(spec, in.Name, in.Shape, int(Float32)); cmxc.Last_code() != 0 {
			return nil, lastError()
		}
	}
	for _, o := range outputs {
		if cmxc.Predictor_spec_output(spec, o); cmxc.Last_code() != 0 {
			return nil, lastError()
		}
	}
	h := make(spec)
	if h == nil || h.Swigcptr() == 0 {
		return nil, lastError()
	}
	return h, nil
}

func needInputs(inputs []Input) error {
	if len(inputs) == 0 {
		return newError(ErrInvalidArgument, "a predictor needs at least one input, e.g. {\"data\", []int64{1, 3, 224, 224}}")
	}
	return nil
}

// LoadPredictor reads an MXNet checkpoint (prefix-symbol.json and
// prefix-EEEE.params) and binds it for the inputs; outputs names the
// outputs to compute ("fc1_output" or "fc1", inner nodes included), none
// for the graph's own. Errors: ErrIO for a missing or corrupted file,
// ErrNotFound for an unknown input or a missing parameter, ErrShape for
// shapes that do not fit.
func LoadPredictor(prefix string, epoch int, inputs []Input, outputs ...string) (*Predictor, error) {
	if err := needInputs(inputs); err != nil {
		return nil, err
	}
	if err := cstr("prefix", prefix); err != nil {
		return nil, err
	}
	h, err := withSpec(inputs, outputs, func(s cmxc.PredictorSpecHandle) cmxc.PredictorHandle {
		return cmxc.Predictor_load(s, prefix, epoch)
	})
	if err != nil {
		return nil, err
	}
	return newPredictor(h, inputs)
}

// NewPredictor is LoadPredictor from MXNet JSON text and the bytes of a
// params file (MXNet's format or mxc's), read during the call.
func NewPredictor(symbolJSON string, params []byte, inputs []Input, outputs ...string) (*Predictor, error) {
	if err := needInputs(inputs); err != nil {
		return nil, err
	}
	if err := cstr("symbol JSON", symbolJSON); err != nil {
		return nil, err
	}
	h, err := withSpec(inputs, outputs, func(s cmxc.PredictorSpecHandle) cmxc.PredictorHandle {
		return cmxc.Predictor_create(s, symbolJSON, params)
	})
	if err != nil {
		return nil, err
	}
	return newPredictor(h, inputs)
}

// Close frees the predictor (the weights go with the last predictor
// sharing them). Idempotent; always returns nil.
func (p *Predictor) Close() error {
	if p != nil {
		p.release(freePredictor)
	}
	return nil
}

func (p *Predictor) typed() (cmxc.PredictorHandle, error) {
	var o *owned
	if p != nil {
		o = &p.owned
	}
	h, err := o.live("Predictor")
	return cmxc.SwigcptrPredictorHandle(h), err
}

// Inputs are the predictor's inputs and their shapes.
func (p *Predictor) Inputs() []Input { return copyInputs(p.inputs) }

// SetInput copies data (the input's element count, C order) into the
// named input.
func (p *Predictor) SetInput(name string, data []float32) error {
	t, err := p.typed()
	if err == nil {
		err = cstr("input name", name)
	}
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Predictor_set_input(t, name, bytesOf(data)) })
	runtime.KeepAlive(p)
	runtime.KeepAlive(data)
	return err
}

// SetInputArray copies a (the input's shape and dtype) into the named
// input; a stays the caller's.
func (p *Predictor) SetInputArray(name string, a *NDArray) error {
	t, err := p.typed()
	if err != nil {
		return err
	}
	ah, err := a.typed()
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Predictor_set_input_array(t, name, ah) })
	runtime.KeepAlive(p)
	runtime.KeepAlive(a)
	return err
}

// Forward runs the model on the current inputs.
func (p *Predictor) Forward() error {
	t, err := p.typed()
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Predictor_forward(t) })
	runtime.KeepAlive(p)
	return err
}

// NumOutputs is the number of outputs.
func (p *Predictor) NumOutputs() (int, error) {
	t, err := p.typed()
	if err != nil {
		return 0, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := cmxc.Predictor_num_outputs(t)
	runtime.KeepAlive(p)
	if n < 0 {
		return 0, lastError()
	}
	return n, nil
}

// OutputArray is output i of the last forward as a new array (a copy:
// later forwards do not change it).
func (p *Predictor) OutputArray(i int) (*NDArray, error) {
	view, err := p.view(i)
	if err != nil {
		return nil, err
	}
	defer view.Close()
	dt, err := view.DType()
	if err != nil {
		return nil, err
	}
	shape, err := view.Shape()
	if err != nil {
		return nil, err
	}
	out, err := Empty(dt, shape...)
	if err == nil {
		err = view.CopyTo(out)
	}
	return out, err
}

// view is a handle on output i's array, which the next forward rewrites.
func (p *Predictor) view(i int) (*NDArray, error) {
	t, err := p.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a, err := wrapNew(cmxc.Predictor_output(t, i))
	runtime.KeepAlive(p)
	return a, err
}

// Output is output i of the last forward (float32) and its shape.
func (p *Predictor) Output(i int) ([]float32, []int64, error) {
	view, err := p.view(i)
	if err != nil {
		return nil, nil, err
	}
	defer view.Close()
	shape, err := view.Shape()
	if err != nil {
		return nil, nil, err
	}
	v, err := view.Float32s()
	return v, shape, err
}

// Predict sets the first input to data, runs, and returns output 0.
func (p *Predictor) Predict(data []float32) ([]float32, error) {
	if err := p.SetInput(p.inputs[0].Name, data); err != nil {
		return nil, err
	}
	if err := p.Forward(); err != nil {
		return nil, err
	}
	v, _, err := p.Output(0)
	return v, err
}

// Clone is a new predictor sharing p's weights, with inputs of its own
// (for another goroutine). p must not be in use meanwhile.
func (p *Predictor) Clone() (*Predictor, error) {
	t, err := p.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := newPredictor(cmxc.Predictor_clone(t), p.inputs)
	runtime.KeepAlive(p)
	return c, err
}

// Reshape is a new predictor sharing p's weights with the given inputs
// reshaped (another batch size); the others keep their shapes.
func (p *Predictor) Reshape(inputs ...Input) (*Predictor, error) {
	t, err := p.typed()
	if err != nil {
		return nil, err
	}
	h, err := withSpec(inputs, nil, func(s cmxc.PredictorSpecHandle) cmxc.PredictorHandle {
		return cmxc.Predictor_reshape(t, s)
	})
	runtime.KeepAlive(p)
	if err != nil {
		return nil, err
	}
	shapes := copyInputs(p.inputs)
	for _, in := range inputs {
		for k := range shapes {
			if shapes[k].Name == in.Name {
				shapes[k].Shape = append([]int64(nil), in.Shape...)
			}
		}
	}
	return newPredictor(h, shapes)
}
