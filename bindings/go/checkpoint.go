package mxc

import (
	"runtime"
	"sort"

	"mxc.dev/mxc/internal/cmxc"
)

// LoadCheckpoint reads an Apache MXNet checkpoint, prefix-symbol.json and
// prefix-EEEE.params (the epoch with at least 4 digits), as MXNet's
// load_checkpoint: the symbol and the arguments and auxiliary states keyed
// by their names without the "arg:"/"aux:" prefixes. The params file may
// be in MXNet's format or mxc's. Everything returned is new and owned by
// the caller (Close the symbol and the arrays, or let finalizers do it).
// A missing, truncated or corrupted file is an ErrIO naming it.
func LoadCheckpoint(prefix string, epoch int) (*Symbol, map[string]*NDArray, map[string]*NDArray, error) {
	if err := cstr("prefix", prefix); err != nil {
		return nil, nil, nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := cmxc.Checkpoint_load(prefix, epoch)
	if c == nil || c.Swigcptr() == 0 {
		return nil, nil, nil, lastError()
	}
	defer cmxc.DeleteCheckpointHandle(c)
	groups := [2]map[string]*NDArray{}
	for g := range groups {
		m, err := checkpointGroup(c, g)
		if err != nil {
			closeAll(groups[0])
			return nil, nil, nil, err
		}
		groups[g] = m
	}
	sym, err := newSymbol(cmxc.Checkpoint_take_symbol(c))
	if err != nil {
		closeAll(groups[0])
		closeAll(groups[1])
		return nil, nil, nil, err
	}
	return sym, groups[0], groups[1], nil
}

// checkpointGroup is group g (0 arguments, 1 auxiliary states) as new
// arrays; the caller holds the OS thread.
func checkpointGroup(c cmxc.CheckpointHandle, g int) (map[string]*NDArray, error) {
	n := cmxc.Checkpoint_size(c, g)
	if n < 0 {
		return nil, lastError()
	}
	m := make(map[string]*NDArray, n)
	for i := 0; i < n; i++ {
		name := cmxc.Checkpoint_name(c, g, i)
		a, err := wrapNew(cmxc.Checkpoint_array(c, g, i))
		if err != nil {
			closeAll(m)
			return nil, err
		}
		m[name] = a
	}
	return m, nil
}

func closeAll(m map[string]*NDArray) {
	for _, a := range m {
		a.Close()
	}
}

// SaveCheckpoint writes sym to prefix-symbol.json and args and aux (names
// without prefixes) to prefix-EEEE.params in MXNet's format, so MXNet's
// load_checkpoint and Gluon's SymbolBlock.imports read them. Each file is
// replaced atomically. The arrays stay owned by the caller.
func SaveCheckpoint(prefix string, epoch int, sym *Symbol, args, aux map[string]*NDArray) error {
	if err := cstr("prefix", prefix); err != nil {
		return err
	}
	s, err := sym.typed()
	if err != nil {
		return err
	}
	names, arrays := sortedPairs(args)
	auxNames, auxArrays := sortedPairs(aux)
	hs, err := handles(append(arrays, auxArrays...))
	if err != nil {
		return err
	}
	packed, err := packStrings("name", append(names, auxNames...)...)
	if err != nil {
		return err
	}
	err = call(func() {
		cmxc.Checkpoint_save(prefix, epoch, s, hs, packed, len(auxNames))
	})
	runtime.KeepAlive(sym)
	runtime.KeepAlive(args)
	runtime.KeepAlive(aux)
	return err
}

func sortedPairs(m map[string]*NDArray) ([]string, []*NDArray) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	arrays := make([]*NDArray, len(names))
	for i, k := range names {
		arrays[i] = m[k]
	}
	return names, arrays
}
