package deploy

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/units"
)

// Search looks for the deployments of a model that meet a latency target:
// over the devices, tensor parallelism, replicas, concurrency and, given a
// GPU count, aggregated against disaggregated serving. The base query
// gives the model, engine, types and request lengths.
type Search struct {
	Base    Query    `json:"base"`
	Devices []string `json:"devices"`
	// GPUs is every deployment's GPU count (0: one replica of 1, 2, 4 or
	// 8 GPUs, aggregated).
	GPUs int64 `json:"gpus"`
	// TTFT and TPOT are the targets on the means, in seconds (0: none).
	TTFT float64 `json:"ttft_seconds"`
	TPOT float64 `json:"tpot_seconds"`
}

// Search defaults and bounds.
const (
	// MaxSearchGPUs bounds a searched deployment's GPUs.
	MaxSearchGPUs = 64
	// searchRequestsPerClient is the requests per client each run of a
	// search simulates after the first wave: fewer than an answer's, for
	// speed.
	searchRequestsPerClient = 2
)

// searchTPs and searchClients are the grids a search walks.
var (
	searchTPs     = []int64{1, 2, 4, 8}
	searchClients = []int64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
)

// Candidate is one deployment tried: its answer and why it fails the
// target ("" when it meets it).
type Candidate struct {
	Result Result `json:"result"`
	Fails  string `json:"fails,omitempty"`
}

// Layout names a candidate's parallelism, as the tables show it.
func (c Candidate) Layout() string {
	q := c.Result.Query
	if d := q.Disagg; d != nil {
		return fmt.Sprintf("disagg %d×tp%d prefill + %d×tp%d decode", d.PrefillWorkers, d.PrefillTP, d.DecodeWorkers, d.DecodeTP)
	}
	if q.EP > 1 {
		return fmt.Sprintf("agg %d×tp%d, ep%d", q.DP, q.TP, q.EP)
	}
	if q.DP > 1 {
		return fmt.Sprintf("agg %d×tp%d", q.DP, q.TP)
	}
	return fmt.Sprintf("agg tp%d", q.TP)
}

// SearchResult is every candidate, those meeting the target first by
// tokens/s per GPU, then the rest by the same.
type SearchResult struct {
	Search     Search      `json:"search"`
	Candidates []Candidate `json:"candidates"`
	// Met is how many candidates meet the target (the first Met).
	Met int `json:"met"`
}

// Validate checks the search and its base query.
func (s Search) Validate() query.Errors {
	var es query.Errors
	b := s.Base
	b.Device = "search"
	if len(s.Devices) > 0 {
		b.Device = s.Devices[0]
	}
	es = append(es, b.Validate()...)
	if len(s.Devices) == 0 {
		es = append(es, query.FieldError{Field: "devices", Value: "", Allowed: "one or more GPU names"})
	}
	if s.GPUs < 0 || s.GPUs > MaxSearchGPUs {
		es = append(es, query.FieldError{Field: "gpus", Value: strconv.FormatInt(s.GPUs, 10), Allowed: fmt.Sprintf("1 to %d GPUs (0: 1, 2, 4 or 8)", MaxSearchGPUs)})
	}
	for _, x := range []struct {
		f string
		v float64
	}{{"ttft", s.TTFT}, {"tpot", s.TPOT}} {
		if x.v < 0 || x.v > 3600 || x.v != x.v {
			es = append(es, query.FieldError{Field: x.f, Value: units.FormatDuration(x.v), Allowed: "a duration from 0 to 1 h (0: no target)"})
		}
	}
	if s.TTFT == 0 && s.TPOT == 0 {
		es = append(es, query.FieldError{Field: "ttft", Value: "", Allowed: "give --ttft, --tpot or both"})
	}
	return es
}

// Args is the command line that reproduces the search.
func (s Search) Args() query.Args {
	var a query.Args
	a.Word("deploy")
	a.Word(s.Base.Model)
	a.Add("devices", strings.Join(s.Devices, ","))
	if s.TTFT > 0 {
		a.Add("ttft", strconv.FormatFloat(s.TTFT*1e3, 'g', -1, 64)+"ms")
	}
	if s.TPOT > 0 {
		a.Add("tpot", strconv.FormatFloat(s.TPOT*1e3, 'g', -1, 64)+"ms")
	}
	if s.GPUs > 0 {
		a.Add("gpus", strconv.FormatInt(s.GPUs, 10))
	}
	b := s.Base.Filled()
	if b.Engine != DefaultEngine {
		a.Add("engine", b.Engine)
	}
	if s.Base.Weights != "" {
		a.Add("weights", s.Base.Weights)
	}
	if s.Base.KV != "" {
		a.Add("kv", s.Base.KV)
	}
	if b.ISL != DefaultISL {
		a.Add("isl", strconv.FormatInt(b.ISL, 10))
	}
	if b.OSL != DefaultOSL {
		a.Add("osl", strconv.FormatInt(b.OSL, 10))
	}
	if b.RangeRatio != 1 {
		a.Add("range-ratio", strconv.FormatFloat(b.RangeRatio, 'g', -1, 64))
	}
	return a
}

