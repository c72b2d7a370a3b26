// Package deploy answers how a model serves under load: an engine (vLLM,
// SGLang, TensorRT-LLM) simulated step by step with continuous batching,
// chunked prefill, paged KV blocks, admission and preemption, each step
// priced by model's op lists on roofline; disaggregated prefill and decode
// pools; and the search for the deployment that meets a latency target at
// the most tokens per GPU.
package deploy

import (
	"fmt"
	"strconv"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/query"
)

// Query is one deployment under one load. The zero value of every field
// but Model and Device means its default.
type Query struct {
	// Model is a built-in name or Hugging Face id, or the name of the
	// config the edge read into Config (a file's).
	Model  string        `json:"model"`
	Config *model.Config `json:"-"`
	Device string        `json:"device"`
	Engine string        `json:"engine"`
	// TP is the tensor-parallel degree of one replica; DP the replicas
	// (attention data parallel), each serving its share of the clients.
	TP int64 `json:"tp"`
	DP int64 `json:"dp"`
	// EP is a MoE model's expert parallelism: its routed experts split EP
	// ways, each GPU holding Experts/EP of them, each expert split MoETP
	// ways. The experts span MoETP × EP GPUs: TP (every replica holds all
	// of them) or TP × DP (the replicas' attention is data parallel and
	// they share one set of experts, the tokens sent to their experts' GPUs
	// and back each layer). Defaults: EP 1, MoETP TP; with EP alone, MoETP
	// TP × DP / EP.
	EP    int64 `json:"ep"`
	MoETP int64 `json:"moe_tp"`
	// Weights is the linear layers' type (bf16, fp8, fp4, int4; default:
	// the config's quantization, else bf16); KV the cache's (default bf16).
	Weights string `json:"weights"`
	KV      string `json:"kv"`
	// ISL and OSL are every request's input and output tokens; with
	// RangeRatio below 1 each request's are drawn uniformly from
	// RangeRatio × ISL to ISL and RangeRatio × OSL to OSL, as a benchmark's
	// random dataset draws them (--random-range-ratio; InferenceMAX's runs
	// use 0.8). Default 1: every request of ISL and OSL.
	ISL        int64   `json:"isl"`
	OSL        int64   `json:"osl"`
	RangeRatio float64 `json:"range_ratio"`
	// Concurrency is the closed-loop clients; Rate, when set instead,
	// Poisson arrivals per second.
	Concurrency int64   `json:"concurrency"`
	Rate        float64 `json:"rate,omitempty"`
	// Requests is how many requests the run serves (default
	// RequestsPerClient per client, or DefaultRateRequests at a rate).
	Requests int64 `json:"requests"`
	// MaxTokens, MaxSeqs and MemoryShare override the engine's defaults.
	MaxTokens   int64   `json:"max_num_batched_tokens,omitempty"`
	MaxSeqs     int64   `json:"max_num_seqs,omitempty"`
	MemoryShare float64 `json:"gpu_memory_utilization,omitempty"`
	// Disagg, when set, serves with separate prefill and decode pools.
	Disagg *Disagg `json:"disagg,omitempty"`
	// perClient, when set, bounds the requests per client simulated after
	// the first wave (a search's runs simulate fewer).
	perClient int64
}

// simPerClient is the requests per client a closed-loop run simulates
// after its first wave.
func (q Query) simPerClient() int64 {
	if q.perClient > 0 {
		return q.perClient
	}
	return simRequestsPerClient
}

// Defaults of a query.
const (
	DefaultEngine      = "vllm"
	DefaultISL         = 1024
	DefaultOSL         = 1024
	DefaultConcurrency = 16
	// RequestsPerClient is how many requests each closed-loop client
	// sends in a benchmark, the first wave included: InferenceMAX's
	// benchmark_serving runs send 10 × the concurrency (--num-prompts
	// $((CONC * 10)) --max-concurrency $CONC --request-rate inf).
	RequestsPerClient = 10
	// DefaultRateRequests is the requests of an open-loop run.
	DefaultRateRequests = 200
	// MaxRequests bounds a run's requests, MaxTokensPerRequest its
	// lengths.
	MaxRequests         = 100_000
	MaxTokensPerRequest = 1 << 20
	MaxGPUs             = 1024
)

