package deploy

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/query"
)

func TestEngineProfiles(t *testing.T) {
	for _, n := range []string{"vllm", "sglang", "trtllm", "TensorRT-LLM"} {
		e, err := LookupEngine(n)
		if err != nil {
			t.Fatal(err)
		}
		if e.Source == "" || e.MaxTokens < 1 {
			t.Errorf("%s: %+v", n, e)
		}
	}
	if _, err := LookupEngine("tgi"); err == nil || !strings.Contains(err.Error(), "sglang") {
		t.Errorf("unknown engine: %v", err)
	}
	if _, err := parseEngine("x.yaml", []byte("name: x\nsource: s\nmax_num_batched_tokens: 1\nmax_num_seqs: 1\nblock_size: 1\ngpu_memory_utilization: 0.9\nmemory_of: total\nreserve: prompt\nextra: 1\n")); err == nil {
		t.Error("an unknown key in a profile is accepted")
	}
}

func TestQueryValidate(t *testing.T) {
	for _, c := range []struct {
		q     Query
		field string
	}{
		{Query{Model: "llama-3.1-8b", Device: "h100", TP: -1}, "tp"},
		{Query{Model: "llama-3.1-8b", Device: "h100", ISL: -5}, "isl"},
		{Query{Model: "llama-3.1-8b", Device: "h100", Concurrency: 4, Rate: 2}, "rate"},
		{Query{Model: "llama-3.1-8b", Device: "h100", Engine: "tgi"}, "engine"},
		{Query{Model: "llama-3.1-8b", Device: "h100", Weights: "fp7"}, "weights"},
		{Query{Model: "llama-3.1-8b", Device: "h100", MemoryShare: 1.5}, "gpu-memory-utilization"},
		{Query{Model: "llama-3.1-8b", Device: "h100", Disagg: &Disagg{Link: "pcie"}}, "link"},
		{Query{Model: "llama-3.1-8b"}, "device"},
	} {
		es := c.q.Validate()
		if len(es) == 0 || es[0].Field != c.field {
			t.Errorf("%+v: %v, want an error of --%s", c.q, es, c.field)
		}
	}
	q := Query{Model: "llama-3.1-8b", Device: "h100", TP: 2, Concurrency: 8, Engine: "trtllm"}
	if got, want := q.Args().String(), "gpucalc deploy llama-3.1-8b --device h100 --engine trtllm --tp 2 --concurrency 8"; got != want {
		t.Errorf("Args = %s, want %s", got, want)
	}
	if _, err := (Query{Model: "llama-3.1-8b", Device: "h100", Requests: -1}).Answer(); len(query.Fields(err)) == 0 {
		t.Errorf("Answer of a bad query: %v, want its field errors", err)
	}
}

// The KV pool is the engine's share less weights and activations, in
// whole blocks; a model whose weights fill the share does not fit.
func TestLayout(t *testing.T) {
	r, err := Query{Model: "llama-3.1-8b", Device: "h100", Concurrency: 4, ISL: 128, OSL: 16}.Answer()
	if err != nil {
		t.Fatal(err)
	}
	m := r.Memory
	if want := 0.9*m.Usable - m.Weights - m.Workspace; m.KV != want || m.KVTokens%16 != 0 || float64(m.KVTokens)*m.KVPerToken > m.KV {
		t.Errorf("KV %g bytes, %d tokens; want %g bytes in 16-token blocks", m.KV, m.KVTokens, want)
	}
	r, err = Query{Model: "llama-3.1-70b", Device: "h100", Concurrency: 4}.Answer()
	if err != nil {
		t.Fatal(err)
	}
	if r.Memory.Fits || r.TPOT.Mean != 0 {
		t.Errorf("llama-3.1-70b in bf16 on one H100 fits: %+v", r.Memory)
	}
}

// More clients decode in bigger batches: TPOT and throughput rise; a KV
// pool too small for the clients preempts.
func TestLoad(t *testing.T) {
	var last Result
	for _, c := range []int64{1, 8, 64} {
		r, err := Query{Model: "llama-3.1-8b", Device: "h100", Concurrency: c, ISL: 512, OSL: 128}.Answer()
		if err != nil {
			t.Fatal(err)
		}
		if last.PerGPU > 0 && (r.TPOT.Mean <= last.TPOT.Mean || r.PerGPU <= last.PerGPU) {
			t.Errorf("%d clients: TPOT %g, %g tokens/s per GPU; fewer clients: %g, %g", c, r.TPOT.Mean, r.PerGPU, last.TPOT.Mean, last.PerGPU)
		}
		last = r
	}
	r, err := Query{Model: "llama-3.1-8b", Device: "h100", Concurrency: 64, ISL: 4096, OSL: 1024, MemoryShare: 0.3}.Answer()
	if err != nil {
		t.Fatal(err)
	}
	if r.Preemptions == 0 {
		t.Errorf("64 clients of 5k tokens in %d tokens of KV: no preemption", r.Memory.KVTokens)
	}
}

