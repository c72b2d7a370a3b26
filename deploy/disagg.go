package deploy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/query"
)

// Disagg serves a query with separate pools: prefill workers compute each
// prompt's KV cache and first token, send the cache over Link to a decode
// worker, which generates the rest. Each worker is one engine replica of
// its own parallelism: TP GPUs per attention rank, DP ranks, a MoE
// model's experts split EP ways and each MoETP ways (as Query's).
type Disagg struct {
	PrefillTP      int64 `json:"prefill_tp"`
	PrefillDP      int64 `json:"prefill_dp"`
	PrefillEP      int64 `json:"prefill_ep"`
	PrefillMoETP   int64 `json:"prefill_moe_tp"`
	PrefillWorkers int64 `json:"prefill_workers"`
	DecodeTP       int64 `json:"decode_tp"`
	DecodeDP       int64 `json:"decode_dp"`
	DecodeEP       int64 `json:"decode_ep"`
	DecodeMoETP    int64 `json:"decode_moe_tp"`
	DecodeWorkers  int64 `json:"decode_workers"`
	// Link carries the KV cache from a prefill GPU to a decode GPU:
	// nvlink (one host), nvl72 (an NVLink switch across the rack), ib or
	// roce (between hosts).
	Link string `json:"link"`
	// GPUs, when set, is the deployment's GPUs in all: with neither
	// worker count given, the answer chooses the split (the one of most
	// tokens/s at the load); with one given, the other is what is left.
	GPUs int64 `json:"gpus,omitempty"`
}

// Links are the KV transfer's links.
var Links = []string{"nvlink", "nvl72", "ib", "roce"}

// NICBytesPerSecond is one GPU's network link between hosts for ib and
// roce: 400 Gb/s, a ConnectX-7 NIC per GPU as DGX and HGX H100/B200
// systems have (NVIDIA ConnectX-7 datasheet: 400 Gb/s InfiniBand NDR or
// Ethernet).
const NICBytesPerSecond = 400e9 / 8

// disaggIterations is how often the pools' latencies are solved against
// each other: the decode pool's TPOT sets the rate of requests the prefill
// pool sees, whose TTFT sets the clients' cycle; damped halfway each time.
const disaggIterations = 4

func (d Disagg) filled(q Query) Disagg {
	if d.PrefillTP == 0 {
		d.PrefillTP = q.TP
	}
	if d.DecodeTP == 0 {
		d.DecodeTP = q.TP
	}
	if d.PrefillDP == 0 {
		d.PrefillDP = 1
	}
	if d.DecodeDP == 0 {
		d.DecodeDP = 1
	}
	pg, dg := d.PrefillTP*d.PrefillDP, d.DecodeTP*d.DecodeDP
	switch {
	case d.GPUs > 0 && d.PrefillWorkers > 0 && d.DecodeWorkers == 0 && d.GPUs > d.PrefillWorkers*pg:
		d.DecodeWorkers = (d.GPUs - d.PrefillWorkers*pg) / dg
	case d.GPUs > 0 && d.DecodeWorkers > 0 && d.PrefillWorkers == 0 && d.GPUs > d.DecodeWorkers*dg:
		d.PrefillWorkers = (d.GPUs - d.DecodeWorkers*dg) / pg
	case d.GPUs > 0 && d.PrefillWorkers == 0 && d.DecodeWorkers == 0:
		// Chosen when answered (splits).
	default:
		if d.PrefillWorkers == 0 {
			d.PrefillWorkers = 1
		}
		if d.DecodeWorkers == 0 {
			d.DecodeWorkers = 1
		}
	}
	d.PrefillEP, d.PrefillMoETP = experts(d.PrefillTP, d.PrefillDP, d.PrefillEP, d.PrefillMoETP)
	d.DecodeEP, d.DecodeMoETP = experts(d.DecodeTP, d.DecodeDP, d.DecodeEP, d.DecodeMoETP)
	if d.Link == "" {
		d.Link = "nvlink"
		if max(d.gpus(), d.GPUs) > 8 {
			d.Link = "ib"
		}
	}
	return d
}

