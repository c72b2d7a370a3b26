package ops

import (
	"strings"
	"testing"
)

func TestParseWorkloadDesign(t *testing.T) {
	w, err := ParseWorkload("w.yaml", []byte(`name: design
memory: 20GiB
transfers:
  - {name: batch_in, bytes: 64MiB, count: 2}
ops:
  - name: proj
    op: linear tokens=8 in=16 out=32
    inputs: []
  - name: act
    op: gelu n=256
    kernel:
      threads: 256
      regs: 40
      smem: 16K
      spill_bytes: 8
      global: {elem_bytes: 4, stride: 2}
      shared: {elem_bytes: 4, stride: 32}
  - name: res
    op: add n=256
    inputs: [proj, act]
`))
	if err != nil {
		t.Fatal(err)
	}
	if w.Memory != 20<<30 {
		t.Errorf("memory %d, want 20 GiB", w.Memory)
	}
	if len(w.Transfers) != 1 || w.Transfers[0] != (Transfer{"batch_in", 64 << 20, 2}) {
		t.Errorf("transfers %+v", w.Transfers)
	}
	e := w.Entries
	if len(e[0].Inputs) != 0 || len(e[1].Inputs) != 1 || e[1].Inputs[0] != "proj" || strings.Join(e[2].Inputs, ",") != "proj,act" {
		t.Errorf("inputs %q %q %q; want none, the op before, and the listed two", e[0].Inputs, e[1].Inputs, e[2].Inputs)
	}
	k := e[1].Kernel
	if k == nil || k.Threads != 256 || k.Regs != 40 || k.StaticSmem != 16384 || k.SpillBytes != 8 {
		t.Fatalf("kernel %+v", k)
	}
	if *k.Global != (Access{Bytes: 4, Stride: 2, ILP: 1}) || *k.Shared != (Access{Bytes: 4, Stride: 32}) {
		t.Errorf("accesses %+v %+v", *k.Global, *k.Shared)
	}
}

func TestParseWorkloadDesignErrors(t *testing.T) {
	const op = "name: x\nops:\n  - {name: a, op: copy n=1}\n"
	for _, tt := range []struct{ doc, want string }{
		{"memory: lots\n" + op, "memory"},
		{"transfers: [{bytes: 1K}]\n" + op, "transfers[0]: missing name"},
		{"transfers: [{name: t, bytes: -1}]\n" + op, "bytes"},
		{"transfers: [{name: t, bytes: 1K, count: 0}]\n" + op, "count"},
		{op + "  - {name: b, op: copy n=1, inputs: [c]}\n", `input "c"`},
		{op + "  - {name: b, op: copy n=1, inputs: [b]}\n", `input "b"`},
		{op + "  - {name: b, op: copy n=1, kernel: {threads: 0}}\n", "threads"},
		{op + "  - {name: b, op: copy n=1, kernel: {threads: 32, regs: 300}}\n", "regs"},
		{op + "  - {name: b, op: copy n=1, kernel: {threads: 32, smem: big}}\n", "smem"},
		{op + "  - {name: b, op: copy n=1, kernel: {threads: 32, spill_bytes: -4}}\n", "spill_bytes"},
		{op + "  - {name: b, op: copy n=1, kernel: {threads: 32, global: {elem_bytes: 3, stride: 1}}}\n", "elem_bytes"},
		{op + "  - {name: b, op: copy n=1, kernel: {threads: 32, global: {elem_bytes: 4}}}\n", "missing stride"},
		{op + "  - {name: b, op: copy n=1, kernel: {threads: 32, shared: {elem_bytes: 4, stride: 1, ilp: 2}}}\n", "ilp"},
		{op + "  - {name: b, op: copy n=1, kernel: {threads: 32, blocks: 2}}\n", "blocks"},
	} {
		_, err := ParseWorkload("w.yaml", []byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to mention %q", tt.doc, err, tt.want)
		}
	}
}

func FuzzParseWorkloadDesign(f *testing.F) {
	f.Add([]byte("name: x\nmemory: 1G\ntransfers: [{name: t, bytes: 1K}]\nops:\n  - {name: a, op: copy n=1}\n  - {name: b, op: add n=1, inputs: [a], kernel: {threads: 64, regs: 32, global: {elem_bytes: 16, stride: 3, ilp: 2}, shared: {elem_bytes: 8, stride: 2}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseWorkload("fuzz.yaml", data)
		if err != nil {
			return
		}
		for i, e := range w.Entries {
			if k := e.Kernel; k != nil && (k.Threads < 1 || k.Global != nil && k.Global.ILP < 1) {
				t.Fatalf("ops[%d]: accepted kernel %+v", i, *k)
			}
		}
	})
}
