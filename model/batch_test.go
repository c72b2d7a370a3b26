package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/roofline"
)

func TestReadBatch(t *testing.T) {
	in := "model,device,phase,batch,seq,ctx,tp\n" +
		"llama-3.1-8b,h100,decode,8,1,4096,2\n" +
		"llama-3.1-8b,h100,prefill,1,,,\n" +
		"llama-3.1-8b,h100,decode,x,1,1,1\n" +
		"llama-3.1-8b,h100\n"
	b, err := ReadBatch(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	rows := b.Rows
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	want := Shape{Phase: Decode, Batch: 8, Seq: 1, Ctx: 4096, TP: 2}
	if rows[0].Err != nil || rows[0].Shape != want || rows[0].Model != "llama-3.1-8b" || rows[0].Device != "h100" || rows[0].Line != 2 {
		t.Errorf("row 1: %+v", rows[0])
	}
	for i, w := range []string{"prompt length", `column 4 (batch) "x"`, "2 fields, the header has 7"} {
		if e := rows[i+1].Err; e == nil || !strings.Contains(e.Error(), w) {
			t.Errorf("row %d: error %v, want %q", i+2, e, w)
		}
	}
	for _, bad := range []string{"", "model,device\n", "model,device,phase,batch,seq,ctx,tpx\n"} {
		if _, err := ReadBatch(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "model,device,phase,batch,seq,ctx,tp") {
			t.Errorf("header %q: %v", bad, err)
		}
	}
}

// TestReadBatchRefuses: a row is read as the flags are. Before, batch 0
// and tp 0 became 1, a cell past the header vanished and an unknown or
// repeated column was kept and ignored.
func TestReadBatchRefuses(t *testing.T) {
	const head = "model,device,phase,batch,seq,ctx,tp"
	for _, c := range []struct{ name, in, want string }{
		{"batch 0", head + "\nllama-3.1-8b,h100,decode,0,1,512,1\n", `column 4 (batch) "0": expected a whole number from 1 to 1048576`},
		{"tp 0", head + "\nllama-3.1-8b,h100,decode,1,1,512,0\n", `column 7 (tp) "0"`},
		{"tp 65", head + "\nllama-3.1-8b,h100,decode,1,1,512,65\n", `column 7 (tp) "65"`},
		{"ctx -1", head + "\nllama-3.1-8b,h100,decode,1,1,-1,1\n", `column 6 (ctx) "-1"`},
		{"a cell past the header", head + "\nllama-3.1-8b,h100,decode,1,1,512,1,8\n", "8 fields, the header has 7"},
		{"phase", head + "\nllama-3.1-8b,h100,training,1,1,512,1\n", `column 3 (phase) "training": expected prefill or decode`},
		{"an unknown column", head + ",gpus\nllama-3.1-8b,h100,decode,1,1,512,1,8\n", `line 1, column 8: unknown column "gpus"`},
		{"a repeated column", head + ",tp\nllama-3.1-8b,h100,decode,1,1,512,1,8\n", `line 1, columns 7 and 8: both are "tp"`},
		{"ep 0", head + ",ep\ndeepseek-v3,h200,decode,1,1,512,8,0\n", `column 8 (ep) "0"`},
		{"moe_tp before ep", head + ",moe_tp,ep\ndeepseek-v3,h200,decode,1,1,512,8,1,8\n", `line 1: column 8 is "moe_tp"; expected the header model,device,phase,batch,seq,ctx,tp (then ep,moe_tp, if given), in that order`},
		{"a layout that spans no whole group", head + ",ep,moe_tp\ndeepseek-v3,h200,decode,1,1,512,8,2,2\n", "moe-tp × ep = 2 × 2: expected a multiple of tp=8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := ReadBatch(strings.NewReader(c.in))
			if err == nil && len(b.Rows) == 1 {
				err = b.Rows[0].Err
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

func FuzzReadBatch(f *testing.F) {
	f.Add("model,device,phase,batch,seq,ctx,tp\nllama-3.1-8b,h100,decode,8,1,4096,2\n")
	f.Add("model,device,phase,batch,seq,ctx,tp\n\"a,b\",,prefill,1,2,,\n")
	f.Fuzz(func(t *testing.T, in string) {
		b, _ := ReadBatch(strings.NewReader(in))
		for _, r := range b.Rows {
			if r.Err == nil && r.Shape.Defaults().validateShape() != nil {
				t.Errorf("row %d accepted an invalid shape %+v", r.Line, r.Shape)
			}
		}
	})
}

// TestReadBatchLimits: a batch keeps its rows in memory, so rows and bytes
// are bounded, each limit an error that says to split the file.
func TestReadBatchLimits(t *testing.T) {
	head := "model,device,phase,batch,seq,ctx,tp\n"
	many := head + strings.Repeat("llama-3.1-8b,h100,decode,8,1,4096,2\n", MaxBatchRows+1)
	got, err := ReadBatch(strings.NewReader(many))
	if err == nil || !strings.Contains(err.Error(), "more than 50000 rows; split the file") || len(got.Rows) != MaxBatchRows {
		t.Errorf("past the rows: %d rows, %v", len(got.Rows), err)
	}
	long := head + strings.Repeat("x,"+strings.Repeat("a", 1<<20-10)+",decode\n", MaxBatchBytes>>20+2)
	if _, err := ReadBatch(strings.NewReader(long)); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB; split the file") {
		t.Errorf("past the bytes: %v", err)
	}
}

// TestRunBatch: each model and device is loaded once, a row that fails
// keeps its line and error and the others are answered, and each answer is
// the model's own (Analyze) without the per-op detail.
func TestRunBatch(t *testing.T) {
	in := "model,device,phase,batch,seq,ctx,tp\n" +
		"llama-3.1-8b,h100,decode,8,1,4096,1\n" +
		"llama-3.1-8b,h900,decode,8,1,4096,1\n" +
		"llama-3.1-8b,h100,decode,x,1,1,1\n" +
		"llama-3.1-8b,h100,prefill,1,2048,,1\n"
	b, err := ReadBatch(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	rows := b.Rows
	loads, devs := map[string]int{}, map[string]int{}
	m := h100(t)
	out := RunBatch(rows,
		func(name string) (Config, error) { loads[name]++; return LoadBuiltin(name) },
		func(name string) (*roofline.Model, error) {
			devs[name]++
			if name != "h100" {
				return nil, errors.New("unknown device " + name)
			}
			return m, nil
		})
	if loads["llama-3.1-8b"] != 1 || devs["h100"] != 1 || devs["h900"] != 1 {
		t.Errorf("loads %v, devices %v: want each once", loads, devs)
	}
	for i, w := range []string{"", "line 3: unknown device h900", `line 4: column 4 (batch) "x"`, ""} {
		if got := out[i].Err; w == "" && got != nil || w != "" && (got == nil || !strings.Contains(got.Error(), w)) {
			t.Errorf("row %d: error %v, want %q", i+2, got, w)
		}
	}
	c, err := LoadBuiltin("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.Analyze(rows[0].Shape, m)
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].Result; got.Ops != nil || got.Expected != want.Expected || out[0].SmallestTP != 1 {
		t.Errorf("row 2: expected %v, smallest tp %d; want Analyze's %v and 1 (8B fits one H100)", got.Expected, out[0].SmallestTP, want.Expected)
	}
}

// TestReadBatchLayout: the optional ep and moe_tp columns set the expert
// layout as --ep and --moe-tp do, empty cells their defaults, and the
// header read is the one the output echoes.
func TestReadBatchLayout(t *testing.T) {
	in := "model,device,phase,batch,seq,ctx,tp,ep,moe_tp\n" +
		"deepseek-v3,h200,decode,32,1,4096,2,4,2\n" +
		"deepseek-v3,h200,decode,32,1,4096,8,,\n"
	b, err := ReadBatch(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := "model,device,phase,batch,seq,ctx,tp,ep,moe_tp"; strings.Join(b.Header, ",") != want {
		t.Errorf("header %v, want %s", b.Header, want)
	}
	for i, want := range []Shape{{Phase: Decode, Batch: 32, Seq: 1, Ctx: 4096, TP: 2, EP: 4, MoETP: 2}, {Phase: Decode, Batch: 32, Seq: 1, Ctx: 4096, TP: 8}} {
		if r := b.Rows[i]; r.Err != nil || r.Shape != want {
			t.Errorf("row %d: %+v, %v; want %+v", i+2, r.Shape, r.Err, want)
		}
	}
	// The row answers as Analyze does for the layout the flags give, and
	// the layout matters: tp 2 alone holds every expert on each GPU.
	m := h100(t)
	out := RunBatch(b.Rows[:1], LoadBuiltin, func(string) (*roofline.Model, error) { return m, nil })
	c, err := LoadBuiltin("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.Analyze(b.Rows[0].Shape, m)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := c.Memory(Shape{Phase: Decode, Batch: 32, Seq: 1, Ctx: 4096, TP: 2}, m.Device())
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].Result; out[0].Err != nil || got.Expected != want.Expected || got.Memory.Weights != want.Memory.Weights || got.Memory.Weights >= plain.Weights {
		t.Errorf("row 2: %v, expected %v, weights %v; want Analyze's %v and %v, below tp 2's %v", out[0].Err, got.Expected, got.Memory.Weights, want.Expected, want.Memory.Weights, plain.Weights)
	}
}