// Filled is q with every default applied (the engine's included).
func (q Query) Filled() Query {
	if q.Engine == "" {
		q.Engine = DefaultEngine
	}
	if e, err := LookupEngine(q.Engine); err == nil {
		q.Engine = e.Name
	}
	if q.TP == 0 {
		q.TP = 1
	}
	if q.DP == 0 {
		q.DP = 1
	}
	q.EP, q.MoETP = experts(q.TP, q.DP, q.EP, q.MoETP)
	if q.ISL == 0 {
		q.ISL = DefaultISL
	}
	if q.OSL == 0 {
		q.OSL = DefaultOSL
	}
	if q.RangeRatio == 0 {
		q.RangeRatio = 1
	}
	if q.Concurrency == 0 && q.Rate == 0 {
		q.Concurrency = DefaultConcurrency
	}
	if q.Disagg != nil {
		d := q.Disagg.filled(q)
		q.Disagg = &d
	}
	if q.Requests == 0 {
		if q.Rate > 0 {
			q.Requests = DefaultRateRequests
		} else {
			q.Requests = RequestsPerClient * q.Concurrency
		}
	}
	return q
}

// experts fills an expert layout's defaults: EP 1 and MoETP tp, or with EP
// alone the experts over all tp × dp GPUs.
func experts(tp, dp, ep, moeTP int64) (int64, int64) {
	switch {
	case ep == 0 && moeTP == 0:
		return 1, tp
	case moeTP == 0:
		return ep, max(tp*dp/ep, 1)
	case ep == 0:
		return max(tp*dp/moeTP, 1), moeTP
	}
	return ep, moeTP
}

// checkExperts refuses an expert layout that model.ExpertLayout refuses
// or that spans neither one replica's GPUs nor all of them (the attention
// groups sharing the experts are one replica or all dp).
func checkExperts(tp, dp, ep, moeTP int64, prefix string) query.Errors {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	switch {
	case ep < 1 || ep > MaxGPUs:
		return query.Errors{{Field: prefix + "ep", Value: i(ep), Allowed: fmt.Sprintf("1 to %d GPUs", MaxGPUs)}}
	case moeTP < 1 || moeTP > MaxGPUs:
		return query.Errors{{Field: prefix + "moe-tp", Value: i(moeTP), Allowed: fmt.Sprintf("1 to %d GPUs", MaxGPUs)}}
	}
	if groups, err := model.ExpertLayout(tp, ep, moeTP); err != nil || groups != 1 && groups != dp {
		return query.Errors{{Field: prefix + "ep", Value: i(ep), Allowed: fmt.Sprintf("moe-tp × ep (%d × %d) spans tp (%d: each replica holds every expert) or tp × dp (%d: the replicas share the experts)", moeTP, ep, tp, tp*dp)}}
	}
	return nil
}

// engine is the query's engine profile with its overrides.
func (q Query) engine() (Engine, error) {
	e, err := LookupEngine(q.Engine)
	if err != nil {
		return Engine{}, err
	}
	if q.MaxTokens > 0 {
		e.MaxTokens = q.MaxTokens
	}
	if q.MaxSeqs > 0 {
		e.MaxSeqs = q.MaxSeqs
	}
	if q.MemoryShare > 0 {
		e.MemoryShare = q.MemoryShare
	}
	return e, nil
}