// layouts are the parallelisms a search tries on n GPUs (0: 1, 2, 4, 8);
// for a MoE model on n GPUs also attention data parallel ranks sharing
// experts split over all n (expert parallelism).
func (s Search) layouts(moe bool) []Query {
	var out []Query
	if s.GPUs == 0 {
		for _, tp := range searchTPs {
			out = append(out, Query{TP: tp, DP: 1})
		}
		return out
	}
	n := s.GPUs
	for _, tp := range searchTPs {
		if n%tp == 0 {
			out = append(out, Query{TP: tp, DP: n / tp})
			if moe && n > tp {
				out = append(out, Query{TP: tp, DP: n / tp, EP: n})
			}
		}
	}
	// Disaggregated: prefill workers on at most half the GPUs.
	for _, ptp := range searchTPs {
		for _, dtp := range searchTPs {
			for pw := int64(1); 2*pw*ptp <= n; pw++ {
				if rest := n - pw*ptp; rest%dtp == 0 {
					out = append(out, Query{TP: dtp, Disagg: &Disagg{PrefillTP: ptp, PrefillWorkers: pw, DecodeTP: dtp, DecodeWorkers: rest / dtp}})
				}
			}
		}
	}
	return out
}

// Answer runs the search, one device per goroutine (each with its own
// planner); progress, when not nil, hears after each candidate how many
// are done of how many, from one goroutine at a time.
func (s Search) Answer(progress func(done, total int)) (SearchResult, error) {
	if err := s.Validate().Err(); err != nil {
		return SearchResult{}, err
	}
	c, err := NewPlanner().config(s.Base)
	if err != nil {
		return SearchResult{}, err
	}
	layouts := s.layouts(c.Experts > 0)
	total := len(s.Devices) * len(layouts) * len(searchClients)
	out := SearchResult{Search: s}
	type devResult struct {
		cands []Candidate
		err   error
	}
	results := make([]devResult, len(s.Devices))
	var mu sync.Mutex
	done := 0
	tick := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		done += n
		if progress != nil {
			progress(done, total)
		}
	}
	var wg sync.WaitGroup
	for i, dev := range s.Devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].cands, results[i].err = s.device(dev, layouts, tick)
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.err != nil {
			return SearchResult{}, r.err
		}
		out.Candidates = append(out.Candidates, r.cands...)
	}
	sort.SliceStable(out.Candidates, func(i, j int) bool {
		a, b := out.Candidates[i], out.Candidates[j]
		if (a.Fails == "") != (b.Fails == "") {
			return a.Fails == ""
		}
		return a.Result.PerGPU > b.Result.PerGPU
	})
	for _, c := range out.Candidates {
		if c.Fails == "" {
			out.Met++
		}
	}
	return out, nil
}

// device tries every layout on one device, from few clients to many; a
// layout stops at its first concurrency past the TPOT target (more
// clients only make decoding slower) or that it cannot run at all.
func (s Search) device(dev string, layouts []Query, tick func(int)) ([]Candidate, error) {
	p := NewPlanner()
	name := dev
	if d, err := devices.Lookup(dev); err == nil {
		name = d.Name
	}
	var out []Candidate
	for _, l := range layouts {
		for i, c := range searchClients {
			q := s.Base
			q.Device, q.TP, q.DP, q.EP, q.MoETP, q.Disagg, q.Rate = dev, l.TP, max(l.DP, 1), l.EP, 0, nil, 0
			q.Concurrency = c * q.DP
			if l.Disagg != nil {
				d := *l.Disagg
				q.Disagg, q.DP = &d, 1
				q.Concurrency = c * d.DecodeWorkers
			}
			q.perClient = searchRequestsPerClient
			r, err := p.Answer(q)
			cand := Candidate{Result: r}
			stop := false
			switch {
			case err != nil:
				if fe := query.Fields(err); len(fe) > 0 && fe[0].Field != "tp" {
					return nil, err
				}
				cand.Result.Query, cand.Result.Device = q.Filled(), name
				cand.Fails, stop = err.Error(), true
			case !r.Memory.Fits:
				cand.Fails, stop = "does not fit", true
			default:
				var why []string
				if s.TTFT > 0 && r.TTFT.Mean > s.TTFT {
					why = append(why, "TTFT "+units.FormatDuration(r.TTFT.Mean)+" > "+units.FormatDuration(s.TTFT))
				}
				if s.TPOT > 0 && r.TPOT.Mean > s.TPOT {
					why = append(why, "TPOT "+units.FormatDuration(r.TPOT.Mean)+" > "+units.FormatDuration(s.TPOT))
					stop = true
				}
				cand.Fails = strings.Join(why, ", ")
			}
			out = append(out, cand)
			if stop {
				tick(len(searchClients) - i)
				break
			}
			tick(1)
		}
	}
	return out, nil
}

// Pareto is the candidates no other beats on both tokens/s per GPU and
// tokens/s per user, for one device, by tokens/s per user.
func (r SearchResult) Pareto(device string) []Candidate {
	var pts []Candidate
	for _, c := range r.Candidates {
		if c.Result.Device == device && c.Result.Memory.Fits && c.Result.PerGPU > 0 {
			pts = append(pts, c)
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].Result.PerUser > pts[j].Result.PerUser })
	var front []Candidate
	best := -1.0
	for _, c := range pts {
		if c.Result.PerGPU > best {
			front = append(front, c)
			best = c.Result.PerGPU
		}
	}
	return front
}

// Devices are the devices the candidates ran on, in the search's order
// (catalog names).
func (r SearchResult) Devices() []string {
	var out []string
	for _, c := range r.Candidates {
		if !slices.Contains(out, c.Result.Device) {
			out = append(out, c.Result.Device)
		}
	}
	sort.Strings(out)
	return out
}
