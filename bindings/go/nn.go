package mxc

import (
	"fmt"
	"runtime"

	"mxc.dev/mxc/internal/cmxc"
)

// Block is a layer, a loss or a container of blocks (Gluon's model), with
// named parameters made at the first forward pass (mxc_block_* of the C
// library):
//
//	net, _ := mxc.NewSequential(mxc.Named("mlp"))
//	defer net.Close()
//	fc1, _ := mxc.NewDense(128, mxc.WithActivation("relu"))
//	fc2, _ := mxc.NewDense(10)
//	err := net.Add(fc1, fc2)
//
// Ownership: Close drops this value's reference; a container, optimizer
// or fit holding the block keeps it alive, so children may be closed
// after Add. Blocks made inside a Scope are freed by its End. A block and
// the blocks in it are used by one goroutine at a time (forward passes
// record per thread); Close may be called from any goroutine.
type Block struct {
	o    guarded
	user *userBlock // NewUserBlock's Go state (C holds it); nil otherwise
}

func freeBlock(h uintptr) { cmxc.Block_free(cmxc.SwigcptrBlockHandle(h)) }

func newBlock(h uintptr) *Block {
	b := &Block{o: guarded{h: h, kind: "Block", free: freeBlock}}
	runtime.SetFinalizer(b, (*Block).Close)
	return b
}

// LayerOption configures a block made by NewDense, NewConv2D, ...
type LayerOption func(*layerConfig)

type layerConfig struct {
	name string
	kv   map[string]string
}

// Named names the block: the prefix of its parameters' names (the default
// is the kind and a process-wide count, "dense0"). Name the layers of a
// network whose checkpoints another process loads.
func Named(name string) LayerOption { return func(c *layerConfig) { c.name = name } }

// WithActivation adds an activation (relu, sigmoid, tanh, softrelu,
// softsign) to a Dense or Conv2D layer.
func WithActivation(act string) LayerOption { return WithKey("activation", act) }

// WithKey sets any configuration key of mxc_block_create (see mxc.h:
// use_bias, strides, padding, momentum, ...).
func WithKey(key string, value any) LayerOption {
	return func(c *layerConfig) { c.kv[key] = fmt.Sprint(value) }
}

// NewBlock makes a block of any kind mxc_block_create knows ("dense",
// "conv2d", "batchnorm", "softmax_cross_entropy_loss", ...). Unknown kinds
// or keys and bad values are ErrInvalidArgument naming them.
func NewBlock(kind string, opts ...LayerOption) (*Block, error) {
	c := layerConfig{kv: map[string]string{}}
	for _, o := range opts {
		o(&c)
	}
	kv, err := packParams(c.kv)
	if err == nil {
		err = cstr("block kind", kind)
	}
	if err == nil {
		err = cstr("block name", c.name)
	}
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := cmxc.Block_create(kind, c.name, kv).Swigcptr()
	if err := sentinel(h); err != nil {
		return nil, err
	}
	return newBlock(h), nil
}

// kind prepends a layer's required keys to the caller's options.
func kind(kind string, opts []LayerOption, required ...LayerOption) (*Block, error) {
	return NewBlock(kind, append(required, opts...)...)
}

// NewSequential is a container running its children (Add) in order.
func NewSequential(opts ...LayerOption) (*Block, error) { return kind("sequential", opts) }

// NewDense is a fully connected layer of units outputs.
func NewDense(units int, opts ...LayerOption) (*Block, error) {
	return kind("dense", opts, WithKey("units", units))
}

// NewConv2D is a 2-D convolution of channels filters of kernel x kernel.
func NewConv2D(channels, kernel int, opts ...LayerOption) (*Block, error) {
	return kind("conv2d", opts, WithKey("channels", channels), WithKey("kernel_size", kernel))
}

// NewMaxPool2D is max pooling over size x size windows (stride size).
func NewMaxPool2D(size int, opts ...LayerOption) (*Block, error) {
	return kind("maxpool2d", opts, WithKey("pool_size", size))
}