// splits are the worker counts that fill d.GPUs, prefill workers first:
// every count of prefill workers whose GPUs leave a whole number of decode
// workers.
func (d Disagg) splits() []Disagg {
	pg, dg := d.PrefillTP*d.PrefillDP, d.DecodeTP*d.DecodeDP
	var out []Disagg
	for p := int64(1); p*pg+dg <= d.GPUs; p++ {
		if (d.GPUs-p*pg)%dg == 0 {
			x := d
			x.PrefillWorkers, x.DecodeWorkers = p, (d.GPUs-p*pg)/dg
			out = append(out, x)
		}
	}
	return out
}

func (d Disagg) gpus() int64 {
	return d.PrefillTP*d.PrefillDP*d.PrefillWorkers + d.DecodeTP*d.DecodeDP*d.DecodeWorkers
}

func (d Disagg) prefill() layout {
	return layout{d.PrefillTP, d.PrefillDP, d.PrefillEP, d.PrefillMoETP}
}
func (d Disagg) decode() layout { return layout{d.DecodeTP, d.DecodeDP, d.DecodeEP, d.DecodeMoETP} }

func (d Disagg) validate(osl int64) query.Errors {
	var es query.Errors
	choose := d.GPUs > 0 && d.PrefillWorkers == 0 && d.DecodeWorkers == 0
	for _, x := range []struct {
		field string
		v     int64
	}{{"prefill-tp", d.PrefillTP}, {"prefill-dp", d.PrefillDP}, {"prefill-workers", d.PrefillWorkers},
		{"decode-tp", d.DecodeTP}, {"decode-dp", d.DecodeDP}, {"decode-workers", d.DecodeWorkers}, {"gpus", d.GPUs}} {
		if x.v == 0 && (x.field == "gpus" || choose && strings.HasSuffix(x.field, "workers")) {
			continue
		}
		if x.v < 1 || x.v > MaxGPUs {
			es = append(es, query.FieldError{Field: x.field, Value: strconv.FormatInt(x.v, 10), Allowed: fmt.Sprintf("1 to %d", MaxGPUs)})
		}
	}
	if len(es) > 0 {
		return es
	}
	switch {
	case choose && len(d.splits()) == 0:
		es = append(es, query.FieldError{Field: "gpus", Value: strconv.FormatInt(d.GPUs, 10),
			Allowed: fmt.Sprintf("a sum of whole workers, at least one of each (GPUs per worker: prefill %d, decode %d)", d.PrefillTP*d.PrefillDP, d.DecodeTP*d.DecodeDP)})
	case !choose && d.GPUs > 0 && d.gpus() != d.GPUs:
		es = append(es, query.FieldError{Field: "gpus", Value: strconv.FormatInt(d.GPUs, 10),
			Allowed: fmt.Sprintf("the workers' GPUs in all (%d), or leave a worker count out for the answer to choose", d.gpus())})
	}
	if d.gpus() > MaxGPUs || d.GPUs > MaxGPUs {
		es = append(es, query.FieldError{Field: "decode-workers", Value: strconv.FormatInt(d.DecodeWorkers, 10), Allowed: fmt.Sprintf("at most %d GPUs in all", MaxGPUs)})
	}
	es = append(es, checkExperts(d.PrefillTP, d.PrefillDP, d.PrefillEP, d.PrefillMoETP, "prefill-")...)
	es = append(es, checkExperts(d.DecodeTP, d.DecodeDP, d.DecodeEP, d.DecodeMoETP, "decode-")...)
	ok := false
	for _, l := range Links {
		ok = ok || d.Link == l
	}
	if !ok {
		es = append(es, query.FieldError{Field: "link", Value: d.Link, Allowed: "nvlink, nvl72, ib or roce"})
	}
	if osl < 2 {
		es = append(es, query.FieldError{Field: "osl", Value: strconv.FormatInt(osl, 10), Allowed: "2 or more tokens when disaggregated (the prefill worker makes the first)"})
	}
	return es
}

