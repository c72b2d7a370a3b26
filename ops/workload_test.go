package ops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseWorkload(t *testing.T) {
	w, err := ParseWorkload("w.yaml", []byte(`name: tiny
dtype: fp16
ops:
  - name: proj
    op: linear tokens=8 in=16 out=32
    count: 4
  - name: act
    op: gelu n=256 dtype=fp32
`))
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "tiny" || len(w.Entries) != 2 || w.Entries[0].Count != 4 || w.Entries[1].Count != 1 {
		t.Fatalf("got %+v", w)
	}
	if w.Entries[0].Op.DType != "fp16" || w.Entries[1].Op.DType != "fp32" {
		t.Errorf("dtypes %s %s; want the file default fp16 and the op's fp32", w.Entries[0].Op.DType, w.Entries[1].Op.DType)
	}
}

func TestParseWorkloadErrors(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"", "empty"},
		{"name: x\nops: []\n", "no ops"},
		{"ops:\n  - {name: a, op: copy n=1}\n", "missing name"},
		{"name: x\nops:\n  - {name: a, op: copy n=1, repeat: 2}\n", "repeat"},
		{"name: x\nops:\n  - {name: a, op: copy n=1}\n  - {name: a, op: copy n=2}\n", "used twice"},
		{"name: x\nops:\n  - {name: a, op: copy n=0}\n", "ops[0] (a)"},
		{"name: x\nops:\n  - {name: a, op: copy n=1, count: 0}\n", "count"},
		{"name: x\ndtype: fp12\nops:\n  - {name: a, op: copy n=1}\n", "dtype"},
		{"name: x\nops:\n  - {name: a, op: copy n=1}\n---\nname: y\n", "one YAML document"},
		{"name: x\nops:\n  - {name: a, op: copy n=1, count: 2.5}\n", `line 3: count "2.5" is not a whole number`},
		{"name: x\nops:\n  - {name: a, op: copy n=1, count: 1e3}\n", `count "1e3" is not a whole number`},
		{"name: x\nops:\n  - {name: a, op: copy n=1, count: .inf}\n", `count ".inf" is not a whole number`},
		{"name: x\nops:\n  - {name: a, op: copy n=1, kernel: {threads: 32.0}}\n", `threads "32.0" is not a whole number`},
		{"name: x\ntransfers: [{name: t, bytes: 1K, count: 0.5}]\nops:\n  - {name: a, op: copy n=1}\n", `count "0.5"`},
		{"name: x\nops: 5\n", `line 2: found a whole number "5" where a list belongs`},
		{"name: [1]\nops:\n  - {name: a, op: copy n=1}\n", "line 1: found a list where text belongs"},
		{"name: x\nops:\n  - {name: a, op: copy n=1, kernel: 3}\n", "found a whole number \"3\" where a mapping"},
		{"name: x\nops:\n  - {name: a, op: copy n=1, count: x}\n", "where a whole number belongs"},
		{"name: x\nops:\n  - {name: a, op: matmul m=1 n=1 k=1 m=2}\n", `"m=1" and "m=2" conflict`},
		{"name: x\nops:\n  - {name: a, op: attention b=1 h=1 s=8 d=8 causal full}\n", `"causal" and "full" conflict`},
		{"name: x\nops:\n  - {name: a, op: matmul m=1 n=1 k=1 bias=maybe}\n", `bias="maybe": expected true or false`},
		{"name: x\nops:\n" + strings.Repeat("  - {name: a, op: copy n=1}\n", MaxOps+1), "10001 ops; a workload lists at most 10000"},
	} {
		_, err := ParseWorkload("w.yaml", []byte(tt.doc))
		if err != nil && (strings.Contains(err.Error(), "struct") || strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "[]")) {
			t.Errorf("%q: error %v names Go types", tt.doc, err)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to mention %q", tt.doc, err, tt.want)
		}
	}
}

// TestReadWorkloadSize: a file over MaxWorkloadBytes is refused before it is
// parsed; one at the limit is read.
func TestReadWorkloadSize(t *testing.T) {
	head := "name: x\nops:\n  - {name: a, op: copy n=1}\n"
	pad := func(n int) string { return head + "#" + strings.Repeat("x", n-len(head)-2) + "\n" }
	if _, err := ReadWorkload("w.yaml", strings.NewReader(pad(MaxWorkloadBytes))); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	_, err := ReadWorkload("w.yaml", strings.NewReader(pad(MaxWorkloadBytes+1)))
	if err == nil || !strings.Contains(err.Error(), "w.yaml: larger than 1 MiB") {
		t.Errorf("over the limit: %v", err)
	}
}

// TestExampleWorkloads parses the shipped examples and checks the decoder
// layer against a hand count: Llama-3-8B (hidden 4096, 32 heads, 8 KV
// heads, head dim 128, MLP 14336), one token of decode against a 4096-token
// cache. Weights: q,o 4096², k,v 4096·1024, gate, up, down 3·4096·14336.
func TestExampleWorkloads(t *testing.T) {
	for _, f := range []string{"llama3-8b-prefill.yaml", "llama3-8b-decode.yaml"} {
		data, err := readExample(f)
		if err != nil {
			t.Fatal(err)
		}
		w, err := ParseWorkload(f, data)
		if err != nil {
			t.Fatal(err)
		}
		var matrix float64
		for _, e := range w.Entries {
			if e.Op.Kind == Linear {
				matrix += e.Op.Cost().MatrixFLOPs * float64(e.Count)
			}
		}
		tokens := 4096.0
		if strings.Contains(f, "decode") {
			tokens = 1
		}
		weights := 2*4096*4096 + 2*4096*1024 + 3*4096*14336.0
		if want := 2 * tokens * weights; matrix != want {
			t.Errorf("%s: linear FLOPs %g, want 2·tokens·weights = %g", f, matrix, want)
		}
	}
}

func FuzzParseWorkload(f *testing.F) {
	f.Add([]byte("name: x\nops:\n  - {name: a, op: matmul m=1 n=2 k=3, count: 2}\n"))
	f.Add([]byte("name: x\ndtype: fp8\nops:\n  - name: a\n    op: attention b=1 h=2 s=3 d=4 causal\n"))
	examples, _ := filepath.Glob("../examples/*.yaml")
	for _, e := range examples {
		if data, err := os.ReadFile(e); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseWorkload("fuzz.yaml", data)
		if err == nil && (w.Name == "" || len(w.Entries) == 0) {
			t.Fatalf("accepted an incomplete workload: %+v", w)
		}
	})
}

func readExample(name string) ([]byte, error) { return os.ReadFile("../examples/" + name) }