// NewAvgPool2D is average pooling over size x size windows (stride size).
func NewAvgPool2D(size int, opts ...LayerOption) (*Block, error) {
	return kind("avgpool2d", opts, WithKey("pool_size", size))
}

// NewBatchNorm is batch normalization over axis 1.
func NewBatchNorm(opts ...LayerOption) (*Block, error) { return kind("batchnorm", opts) }

// NewLayerNorm is layer normalization over the last axis.
func NewLayerNorm(opts ...LayerOption) (*Block, error) { return kind("layernorm", opts) }

// NewDropout zeroes inputs with probability rate in training.
func NewDropout(rate float64, opts ...LayerOption) (*Block, error) {
	return kind("dropout", opts, WithKey("rate", rate))
}

// NewActivation is an element-wise activation (relu, tanh, ...).
func NewActivation(act string, opts ...LayerOption) (*Block, error) {
	return kind("activation", opts, WithActivation(act))
}

// NewFlatten reshapes (batch, ...) to (batch, rest).
func NewFlatten(opts ...LayerOption) (*Block, error) { return kind("flatten", opts) }

// NewEmbedding looks rows of an (inputDim, outputDim) table up by index.
func NewEmbedding(inputDim, outputDim int, opts ...LayerOption) (*Block, error) {
	return kind("embedding", opts, WithKey("input_dim", inputDim), WithKey("output_dim", outputDim))
}

// NewLSTM is Gluon's rnn.LSTM: hiddenSize units per direction, input
// (T, N, C) or with WithKey("layout", "NTC") (N, T, C), zero begin states;
// further keys num_layers, bidirectional, dropout, input_size and the
// i2h/h2h weight and bias initializers (mxc.h, "Layers").
func NewLSTM(hiddenSize int, opts ...LayerOption) (*Block, error) {
	return kind("lstm", opts, WithKey("hidden_size", hiddenSize))
}

// NewGRU is Gluon's rnn.GRU, configured as NewLSTM.
func NewGRU(hiddenSize int, opts ...LayerOption) (*Block, error) {
	return kind("gru", opts, WithKey("hidden_size", hiddenSize))
}

// NewSoftmaxCrossEntropyLoss is the loss of logits against class indices
// (a block of two inputs: prediction and label).
func NewSoftmaxCrossEntropyLoss(opts ...LayerOption) (*Block, error) {
	return kind("softmax_cross_entropy_loss", opts)
}

// NewL2Loss is 0.5 (p - y)^2 per example.
func NewL2Loss(opts ...LayerOption) (*Block, error) { return kind("l2_loss", opts) }

// NewL1Loss is |p - y| per example.
func NewL1Loss(opts ...LayerOption) (*Block, error) { return kind("l1_loss", opts) }

// Close drops this value's reference to the block. Idempotent.
func (b *Block) Close() error {
	if b != nil {
		b.o.close()
		runtime.SetFinalizer(b, nil)
	}
	return nil
}

// Keep moves the block out of its Scope into the enclosing one, so that it
// outlives the scope it was made in.
func (b *Block) Keep() error { return b.o.keep() }

func (b *Block) with(fn func(cmxc.BlockHandle) error) error {
	if b == nil {
		return newError(ErrInvalidHandle, "nil Block")
	}
	defer runtime.KeepAlive(b)
	return b.o.with(func(h uintptr) error { return fn(cmxc.SwigcptrBlockHandle(h)) })
}

// check runs a void mxcb call on the block and returns its failure.
func (b *Block) check(fn func(cmxc.BlockHandle)) error {
	return b.with(func(h cmxc.BlockHandle) error {
		fn(h)
		return lastError()
	})
}