func (d Disagg) args(a *query.Args) {
	a.Bool("disagg", true)
	for _, x := range []struct {
		flag string
		v    int64
	}{{"prefill-tp", d.PrefillTP}, {"prefill-dp", d.PrefillDP}, {"prefill-ep", d.PrefillEP}, {"prefill-moe-tp", d.PrefillMoETP}, {"prefill-workers", d.PrefillWorkers},
		{"decode-tp", d.DecodeTP}, {"decode-dp", d.DecodeDP}, {"decode-ep", d.DecodeEP}, {"decode-moe-tp", d.DecodeMoETP}, {"decode-workers", d.DecodeWorkers}} {
		if x.v > 0 {
			a.Add(x.flag, strconv.FormatInt(x.v, 10))
		}
	}
	if d.Link != "" {
		a.Add("link", d.Link)
	}
	if d.GPUs > 0 {
		a.Add("gpus", strconv.FormatInt(d.GPUs, 10))
	}
}

// DisaggResult is what a disaggregated deployment adds to a Result.
type DisaggResult struct {
	Disagg         Disagg  `json:"pools"`
	PrefillMemory  Memory  `json:"prefill_memory"`
	LinkBytesPerS  float64 `json:"link_bytes_per_second"`
	Transfer       float64 `json:"kv_transfer_seconds"`
	PrefillTTFT    Stat    `json:"prefill_ttft"`
	RequestsPerSec float64 `json:"requests_per_second"`
}

