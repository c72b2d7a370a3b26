package train

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/roofline"
)

func h100(t testing.TB) *roofline.Model {
	t.Helper()
	m, err := roofline.New(deviceFor(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMaxBatchMeasured: the largest micro-batch that fits lies between the
// measured ok and oom shapes of the same sequence length.
func TestMaxBatchMeasured(t *testing.T) {
	m := h100(t)
	for _, tc := range []struct {
		model, mode string
		seq         int64
		okAt, oomAt int64
	}{
		{"llama-3.1-8b", "bf16", 1024, 4, 8},
		{"llama-3.1-8b", "lora", 1024, 4, 8},
	} {
		r := measuredRow{model: tc.model, mode: tc.mode, batch: 1, seq: tc.seq}.request()
		res, err := Analyze(builtin(t, tc.model), r, m)
		if err != nil {
			t.Fatal(err)
		}
		if res.MaxBatch < tc.okAt || res.MaxBatch >= tc.oomAt {
			t.Errorf("%s %s seq %d: max batch %d; measured ok at %d, oom at %d", tc.model, tc.mode, tc.seq, res.MaxBatch, tc.okAt, tc.oomAt)
		}
	}
}

func TestChanges(t *testing.T) {
	m := h100(t)
	c := builtin(t, "llama-3.1-8b")
	res, err := Analyze(c, Request{Batch: 8, Seq: 1024}, m)
	if err != nil {
		t.Fatal(err)
	}
	if res.Memory.Fits || len(res.Changes) == 0 || !strings.HasPrefix(res.Changes[0].What, "micro-batch") {
		t.Fatalf("8B bf16 8x1024 (oom on the H100): fits %v, changes %+v", res.Memory.Fits, res.Changes)
	}
	for _, ch := range res.Changes {
		if ch.Peak > res.Memory.Usable {
			t.Errorf("%s: %.1f GiB does not fit", ch.What, ch.Peak/(1<<30))
		}
	}
	// Mixed precision full fine-tuning of the 8B model (16 bytes per
	// parameter, 128 GB) fits no micro-batch on one H100.
	res, _ = Analyze(c, Request{Precision: Mixed, Seq: 1024}, m)
	if res.Memory.Fits || res.MaxBatch != 0 {
		t.Errorf("8B mixed: fits %v, max batch %d", res.Memory.Fits, res.MaxBatch)
	}
	found := false
	for _, ch := range res.Changes {
		found = found || strings.Contains(ch.What, "LoRA")
	}
	if !found {
		t.Errorf("8B mixed: changes %+v; LoRA fits", res.Changes)
	}
}

// TestMayNotFit: Llama-3.2-3B in mixed precision with checkpointing, 2 ×
// 4096 tokens on each of two H100s under DDP, ran out of memory in its
// second step from a fresh start (DDP's first buckets still held) and ran
// with gradient_as_bucket_view (tools/multigpu/results/ddp_oom_2gpu_h100.csv).
func TestMayNotFit(t *testing.T) {
	c := configFor(t, "llama-3.2-3b")
	res, err := Analyze(c, Request{Precision: Mixed, Ckpt: FullCkpt, Batch: 2, Seq: 4096, GPUs: 2}, h100(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Memory.Verdict != MayNotFit || res.Memory.Fits || res.Time == nil {
		t.Fatalf("verdict %s, fits %v, time %v; want may_not_fit, not fits, and the steady step's time", res.Memory.Verdict, res.Memory.Fits, res.Time)
	}
	if len(res.Changes) == 0 || !res.Changes[0].Request.BucketView {
		t.Errorf("changes %+v; the first should be gradient_as_bucket_view", res.Changes)
	}
	if f := Findings(c, res); len(f) == 0 || f[0].Check != "ddp_rebuild" {
		t.Errorf("findings %+v; the first should be ddp_rebuild", f)
	}
}

func TestReadBatch(t *testing.T) {
	in := "model,device,method,precision,ckpt,batch,seq,gpus,zero\n" +
		"llama-3.2-1b,h100,full,bf16,none,4,1024,,\n" +
		"llama-3.2-1b,h100,lora,bf16,full,x,1024,,\n" +
		"nope,h100,full,bf16,none,1,1024,,\n" +
		"llama-3.1-8b,h100,full,mixed,1,1,2048,8,3\n"
	head, rows, err := ReadBatch(strings.NewReader(in))
	if err != nil || len(head) != 9 || len(rows) != 4 {
		t.Fatalf("%v %d %d", err, len(head), len(rows))
	}
	if rows[1].Err == nil || rows[3].Request.ZeRO != 3 || rows[3].Request.GPUs != 8 || rows[3].Request.Ckpt != FullCkpt {
		t.Fatalf("rows: %+v", rows)
	}
	m := h100(t)
	out := RunBatch(rows, func(n string) (model.Config, error) { return model.LoadBuiltin(n) }, func(string) (*roofline.Model, error) { return m, nil })
	for i, want := range []bool{true, false, false, true} {
		if (out[i].Err == nil) != want {
			t.Errorf("row %d: error %v", i+2, out[i].Err)
		}
	}
	if _, _, err := ReadBatch(strings.NewReader("model,device\n")); err == nil {
		t.Error("short header: no error")
	}
	_, rows, err = ReadBatch(strings.NewReader("model,device,method,precision,ckpt,batch,seq,gpus,bucket_view\n" +
		"llama-3.2-1b,h100,full,bf16,none,1,1024,2,true\nllama-3.2-1b,h100,full,bf16,none,1,1024,2,\nllama-3.2-1b,h100,full,bf16,none,1,1024,2,maybe\n"))
	if err != nil || !rows[0].Request.BucketView || rows[1].Request.BucketView || rows[1].Err != nil ||
		rows[2].Err == nil || !strings.Contains(rows[2].Err.Error(), `column 9 (bucket_view) "maybe": expected true or false`) {
		t.Errorf("bucket_view: %v %+v", err, rows)
	}
}

func BenchmarkAnalyze(b *testing.B) {
	m := h100(b)
	c := builtin(b, "llama-3.1-8b")
	r := Request{Method: LoRA, Batch: 4, Seq: 4096, Ckpt: FullCkpt}
	for b.Loop() {
		if _, err := Analyze(c, r, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatch10k answers a 10,000-row batch file (the goal: under 1 s).
func BenchmarkBatch10k(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("model,device,method,precision,ckpt,batch,seq,gpus,zero\n")
	modes := []string{"full,bf16", "full,mixed", "lora,bf16"}
	// Shapes rarely repeat (5 batches × 97 lengths), so that few rows are
	// priced from an earlier one's ops; most fit, so most are timed.
	for i := range 10000 {
		fmt.Fprintf(&sb, "%s,h100,%s,%s,%d,%d,%d,%d\n", []string{"llama-3.2-1b", "llama-3.1-8b"}[i%2], modes[i%3],
			[]string{"none", "full"}[i/3%2], 1+i%5, 256+32*(i%97), 1<<(i%4), i%4)
	}
	m := h100(b)
	load := func(n string) (model.Config, error) { return model.LoadBuiltin(n) }
	dev := func(string) (*roofline.Model, error) { return m, nil }
	for b.Loop() {
		_, rows, err := ReadBatch(strings.NewReader(sb.String()))
		if err != nil {
			b.Fatal(err)
		}
		out := RunBatch(rows, load, dev)
		timed := 0
		for _, o := range out {
			if o.Result.Time != nil {
				timed++
			}
		}
		b.ReportMetric(float64(timed), "timed_rows")
	}
}

// FuzzReadBatch: any input reads without a panic, every row either parses
// into a request or carries its error, a parsed row has a cell for every
// column and asks what its cells say (a number given is the number
// answered: nothing silently becomes a default), and parsed rows answer
// without a panic.
func FuzzReadBatch(f *testing.F) {
	f.Add("model,device,method,precision,ckpt,batch,seq,gpus,zero,tp,lora_rank\nllama-3.2-1b,h100,lora,bf16,1,4,1024,2,1,1,8\n")
	f.Add("model,device,method,precision,ckpt,batch,seq\nllama-3.2-1b,,full,mixed,none,-1,x\n\"broken\n")
	f.Add("model,device\n")
	f.Add("seq,batch,model,device,method,precision,ckpt,gpus,tp\n0,0,llama-3.2-1b,h100,full,bf16,none,0,0,9\n")
	m := h100(f)
	c := builtin(f, "llama-3.2-1b")
	f.Fuzz(func(t *testing.T, in string) {
		head, rows, _ := ReadBatch(strings.NewReader(in))
		for _, r := range rows {
			if r.Err != nil {
				continue
			}
			if len(r.Cells) != len(head) {
				t.Fatalf("line %d: %d cells under %d columns read", r.Line, len(r.Cells), len(head))
			}
			q := r.Request
			for i, h := range head {
				v, err := strconv.ParseInt(strings.TrimSpace(r.Cells[i]), 10, 64)
				if err != nil {
					continue
				}
				got := map[string]int64{"batch": q.Batch, "seq": q.Seq, "gpus": q.GPUs, "tp": q.TP, "zero": q.ZeRO, "lora_rank": q.LoRARank}
				if g, ok := got[strings.ToLower(strings.TrimSpace(h))]; ok && g != v {
					t.Fatalf("line %d: %s %d asked, %d read", r.Line, h, v, g)
				}
			}
			if r.Request.Batch > 64 || r.Request.Seq > 1<<14 || r.Request.GPUs > 64 {
				continue // keep each run short
			}
			_, _ = Analyze(c, r.Request, m)
		}
	})
}

// TestReadBatchLimits: a training batch keeps its rows in memory, so rows
// and bytes are bounded as the model batch's are, each limit an error that
// says to split the file.
func TestReadBatchLimits(t *testing.T) {
	head := "model,device,method,precision,ckpt,batch,seq\n"
	many := head + strings.Repeat("llama-3.2-1b,h100,full,bf16,none,4,1024\n", model.MaxBatchRows+1)
	_, got, err := ReadBatch(strings.NewReader(many))
	if err == nil || !strings.Contains(err.Error(), "more than 50000 rows; split the file") || len(got) != model.MaxBatchRows {
		t.Errorf("past the rows: %d rows, %v", len(got), err)
	}
	long := head + strings.Repeat("x,"+strings.Repeat("a", 1<<20-10)+",full\n", model.MaxBatchBytes>>20+2)
	if _, _, err := ReadBatch(strings.NewReader(long)); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB; split the file") {
		t.Errorf("past the bytes: %v", err)
	}
}

// TestReviewOps: the training review lists the step's ops, which add up to
// its GPU time, with their bytes. (It was blank: "Ops 0", "Bytes 0 B", an
// empty table, and its HTML failed with "plotter: no data points".)
func TestReviewOps(t *testing.T) {
	m := h100(t)
	for _, r := range []Request{{Batch: 2, Seq: 1024}, {Batch: 2, Seq: 1024, Ckpt: FullCkpt}, {Batch: 2, Seq: 1024, Method: LoRA},
		{Batch: 2, Seq: 1024, Precision: Mixed, GPUs: 2, ZeRO: 1}} {
		c := builtin(t, "llama-3.2-1b")
		rep, err := Review(c, r, m)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Analyze(c, r, m)
		if err != nil {
			t.Fatal(err)
		}
		sum, named := 0.0, map[string]bool{}
		for _, o := range rep.Ops {
			sum += o.Expected
			named[o.Name] = true
			if o.Expected < 0 || o.LowerBound > o.Expected*(1+1e-9) {
				t.Errorf("%+v: %s expected %g, lower bound %g", r, o.Name, o.Expected, o.LowerBound)
			}
		}
		if d := sum - res.Time.GPU; len(rep.Ops) < 20 || d*d > 1e-18 || !(rep.Bytes > 0) {
			t.Errorf("%+v: %d ops summing to %g s, GPU time %g s, bytes %g", r, len(rep.Ops), sum, res.Time.GPU, rep.Bytes)
		}
		for _, want := range []string{"forward q_proj", "backward q_proj dX", "step optimizer"} {
			if !named[want] {
				t.Errorf("%+v: no %q among the ops", r, want)
			}
		}
	}
}

// TestChangesKeepGlobalBatch: every change offered for a step that does
// not fit keeps the global batch (micro-batch × accumulation × data-parallel
// GPUs), and those that fit with room come before those that fit tightly.
// (Micro-batch 3 with 2 accumulation steps was offered for a batch of 4,
// 6 sequences; it was listed before checkpointing, which fits with room.)
func TestChangesKeepGlobalBatch(t *testing.T) {
	d := deviceFor(t, "")
	checked := 0
	for _, name := range []string{"llama-3.2-1b", "qwen3-8b", "llama-3.1-8b"} {
		c := builtin(t, name)
		for _, seq := range []int64{1024, 4096, 8192} {
			for _, batch := range []int64{1, 2, 3, 4, 5, 6, 8, 12, 16} {
				for _, gpus := range []int64{1, 2, 4} {
					for _, prec := range []Precision{BF16, Mixed} {
						r := Request{Batch: batch, Seq: seq, GPUs: gpus, Precision: prec}.Defaults()
						if r.Validate(c) != nil {
							continue
						}
						usable := model.Usable(d, r.GPUs)
						l := newLayout(c, r)
						if l.memory(usable).Fits {
							continue
						}
						checked++
						tight := false
						for _, ch := range changes(c, r, d, l.maxBatch(usable)) {
							n := ch.Request
							steps := int64(1)
							if n.Batch < r.Batch && n.GPUs == r.GPUs {
								if r.Batch%n.Batch != 0 {
									t.Errorf("%s %+v: %q: micro-batch %d does not divide %d", name, r, ch.What, n.Batch, r.Batch)
								}
								steps = r.Batch / n.Batch
							}
							if n.Batch*steps*n.DP() != r.Batch*r.DP() {
								t.Errorf("%s %+v: %q: global batch %d, was %d", name, r, ch.What, n.Batch*steps*n.DP(), r.Batch*r.DP())
							}
							v := newLayout(c, n).memory(model.Usable(d, n.GPUs)).Verdict
							if n.BucketView != r.BucketView {
								continue // free, and first
							}
							if v == Fits && tight {
								t.Errorf("%s %+v: %q fits with room but comes after a tight change", name, r, ch.What)
							}
							tight = tight || v != Fits
						}
					}
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d steps that do not fit", checked)
	}
}