// Add appends children (sequential and user blocks only; a cycle is
// ErrInvalidArgument).
func (b *Block) Add(children ...*Block) error {
	for _, c := range children {
		if c == b {
			return newError(ErrInvalidArgument, "Block.Add: a block cannot contain itself")
		}
		err := c.with(func(ch cmxc.BlockHandle) error {
			return b.check(func(h cmxc.BlockHandle) { cmxc.Block_add(h, ch) })
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Name is the block's name, the prefix of its parameters' names.
func (b *Block) Name() (string, error) {
	var s string
	err := b.check(func(h cmxc.BlockHandle) { s = cmxc.Block_name(h) })
	return s, err
}

// Initialize sets the initializer (an mxc_init_array method with its
// parameters, may be nil) of every parameter without one; force also
// remakes parameters already made, at the next forward pass.
func (b *Block) Initialize(method string, params map[string]string, force bool) error {
	kv, err := packParams(params)
	if err == nil {
		err = cstr("initializer", method)
	}
	if err != nil {
		return err
	}
	f := 0
	if force {
		f = 1
	}
	return b.check(func(h cmxc.BlockHandle) { cmxc.Block_initialize(h, method, kv, f) })
}

// Forward is the forward pass: one input for layers, two (prediction,
// label) for losses; recorded inside Record.
func (b *Block) Forward(inputs ...*NDArray) (*NDArray, error) {
	hs, err := handles(inputs)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(inputs)
	var out *NDArray
	err = b.with(func(h cmxc.BlockHandle) (err error) {
		out, err = wrapNew(cmxc.Block_forward(h, hs))
		return err
	})
	return out, err
}

// ParamNames lists the parameters, depth first.
func (b *Block) ParamNames() ([]string, error) {
	var names []string
	err := b.with(func(h cmxc.BlockHandle) error {
		n := cmxc.Block_num_params(h)
		if n < 0 {
			return lastError()
		}
		for i := 0; i < n; i++ {
			names = append(names, cmxc.Block_param_name(h, i))
		}
		return lastError()
	})
	return names, err
}

// param is a new array on parameter name's values (grad: its gradient).
func (b *Block) param(name string, grad bool) (*NDArray, error) {
	names, err := b.ParamNames()
	if err != nil {
		return nil, err
	}
	for i, n := range names {
		if n != name {
			continue
		}
		var out *NDArray
		err = b.with(func(h cmxc.BlockHandle) (err error) {
			if grad {
				out, err = wrapNew(cmxc.Block_param_grad(h, i))
			} else {
				out, err = wrapNew(cmxc.Block_param(h, i))
			}
			return err
		})
		return out, err
	}
	return nil, newError(ErrNotFound, "block has no parameter %q; expected one of %v", name, names)
}

// Param is a new array on parameter name's values (writing into it
// changes the parameter); ErrInvalidArgument before the first forward
// pass made it.
func (b *Block) Param(name string) (*NDArray, error) { return b.param(name, false) }

// Grad is a new array on parameter name's gradient buffer.
func (b *Block) Grad(name string) (*NDArray, error) { return b.param(name, true) }

// SaveParams writes every parameter by name (atomically).
func (b *Block) SaveParams(path string) error {
	if err := cstr("path", path); err != nil {
		return err
	}
	return b.check(func(h cmxc.BlockHandle) { cmxc.Block_save_params(h, path) })
}

// LoadParams reads every parameter by name; nothing changes unless all fit.
func (b *Block) LoadParams(path string) error {
	if err := cstr("path", path); err != nil {
		return err
	}
	return b.check(func(h cmxc.BlockHandle) { cmxc.Block_load_params(h, path) })
}

// Hybridize runs unrecorded single-input forward passes through a bound
// graph (fusion, memory plan) when on: built-in layers, sequential blocks
// and user blocks (NewUserBlock: traced by running their Go function once,
// recorded), else ErrUnsupported.
func (b *Block) Hybridize(on bool) error {
	a := 0
	if on {
		a = 1
	}
	return b.check(func(h cmxc.BlockHandle) { cmxc.Block_hybridize(h, a) })
}

// Export writes prefix-symbol.json and prefix-EPOCH.params (MXNet's
// layout), which LoadPredictor and MXNet load; after a forward pass.
func (b *Block) Export(prefix string, epoch int) error {
	if err := cstr("prefix", prefix); err != nil {
		return err
	}
	return b.check(func(h cmxc.BlockHandle) { cmxc.Block_export(h, prefix, epoch) })
}