// Validate checks every field of the filled query, each error naming the
// CLI flag.
func (q Query) Validate() query.Errors {
	q = q.Filled()
	var es query.Errors
	bad := func(field, value, allowed string) {
		es = append(es, query.FieldError{Field: field, Value: value, Allowed: allowed})
	}
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	if q.Model == "" && q.Config == nil {
		bad("model", "", "give a built-in name, a Hugging Face id or a config.json")
	}
	if q.Device == "" {
		bad("device", "", "give a GPU name (see 'gpucalc devices')")
	}
	e, err := q.engine()
	if err != nil {
		bad("engine", q.Engine, err.Error())
	}
	for _, x := range []struct {
		field string
		v     int64
	}{{"tp", q.TP}, {"dp", q.DP}} {
		if x.v < 1 || x.v > MaxGPUs {
			bad(x.field, i(x.v), fmt.Sprintf("1 to %d GPUs", MaxGPUs))
		}
	}
	if q.TP*q.DP > MaxGPUs {
		bad("dp", i(q.DP), fmt.Sprintf("tp × dp at most %d GPUs", MaxGPUs))
	} else if q.TP >= 1 && q.DP >= 1 {
		es = append(es, checkExperts(q.TP, q.DP, q.EP, q.MoETP, "")...)
	}
	if q.Weights != "" {
		if _, err := model.ParseWeightType(q.Weights); err != nil {
			bad("weights", q.Weights, err.Error())
		}
	}
	if q.KV != "" {
		if _, err := devices.ParseDType(q.KV); err != nil {
			bad("kv", q.KV, err.Error())
		}
	}
	for _, x := range []struct {
		field string
		v     int64
	}{{"isl", q.ISL}, {"osl", q.OSL}} {
		if x.v < 1 || x.v > MaxTokensPerRequest {
			bad(x.field, i(x.v), fmt.Sprintf("1 to %d tokens", MaxTokensPerRequest))
		}
	}
	switch {
	case q.Concurrency < 0 || q.Concurrency > MaxRequests:
		bad("concurrency", i(q.Concurrency), fmt.Sprintf("1 to %d clients", MaxRequests))
	case q.Rate < 0 || q.Rate > 1e6 || q.Rate != q.Rate:
		bad("rate", strconv.FormatFloat(q.Rate, 'g', -1, 64), "requests per second, more than 0, at most 1e6")
	case q.Rate > 0 && q.Concurrency > 0:
		bad("rate", strconv.FormatFloat(q.Rate, 'g', -1, 64), "give a request rate or a concurrency, not both")
	}
	if q.Requests < 1 || q.Requests > MaxRequests {
		bad("requests", i(q.Requests), fmt.Sprintf("1 to %d requests", MaxRequests))
	}
	if q.RangeRatio <= 0 || q.RangeRatio > 1 || q.RangeRatio != q.RangeRatio {
		bad("range-ratio", strconv.FormatFloat(q.RangeRatio, 'g', -1, 64), "a share of ISL and OSL, more than 0, at most 1 (1: every request of ISL and OSL)")
	}
	if q.MaxTokens < 0 || q.MaxTokens > MaxTokensPerRequest {
		bad("max-tokens", i(q.MaxTokens), fmt.Sprintf("1 to %d tokens a step (0: the engine's default)", MaxTokensPerRequest))
	}
	if q.MaxSeqs < 0 || q.MaxSeqs > MaxRequests {
		bad("max-seqs", i(q.MaxSeqs), fmt.Sprintf("1 to %d sequences (0: the engine's default)", MaxRequests))
	}
	if q.MemoryShare < 0 || q.MemoryShare > 1 || q.MemoryShare != q.MemoryShare {
		bad("gpu-memory-utilization", strconv.FormatFloat(q.MemoryShare, 'g', -1, 64), "a share of the GPU's memory, more than 0, at most 1 (0: the engine's default)")
	}
	if q.Disagg != nil {
		es = append(es, q.Disagg.validate(q.OSL)...)
	}
	if err == nil && !e.Chunked && q.ISL > e.MaxTokens {
		bad("isl", i(q.ISL), fmt.Sprintf("at most %s's step budget of %d tokens, which prefills a prompt whole (raise --max-tokens)", e.Title, e.MaxTokens))
	}
	return es
}

// Args is the command line that reproduces q: the flags that differ from
// their defaults.
func (q Query) Args() query.Args {
	f := q.Filled()
	var a query.Args
	a.Word("deploy")
	a.Word(q.Model)
	a.Add("device", q.Device)
	if f.Engine != DefaultEngine {
		a.Add("engine", f.Engine)
	}
	n := func(flag string, v, def int64) {
		if v != def && v != 0 {
			a.Add(flag, strconv.FormatInt(v, 10))
		}
	}
	n("tp", f.TP, 1)
	n("dp", f.DP, 1)
	n("ep", f.EP, 1)
	if def := max(f.TP*f.DP/f.EP, 1); f.EP == 1 {
		n("moe-tp", f.MoETP, f.TP)
	} else {
		n("moe-tp", f.MoETP, def)
	}
	if q.Weights != "" {
		a.Add("weights", q.Weights)
	}
	if q.KV != "" {
		a.Add("kv", q.KV)
	}
	n("isl", f.ISL, DefaultISL)
	n("osl", f.OSL, DefaultOSL)
	if f.RangeRatio != 1 {
		a.Add("range-ratio", strconv.FormatFloat(f.RangeRatio, 'g', -1, 64))
	}
	if q.Rate > 0 {
		a.Add("rate", strconv.FormatFloat(q.Rate, 'g', -1, 64))
		n("requests", f.Requests, DefaultRateRequests)
	} else {
		n("concurrency", f.Concurrency, DefaultConcurrency)
		n("requests", f.Requests, RequestsPerClient*f.Concurrency)
	}
	n("max-tokens", q.MaxTokens, 0)
	n("max-seqs", q.MaxSeqs, 0)
	if q.MemoryShare > 0 {
		a.Add("gpu-memory-utilization", strconv.FormatFloat(q.MemoryShare, 'g', -1, 64))
	}
	if q.Disagg != nil {
		q.Disagg.args(&a)
	}
	return a
}
