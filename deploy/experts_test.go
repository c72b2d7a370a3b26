package deploy

import (
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/model"
)

// An expert layout spans one replica's GPUs or all of them; anything else
// is the --ep field's error, and the defaults fill as documented.
func TestExpertLayout(t *testing.T) {
	for _, c := range []struct {
		tp, dp, ep, moeTP int64
		wantEP, wantMoETP int64
		field             string
	}{
		{tp: 8, dp: 1, wantEP: 1, wantMoETP: 8},
		{tp: 1, dp: 8, ep: 8, wantEP: 8, wantMoETP: 1},
		{tp: 4, dp: 4, ep: 16, wantEP: 16, wantMoETP: 1},
		{tp: 1, dp: 4, moeTP: 4, wantEP: 1, wantMoETP: 4},
		{tp: 8, dp: 1, ep: 4, moeTP: 2, wantEP: 4, wantMoETP: 2},
		{tp: 8, dp: 1, ep: 4, moeTP: 4, field: "ep"},
		{tp: 2, dp: 2, ep: 8, moeTP: 1, field: "ep"},
		{tp: 2, dp: 1, ep: -1, moeTP: 2, field: "ep"},
	} {
		q := Query{Model: "deepseek-r1", Device: "b200", TP: c.tp, DP: c.dp, EP: c.ep, MoETP: c.moeTP}
		es := q.Validate()
		if c.field != "" {
			if len(es) == 0 || es[0].Field != c.field {
				t.Errorf("tp %d dp %d ep %d moe-tp %d: %v, want an error of --%s", c.tp, c.dp, c.ep, c.moeTP, es, c.field)
			}
			continue
		}
		f := q.Filled()
		if len(es) > 0 || f.EP != c.wantEP || f.MoETP != c.wantMoETP {
			t.Errorf("tp %d dp %d ep %d moe-tp %d: %v, filled ep %d moe-tp %d; want ep %d moe-tp %d", c.tp, c.dp, c.ep, c.moeTP, es, f.EP, f.MoETP, c.wantEP, c.wantMoETP)
		}
		if back := f.Args().String(); c.ep > 0 && !strings.Contains(back, "--ep") {
			t.Errorf("Args %s lost --ep", back)
		}
	}
	if _, err := (Query{Model: "llama-3.1-8b", Device: "h100", TP: 2, EP: 2}).Answer(); err == nil || !strings.Contains(err.Error(), "no routed experts") {
		t.Errorf("expert parallelism of a dense model: %v", err)
	}
}