// A disaggregated deployment's TTFT holds its KV transfer, slower over
// InfiniBand than NVLink.
func TestDisagg(t *testing.T) {
	q := Query{Model: "llama-3.1-8b", Device: "h100", Concurrency: 16, ISL: 2048, OSL: 128, Disagg: &Disagg{PrefillWorkers: 1, DecodeWorkers: 1, Link: "nvlink"}}
	nv, err := q.Answer()
	if err != nil {
		t.Fatal(err)
	}
	q.Disagg = &Disagg{PrefillWorkers: 1, DecodeWorkers: 1, Link: "ib"}
	ib, err := q.Answer()
	if err != nil {
		t.Fatal(err)
	}
	if nv.GPUs != 2 || nv.Disagg.Transfer <= 0 || ib.Disagg.Transfer <= nv.Disagg.Transfer || nv.TTFT.Mean < nv.Disagg.Transfer {
		t.Errorf("nvlink: %d GPUs, transfer %g, TTFT %g; ib: transfer %g", nv.GPUs, nv.Disagg.Transfer, nv.TTFT.Mean, ib.Disagg.Transfer)
	}
}

// With the GPUs in all and no worker counts, a disaggregated answer tries
// every split of them between whole prefill and decode workers and keeps
// the one of most tokens/s, saying so; one count given, the other is what
// is left; a total no split fills, or that the counts contradict, is
// refused.
func TestDisaggSplit(t *testing.T) {
	base := Query{Model: "llama-3.1-8b", Device: "h100", Concurrency: 128, ISL: 2048, OSL: 256}
	with := func(d Disagg) Query { q := base; q.Disagg = &d; return q }
	q := with(Disagg{PrefillTP: 1, DecodeTP: 2, GPUs: 8})
	splits := q.Filled().Disagg.splits()
	if len(splits) != 3 {
		t.Fatalf("8 GPUs as tp-1 prefill and tp-2 decode workers: %d splits, want 3 (2+3, 4+2, 6+1)", len(splits))
	}
	chosen, err := q.Answer()
	if err != nil {
		t.Fatal(err)
	}
	d := chosen.Disagg.Disagg
	if chosen.GPUs != 8 || d.PrefillWorkers+2*d.DecodeWorkers != 8 || len(chosen.Notes) == 0 || !strings.Contains(chosen.Notes[len(chosen.Notes)-1], "split chosen") {
		t.Fatalf("chosen: %d GPUs, %d + %d workers, notes %q", chosen.GPUs, d.PrefillWorkers, d.DecodeWorkers, chosen.Notes)
	}
	for _, s := range splits {
		r, err := with(Disagg{PrefillTP: 1, DecodeTP: 2, PrefillWorkers: s.PrefillWorkers, DecodeWorkers: s.DecodeWorkers}).Answer()
		if err != nil {
			t.Fatal(err)
		}
		if r.TokensPerSecond > chosen.TokensPerSecond {
			t.Errorf("%d + %d workers: %.0f tokens/s, more than the chosen %d + %d's %.0f", s.PrefillWorkers, s.DecodeWorkers, r.TokensPerSecond, d.PrefillWorkers, d.DecodeWorkers, chosen.TokensPerSecond)
		}
	}
	if f := with(Disagg{PrefillTP: 1, DecodeTP: 2, GPUs: 8, PrefillWorkers: 2}).Filled().Disagg; f.DecodeWorkers != 3 {
		t.Errorf("2 prefill workers of 8 GPUs: %d decode workers, want 3", f.DecodeWorkers)
	}
	for _, d := range []Disagg{{PrefillTP: 2, DecodeTP: 2, GPUs: 7}, {PrefillTP: 1, DecodeTP: 2, GPUs: 8, PrefillWorkers: 2, DecodeWorkers: 2}} {
		if err := with(d).Validate().Err(); err == nil || !strings.Contains(err.Error(), "gpus") {
			t.Errorf("%+v: %v, want --gpus refused", d, err)
		}
	}
}

