package mxc

import (
	"os"
	"path/filepath"
	"testing"
)

const fcJSON = `{"nodes": [
  {"op": "null", "name": "data", "inputs": []},
  {"op": "null", "name": "fc_weight", "inputs": []},
  {"op": "null", "name": "fc_bias", "inputs": []},
  {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "2"},
   "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}],
 "arg_nodes": [0, 1, 2], "node_row_ptr": [0, 1, 2, 3, 4],
 "heads": [[3, 0, 0]], "attrs": {"mxnet_version": ["int", 10900]}}`

func TestCheckpointRoundTrip(t *testing.T) {
	sym, err := SymbolFromJSON(fcJSON)
	if err != nil {
		t.Fatal(err)
	}
	defer sym.Close()
	w := mustF32(t, []float32{1, 2, 3, -4, -5, -6}, 2, 3)
	b := mustF32(t, []float32{0.5, -0.5}, 2)
	m := mustF32(t, []float32{7}, 1)
	defer w.Close()
	defer b.Close()
	defer m.Close()
	prefix := filepath.Join(t.TempDir(), "net")
	args := map[string]*NDArray{"fc_weight": w, "fc_bias": b}
	aux := map[string]*NDArray{"stat": m}
	if err := SaveCheckpoint(prefix, 3, sym, args, aux); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"-symbol.json", "-0003.params"} {
		if _, err := os.Stat(prefix + f); err != nil {
			t.Fatal(err)
		}
	}
	sym2, args2, aux2, err := LoadCheckpoint(prefix, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer sym2.Close()
	defer closeAll(args2)
	defer closeAll(aux2)
	j1, _ := sym.JSON()
	j2, _ := sym2.JSON()
	if j1 != j2 {
		t.Errorf("symbol JSON differs:\n%s\n%s", j1, j2)
	}
	if len(args2) != 2 || len(aux2) != 1 {
		t.Fatalf("got %d args, %d aux", len(args2), len(aux2))
	}
	checkF32(t, "fc_weight", args2["fc_weight"], []float32{1, 2, 3, -4, -5, -6}, 0)
	checkF32(t, "fc_bias", args2["fc_bias"], []float32{0.5, -0.5}, 0)
	checkF32(t, "stat", aux2["stat"], []float32{7}, 0)

	_, _, _, err = LoadCheckpoint(prefix, 4)
	wantErr(t, "missing epoch", err, ErrIO, "net-0004.params")
}