// answerDisagg answers q with its prefill and decode pools. The decode
// workers are simulated as closed loops whose clients spend the TTFT
// away, the prefill workers at the request rate those loops make, until
// the two agree.
func (p *Planner) answerDisagg(q Query) (Result, error) {
	d := *q.Disagg
	if d.PrefillWorkers == 0 {
		return p.chooseSplit(q)
	}
	qp, qd := q, q
	qp.TP, qd.TP = d.PrefillTP, d.DecodeTP
	rp, err := p.prepare(qp, d.prefill())
	if err != nil {
		return Result{}, err
	}
	rd, err := p.prepare(qd, d.decode())
	if err != nil {
		return Result{}, err
	}
	res := Result{Query: q, Model: rd.c.Name, Device: rd.m.Device().Name, Engine: rd.e, GPUs: d.gpus(), Memory: rd.memory}
	dr := &DisaggResult{Disagg: d, PrefillMemory: rp.memory}
	res.Disagg = dr
	res.Memory.Fits = rp.memory.Fits && rd.memory.Fits
	if !res.Memory.Fits {
		res.Notes = append(res.Notes, "does not fit: a prefill or decode worker's KV pool holds no request")
		return res, nil
	}
	dr.LinkBytesPerS = NICBytesPerSecond
	if d.Link == "nvlink" || d.Link == "nvl72" {
		dr.LinkBytesPerS = rp.m.Device().Peer().BytesPerSecond
	}
	if dr.LinkBytesPerS <= 0 {
		return Result{}, fmt.Errorf("%s has no GPU-to-GPU link in the catalog: give --link ib or roce", res.Device)
	}
	// Each prefill GPU sends its shard of the cache over its own link; each
	// attention rank serves its share of the load.
	pRanks, dRanks := d.PrefillWorkers*d.PrefillDP, d.DecodeWorkers*d.DecodeDP
	dr.Transfer = float64(q.ISL) * rp.memory.KVPerToken / dr.LinkBytesPerS
	e := rd.e
	rate := q.Rate
	ttft := 0.0
	var runP, runD run
	for i := range disaggIterations {
		dl := load{isl: q.ISL, osl: q.OSL, ratio: q.RangeRatio, prefilled: true, think: ttft,
			clients: ceilDiv(q.Concurrency, dRanks), requests: ceilDiv(q.Requests, dRanks), rate: q.Rate / float64(dRanks)}
		if runD, err = simulate(e, rd.pr, rd.blocks, dl); err != nil {
			return Result{}, fmt.Errorf("decode worker: %w", err)
		}
		tpot := stat(runD.tpot).Mean
		if q.Rate == 0 {
			rate = float64(q.Concurrency) / (ttft + float64(q.OSL-1)*tpot)
		}
		pl := load{isl: q.ISL, osl: 1, ratio: q.RangeRatio, rate: rate / float64(pRanks), requests: max(ceilDiv(q.Requests, pRanks), 64)}
		if runP, err = simulate(e, rp.pr, rp.blocks, pl); err != nil {
			return Result{}, fmt.Errorf("prefill worker: %w", err)
		}
		next := stat(runP.ttft).Mean + dr.Transfer
		if i == 0 || q.Rate > 0 {
			ttft = next
		} else {
			ttft = (ttft + next) / 2
		}
	}
	dr.PrefillTTFT, dr.RequestsPerSec = stat(runP.ttft), rate
	if q.Rate == 0 {
		// A benchmark's first wave: every client's prompt at the prefill
		// pool at once, weighed as its share of the requests.
		b := load{isl: q.ISL, osl: 1, ratio: q.RangeRatio, burst: true, clients: ceilDiv(q.Concurrency, pRanks), requests: ceilDiv(q.Concurrency, pRanks)}
		first, err := simulate(e, rp.pr, rp.blocks, b)
		if err != nil {
			return Result{}, fmt.Errorf("prefill worker: %w", err)
		}
		dr.PrefillTTFT = *mix(first.ttft, float64(min(q.Concurrency, q.Requests))/float64(q.Requests), runP.ttft)
	}
	res.TTFT = Stat{Mean: dr.PrefillTTFT.Mean + dr.Transfer, P90: dr.PrefillTTFT.P90 + dr.Transfer}
	res.TPOT = stat(runD.tpot)
	n := float64(q.OSL - 1)
	res.E2E = Stat{Mean: res.TTFT.Mean + n*res.TPOT.Mean, P90: res.TTFT.P90 + n*res.TPOT.P90}
	res.TokensPerSecond = float64(runD.outTokens) / runD.duration * float64(dRanks)
	res.PerGPU = res.TokensPerSecond / float64(res.GPUs)
	if res.TPOT.Mean > 0 {
		res.PerUser = 1 / res.TPOT.Mean
	}
	res.Steps, res.Preemptions, res.MeanBatch = runD.steps, runD.preemptions, runD.batch
	res.Simulated = int64(len(runD.e2e)) * dRanks
	return res, nil
}

// chooseSplit answers q with each split of its GPUs between prefill and
// decode workers and keeps the one of most tokens/s, as an operator sizing
// the pools for the load would: at a fixed concurrency it is the one of
// least time per request, neither pool starving the other (too few
// prefill workers queue the prompts and lengthen TTFT, too few decode
// workers lengthen TPOT).
func (p *Planner) chooseSplit(q Query) (Result, error) {
	var best Result
	splits := q.Disagg.splits()
	for i, d := range splits {
		x := q
		x.Disagg = &d
		r, err := p.answerDisagg(x)
		if err != nil {
			return Result{}, err
		}
		if i == 0 || r.Memory.Fits && (!best.Memory.Fits || r.TokensPerSecond > best.TokensPerSecond) {
			best = r
		}
	}
	d := best.Disagg.Disagg
	best.Query = q
	best.Notes = append(best.Notes, fmt.Sprintf("split chosen: %d prefill and %d decode workers of the %d GPUs, the most tokens/s of the %d splits at this load",
		d.PrefillWorkers, d.DecodeWorkers, d.GPUs, len(splits)))
	return best, nil
}