func TestBatchHeader(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"model_path,system,backend,mode,isl,osl,colour\n", "unknown column"},
		{"model_path,system,backend,mode,isl,osl,isl\n", "given twice"},
		{"model_path,system,backend,mode,isl\n", "no column osl"},
		{"", "empty input"},
	} {
		if _, err := ReadBatch(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	b, err := ReadBatch(strings.NewReader("model_path,system,backend,mode,isl,osl,batch_size,tp_size\n" +
		"llama-3.1-8b,h100_sxm,vllm,agg,1024,128,16,1\n" +
		"llama-3.1-8b,h100_sxm,vllm,agg,1024,128,0,1\n" +
		"llama-3.1-8b,h100_sxm,vllm,agg,1024,128,16,1,9\n" +
		"llama-3.1-8b,h100_sxm,vllm,agg,-3,128,16,1\n" +
		"llama-3.1-8b,h100_sxm,vllm,both,1024,128,16,1\n"))
	if len(b.Rows) != 5 {
		t.Fatalf("%d rows, %v", len(b.Rows), err)
	}
	if b.Rows[0].Err != nil || b.Rows[0].Query.Concurrency != 16 {
		t.Errorf("row 1: %+v", b.Rows[0])
	}
	for i, want := range []string{"batch_size", "cells", "isl", "mode"} {
		if e := b.Rows[i+1].Err; e == nil || !strings.Contains(e.Error(), want) {
			t.Errorf("row %d: %v, want an error of %s", i+2, e, want)
		}
	}
}

// A row whose batch-size column is empty takes its concurrency from its
// id's _c<N>_ token (InferenceMAX's run names), and only from that; a
// disaggregated one still needs its pools' sizes.
func TestBatchIDConcurrency(t *testing.T) {
	b, err := ReadBatch(strings.NewReader("id,model_path,system,backend,mode,isl,osl,batch_size,tp_size,prefill_tp_size,prefill_num_workers,decode_tp_size,decode_num_workers,decode_batch_size\n" +
		"run_agg_1024x1024_c64_tp8_1,llama-3.1-8b,h100_sxm,vllm,agg,1024,128,,1,,,,,\n" +
		"run_agg_1024x1024_c64_tp8_2,llama-3.1-8b,h100_sxm,vllm,agg,1024,128,16,1,,,,,\n" +
		"run_disagg_1024x1024_c1600_tp8_3,llama-3.1-8b,h100_sxm,vllm,disagg,1024,128,,,1,,1,,\n" +
		"run_disagg_1024x1024_c1600_tp8_4,llama-3.1-8b,h100_sxm,vllm,disagg,1024,128,,,1,2,1,3,\n" +
		"run_c8_c16_5,llama-3.1-8b,h100_sxm,vllm,agg,1024,128,,1,,,,,\n" +
		"run_agg_1024x1024_6,llama-3.1-8b,h100_sxm,vllm,agg,1024,128,,1,,,,,\n"))
	if err != nil || len(b.Rows) != 6 {
		t.Fatalf("%d rows, %v", len(b.Rows), err)
	}
	for i, c := range []struct {
		concurrency int64
		err         string
	}{{64, ""}, {16, ""}, {1600, "decode_num_workers: empty; the id gives 1600 clients"}, {1600, ""}, {0, "batch_size: empty"}, {0, "batch_size: empty"}} {
		r := b.Rows[i]
		if r.Query.Concurrency != c.concurrency || (c.err == "") != (r.Err == nil) || r.Err != nil && !strings.Contains(r.Err.Error(), c.err) {
			t.Errorf("row %d: concurrency %d, error %v; want %d, %q", i+1, r.Query.Concurrency, r.Err, c.concurrency, c.err)
		}
	}
}

// FuzzReadBatch: no input makes the batch reader panic, and every row it
// reads either has an error or a query that validates.
func FuzzReadBatch(f *testing.F) {
	f.Add("model_path,system,backend,mode,isl,osl,batch_size,tp_size\nllama-3.1-8b,h100_sxm,vllm,agg,1024,128,16,1\n")
	f.Add("model_path,system,backend,mode,isl,osl,prefill_tp_size,decode_tp_size,decode_batch_size\nx,h100,sglang,disagg,1,2,1,1,4\n")
	f.Fuzz(func(t *testing.T, in string) {
		b, _ := ReadBatch(strings.NewReader(in))
		for _, r := range b.Rows {
			if r.Err == nil && len(r.Query.Validate()) > 0 {
				t.Errorf("line %d: no error, but its query is invalid: %v", r.Line, r.Query.Validate())
			}
		}
	})
}