// Ranks sharing experts over all GPUs hold the routed experts once among
// them: their weights per GPU are the attention's and 1/8 of the experts,
// less than eight replicas of TP 1 would need and what TP 8 holds of the
// experts; each step pays the dispatch and combine.
func TestExpertParallel(t *testing.T) {
	base := Query{Model: "deepseek-r1", Device: "b200", ISL: 1024, OSL: 64, Concurrency: 64}
	tp8, dp8 := base, base
	tp8.TP = 8
	dp8.DP, dp8.EP = 8, 8
	a, err := tp8.Answer()
	if err != nil {
		t.Fatal(err)
	}
	b, err := dp8.Answer()
	if err != nil {
		t.Fatal(err)
	}
	if !b.Memory.Fits || b.Memory.Weights <= a.Memory.Weights || b.Memory.Weights > 2*a.Memory.Weights {
		t.Errorf("weights per GPU: dp 8 ep 8 %g bytes (fits %v), tp 8 %g: want more (attention replicated), under twice", b.Memory.Weights, b.Memory.Fits, a.Memory.Weights)
	}
	if b.GPUs != 8 || b.TPOT.Mean <= 0 || b.PerGPU <= 0 {
		t.Errorf("dp 8 ep 8: %d GPUs, TPOT %g, %g tokens/s per GPU", b.GPUs, b.TPOT.Mean, b.PerGPU)
	}
	p := NewPlanner()
	r, err := p.prepare(dp8.Filled(), dp8.Filled().layout())
	if err != nil {
		t.Fatal(err)
	}
	if s := r.pr.shape; s.TP != 1 || s.EP != 8 || s.MoETP != 1 {
		t.Errorf("shape tp %d ep %d moe-tp %d, want ep 8 over whole experts", s.TP, s.EP, s.MoETP)
	}
	// The dispatch is model's all-to-all, priced on the link's curve
	// within the NVLink domain and with the NICs' share beyond it.
	dispatch := func(r replica) (model.Op, float64) {
		s := r.pr.shape
		s.Phase, s.Batch, s.Ctx = model.Decode, 64, 1
		list, err := r.c.Ops(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list {
			if strings.HasPrefix(o.Name, "moe_dispatch") {
				d, err := r.pr.engineTime(o)
				if err != nil {
					t.Fatal(err)
				}
				return o, d / float64(o.Count)
			}
		}
		t.Fatal("no moe_dispatch in the step")
		return model.Op{}, 0
	}
	if o, d := dispatch(r); o.Op.Ranks != 8 || d <= r.pr.link.Latency {
		t.Errorf("dispatch of 64 tokens: %s in %g s, want over 8 GPUs, more than the link's latency", o.Op, d)
	}
	dp16 := dp8
	dp16.DP, dp16.EP = 16, 16
	r16, err := p.prepare(dp16.Filled(), dp16.Filled().layout())
	if err != nil {
		t.Fatal(err)
	}
	if o, d := dispatch(r16); o.Op.Ranks != 16 || d <= r16.pr.link.Time(o.Op.Cost().Bytes) {
		t.Errorf("dispatch over %d GPUs: %g s, want slower than NVLink alone (%g s)", o.Op.Ranks, d, r16.pr.link.Time(o.Op.Cost().Bytes))
	}
	// Past one host's NVLink domain the NICs carry the rest.
	if in, out := r.pr.collective(1<<20, 8), r.pr.collective(1<<20, 16); out <= in {
		t.Errorf("1 MiB over 16 GPUs %g s, over 8 %g s: want slower across hosts", out, in)
	}
	if in, out := r.pr.link.Time(2*7.0/8*(1<<20)), r.pr.allReduce(1<<20, 64); out <= in {
		t.Errorf("all-reduce of 1 MiB over 64 GPUs %g s, within a host %g s", out, in)
	}
}

// All clients' first requests arrive at once: with many clients their
// prompts queue, and the first wave lifts the mean TTFT above the steady
// state's; a benchmark of more requests per client weighs it less.
func TestFirstWave(t *testing.T) {
	q := Query{Model: "llama-3.1-8b", Device: "h100", ISL: 4096, OSL: 64, Concurrency: 64}
	few, err := Query{Model: q.Model, Device: q.Device, ISL: q.ISL, OSL: q.OSL, Concurrency: 64, Requests: 128}.Answer()
	if err != nil {
		t.Fatal(err)
	}
	many, err := Query{Model: q.Model, Device: q.Device, ISL: q.ISL, OSL: q.OSL, Concurrency: 64, Requests: 6400}.Answer()
	if err != nil {
		t.Fatal(err)
	}
	if few.TTFT.Mean <= many.TTFT.Mean {
		t.Errorf("TTFT with 2 requests per client %g s, with 100 %g s: the first wave weighs more in the shorter benchmark", few.TTFT.Mean, many.TTFT.Mean)
	}
	// 64 prompts of 4096 tokens under an 8192-token budget take 32 steps:
	// the first wave's mean wait is many single prefills.
	one, err := Query{Model: q.Model, Device: q.Device, ISL: q.ISL, OSL: q.OSL, Concurrency: 1}.Answer()
	if err != nil {
		t.Fatal(err)
	}
	if w := (few.TTFT.Mean - many.TTFT.Mean) / (0.5 - 0.01); w < 5*one.TTFT.Mean {
		t.Errorf("first wave's mean TTFT about %g s, one request's %g s: want the wave queued", w+many.TTFT.Mean, one.TTFT.Mean)
	}
}

// The sample's expert columns: batch_size is each attention-DP rank's
// clients; moe_tp and moe_ep name the experts' layout, a dense model's 0
// or 1 the default; a disaggregated row needs its pools' sizes.
func TestBatchExperts(t *testing.T) {
	b, err := ReadBatch(strings.NewReader("model_path,system,backend,mode,isl,osl,batch_size,tp_size,attention_dp_size,moe_tp_size,moe_ep_size,gemm_quant_mode,prefill_tp_size,decode_tp_size\n" +
		"deepseek-r1,b200_sxm,trtllm,agg,1024,1024,16,1,8,1,8,nvfp4,,\n" +
		"qwen3-32b,h100_sxm,vllm,agg,1024,1024,8,2,1,0,0,fp8,,\n" +
		"qwen3-32b,h100_sxm,vllm,agg,1024,1024,8,2,1,1,1,int4_wo,,\n" +
		"deepseek-r1,b200_sxm,trtllm,agg,1024,1024,16,16,1,4,4,fp8,,\n" +
		"deepseek-r1,b200_sxm,trtllm,disagg,1024,1024,,,,,,fp8,8,8\n"))
	if err != nil || len(b.Rows) != 5 {
		t.Fatalf("%d rows, %v", len(b.Rows), err)
	}
	for i, want := range []Query{
		{TP: 1, DP: 8, EP: 8, MoETP: 1, Concurrency: 128, Weights: "fp4"},
		{TP: 2, DP: 1, Concurrency: 8, Weights: "fp8"},
		{TP: 2, DP: 1, Concurrency: 8, Weights: "int4"},
		{TP: 16, DP: 1, EP: 4, MoETP: 4, Concurrency: 16, Weights: "fp8"},
	} {
		q := b.Rows[i].Query
		if e := b.Rows[i].Err; e != nil || q.TP != want.TP || q.DP != want.DP || q.EP != want.EP || q.MoETP != want.MoETP || q.Concurrency != want.Concurrency || q.Weights != want.Weights {
			t.Errorf("row %d: %+v (%v), want %+v", i+2, q, e, want)
		}
	}
	if e := b.Rows[4].Err; e == nil || !strings.Contains(e.Error(), "decode_num_workers") {
		t.Errorf("a disaggregated row without its pools' sizes: %v", e)
	}
}
