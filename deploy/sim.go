package deploy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// load is the traffic a simulation serves: closed-loop clients (each
// sends its next request when its last one ends, as benchmark tools run
// a concurrency) or an open-loop Poisson rate, Requests in all, each of
// ISL prompt tokens and OSL output tokens.
type load struct {
	clients  int64
	rate     float64
	requests int64
	isl, osl int64
	// prefilled: requests arrive with their prompt's KV and first token
	// (a disaggregated decode worker); think is a closed-loop client's
	// time between a request's end and its next one's arrival here (the
	// prefill pool's, in a decode worker).
	prefilled bool
	think     float64
	// burst: every client's first request arrives at once (a benchmark's
	// start), and the run ends when each has its first token.
	burst bool
	// ratio: each request's lengths are drawn uniformly from ratio × ISL
	// to ISL and ratio × OSL to OSL (1: every request of ISL and OSL).
	ratio float64
}

// newLengths is the source of l's requests' lengths, fixed by the load so
// that equal queries give equal answers.
func newLengths(l load) *rand.Rand { return rand.New(rand.NewPCG(lengthSeed, uint64(l.requests))) }

// newSeq is a request arriving at t, its lengths drawn as the load's
// ratio says (a benchmark's random dataset: numpy's randint from
// ratio × length to length).
func (sim *simulator) newSeq(t float64) *seq {
	l := sim.l
	isl, osl := l.isl, l.osl
	if l.ratio > 0 && l.ratio < 1 {
		draw := func(n int64) int64 {
			lo := int64(l.ratio * float64(n))
			return max(lo+sim.lengths.Int64N(n-lo+1), 1)
		}
		isl, osl = draw(isl), draw(osl)
	}
	if l.prefilled {
		return &seq{arrival: t, first: t, isl: isl, osl: osl, target: isl, done: isl, gen: 1, started: true, emitted: true}
	}
	return &seq{arrival: t, isl: isl, osl: osl, target: isl}
}

// seq is one request in the engine.
type seq struct {
	arrival, first float64
	// isl and osl are its prompt's and output's tokens.
	isl, osl int64
	// target is the tokens to prefill: the prompt, or after a preemption
	// the prompt and the tokens generated so far (recomputed).
	target, done int64
	gen          int64 // output tokens produced
	held         int64 // KV blocks held
	started      bool
	live         bool // in the running list
	// ttft is the time to first token as the client sees it, set when
	// the engine emits the token (emitted): at the end of its prefill's
	// step, or of the step after it under an overlap scheduler.
	ttft    float64
	emitted bool
}

// run is what a simulation measured.
type run struct {
	ttft, tpot, e2e []float64
	// ttftStat, where set, is the TTFT over a benchmark's requests (see
	// closedLoop) rather than stat(ttft).
	ttftStat    *Stat
	duration    float64
	outTokens   int64
	steps       int
	preemptions int
	// batch is the mean of the sequences in a step, weighted by its time.
	batch float64
}

// maxSteps bounds a simulation: a load that needs more engine steps than
// this is refused rather than left running.
const maxSteps = 2_000_000

// arrivalSeed fixes the Poisson arrivals of a request rate, and
// lengthSeed the requests' lengths drawn under a range ratio, so that equal
// queries give equal answers.
const (
	arrivalSeed = 34
	lengthSeed  = 35
)

type chunk struct {
	s *seq
	q int64
}

// simulator is one engine replica serving a load.
type simulator struct {
	e    Engine
	p    *pricer
	l    load
	free int64
	now  float64
	// The queue is front (preempted sequences, the last preempted on
	// top) then waiting (arrivals, first come first served, from head).
	front   []*seq
	waiting []*seq
	head    int
	running []*seq
	out     run
	// formed is when the batch of the step about to run was formed: its
	// start, or under an overlap scheduler the previous step's start
	// (the next batch is built while the GPU runs the current one). A
	// request that arrives after it waits for the next step.
	formed float64
	// pending are the sequences whose first token an overlap scheduler
	// emits at the end of the next step; firsts counts the first tokens
	// emitted.
	pending []*seq
	firsts  int64
	// last is the previous step's time.
	last float64
	// lengths draws the requests' lengths.
	lengths *rand.Rand
	// dbuf and cbuf are schedule's slices, reused step after step.
	dbuf []*seq
	cbuf []chunk
}

func (sim *simulator) blocks(tokens int64) int64 {
	return (tokens + sim.e.BlockSize - 1) / sim.e.BlockSize
}

// grow gives s blocks for tokens, preempting the newest running sequences
// while none are free; false when s itself was preempted.
func (sim *simulator) grow(s *seq, tokens int64) bool {
	need := sim.blocks(tokens) - s.held
	for need > sim.free {
		v := sim.running[len(sim.running)-1]
		sim.preempt(v)
		if v == s {
			return false
		}
	}
	if need > 0 {
		sim.free -= need
		s.held += need
	}
	return true
}

// preempt drops s's blocks and puts it at the head of the queue, to
// recompute its prompt and what it generated (vLLM's recompute preemption,
// SGLang's retraction).
func (sim *simulator) preempt(s *seq) {
	for i, r := range sim.running {
		if r == s {
			sim.running = append(sim.running[:i], sim.running[i+1:]...)
			break
		}
	}
	sim.free += s.held
	s.held, s.done, s.target, s.live = 0, 0, s.isl+s.gen, false
	sim.front = append(sim.front, s)
	sim.out.preemptions++
}

// admit moves waiting requests into the step while the budget, the
// sequence limit and the KV blocks allow, first come first served.
func (sim *simulator) admit(budget int64, chunks []chunk) ([]chunk, int64) {
	e := sim.e
	for sim.queued() > 0 && budget > 0 && int64(len(sim.running)) < e.MaxSeqs {
		s := sim.next()
		rem := s.target - s.done
		if !e.Chunked && rem > budget {
			break
		}
		q := min(rem, budget)
		reserve := s.done + q
		if s.gen > 0 {
			reserve = s.isl + s.gen
		}
		if e.Reserve == ReserveRequest {
			reserve = s.isl + s.osl
		}
		need := sim.blocks(reserve)
		if need > sim.free {
			break
		}
		sim.free -= need
		s.held = need
		sim.pop()
		sim.running = append(sim.running, s)
		s.live = true
		if q > 0 {
			chunks = append(chunks, chunk{s, q})
			budget -= q
		}
	}
	return chunks, budget
}

func (sim *simulator) queued() int { return len(sim.front) + len(sim.waiting) - sim.head }

func (sim *simulator) next() *seq {
	if n := len(sim.front); n > 0 {
		return sim.front[n-1]
	}
	return sim.waiting[sim.head]
}

func (sim *simulator) pop() {
	if n := len(sim.front); n > 0 {
		sim.front = sim.front[:n-1]
		return
	}
	sim.waiting[sim.head] = nil
	sim.head++
	if sim.head > 1024 && sim.head*2 > len(sim.waiting) {
		sim.waiting = append(sim.waiting[:0], sim.waiting[sim.head:]...)
		sim.head = 0
	}
}

// schedule builds the next step: the decoding sequences and the prefill
// chunks, as the engine's scheduler does.
func (sim *simulator) schedule() (decodes []*seq, chunks []chunk) {
	decodes, chunks = sim.dbuf[:0], sim.cbuf[:0]
	defer func() { sim.dbuf, sim.cbuf = decodes, chunks }()
	e := sim.e
	budget := e.MaxTokens
	preempted := sim.out.preemptions
	// Running prefills continue (chunked), ahead of new requests.
	for i := 0; i < len(sim.running) && budget > 0; i++ {
		s := sim.running[i]
		if s.done >= s.target {
			continue
		}
		q := min(s.target-s.done, budget)
		if e.Reserve == ReservePrompt && !sim.grow(s, s.done+q) {
			continue
		}
		chunks = append(chunks, chunk{s, q})
		budget -= q
	}
	if !e.Mixed {
		// A prefill batch runs on its own, ahead of decoding.
		chunks, _ = sim.admit(budget, chunks)
		if len(chunks) > 0 {
			return nil, chunks
		}
	}
	for i := 0; i < len(sim.running) && budget > 0; i++ {
		s := sim.running[i]
		if s.done < s.target || inChunks(chunks, s) {
			continue
		}
		if e.Reserve == ReservePrompt && !sim.grow(s, s.isl+s.gen) {
			i-- // s left the running list
			continue
		}
		decodes = append(decodes, s)
		budget--
	}
	if sim.out.preemptions != preempted {
		// A prefill scheduled above may have been preempted since.
		kept := chunks[:0]
		for _, c := range chunks {
			if c.s.live {
				kept = append(kept, c)
			}
		}
		chunks = kept
	} else if e.Mixed {
		// vLLM admits nothing new in a step that had to preempt.
		chunks, _ = sim.admit(budget, chunks)
	}
	return decodes, chunks
}

func inChunks(chunks []chunk, s *seq) bool {
	for _, c := range chunks {
		if c.s == s {
			return true
		}
	}
	return false
}

// cycle estimates the GPU's work between a client's requests at the
// load's concurrency, over which the clients of a mixed engine (prefill
// chunks riding in the decode steps) spread: every client's prompt
// prefilled once and the output's decode steps of every client. Spread
// over less, the clients' prompts outrun the engine and pile into one
// queue that then moves in lockstep, which measured runs of vLLM and
// TensorRT-LLM do not show: their chunks spread a wave of prompts over
// the steps that follow it.
func (sim *simulator) cycle() (float64, error) {
	l := sim.l
	n := min(l.clients, sim.e.MaxSeqs)
	s := &seq{isl: l.isl, osl: l.osl, target: l.isl}
	prefill, err := sim.stepTime(nil, []chunk{{s, l.isl}})
	if err != nil {
		return 0, err
	}
	ds := make([]*seq, n)
	for i := range ds {
		ds[i] = &seq{isl: l.isl, osl: l.osl, gen: l.osl / 2}
	}
	step, err := sim.stepTime(ds, nil)
	return float64(n)*prefill + float64(l.osl)*step, err
}

// stepTime prices a step.
func (sim *simulator) stepTime(decodes []*seq, chunks []chunk) (float64, error) {
	var tokens, emit, ctx int64
	for _, s := range decodes {
		ctx += s.isl + s.gen
	}
	tokens, emit = int64(len(decodes)), int64(len(decodes))
	var t float64
	for _, c := range chunks {
		tokens += c.q
		if c.s.done+c.q == c.s.target {
			emit++
		}
		a, err := sim.p.prefill(c.q, c.s.done)
		if err != nil {
			return 0, err
		}
		t += a
	}
	d, err := sim.p.tokens(tokens)
	if err != nil {
		return 0, err
	}
	h, err := sim.p.logits(emit)
	if err != nil {
		return 0, err
	}
	var a float64
	if n := int64(len(decodes)); n > 0 {
		if a, err = sim.p.decode(n, ctx/n); err != nil {
			return 0, err
		}
	}
	gpu := t + d + h + a
	if len(chunks) > 0 && tokens > sim.e.GraphTokens {
		// No CUDA graph: the GPU waits for the host's launches, which an
		// overlap scheduler starts as the previous step starts.
		host := sim.p.launches * hostKernelSeconds
		if sim.e.Overlap {
			host -= sim.last
		}
		gpu = max(gpu, host)
	}
	return gpu + sim.e.StepOverhead, nil
}

// simulate serves l on one engine replica with kvBlocks blocks of KV.
func simulate(e Engine, p *pricer, kvBlocks int64, l load) (run, error) {
	sim := &simulator{e: e, p: p, l: l, free: kvBlocks, lengths: newLengths(l)}
	var arrivals []float64
	if l.burst || l.clients > 0 && !e.Mixed && !l.prefilled {
		// Every client at once, as a benchmark starts. An engine that
		// runs prefill batches on their own (SGLang) takes every waiting
		// prompt into one batch: prompts that arrive together start
		// decoding together and, their outputs of one length, end
		// together, so its clients stay in waves (its measured runs show
		// TTFTs many times a prefill).
		arrivals = make([]float64, min(l.clients, l.requests))
	} else if l.clients > 0 {
		// Clients start a cycle apart, as they are in a benchmark's
		// steady state on an engine that chunks prompts into its decode
		// steps.
		cycle, err := sim.cycle()
		if err != nil {
			return run{}, err
		}
		n := min(l.clients, l.requests)
		for i := range n {
			arrivals = append(arrivals, cycle*float64(i)/float64(n))
		}
	} else {
		r := rand.New(rand.NewPCG(arrivalSeed, uint64(l.requests)))
		at := 0.0
		for range l.requests {
			arrivals = append(arrivals, at)
			at += r.ExpFloat64() / l.rate
		}
	}
	issued := int64(len(arrivals))
	var finished int64
	var batchTime float64
	for finished < l.requests && !(l.burst && sim.firsts == issued) {
		// The engine never waits for a client: a request that arrives as
		// (or after) the step's batch is formed waits for the next one.
		for len(arrivals) > 0 && arrivals[0] < sim.formed {
			sim.waiting = append(sim.waiting, sim.newSeq(arrivals[0]))
			arrivals = arrivals[1:]
		}
		if len(sim.running) == 0 && sim.queued() == 0 {
			// An idle engine emits what it holds and forms a batch as
			// soon as a request arrives.
			sim.emit()
			if l.burst && sim.firsts == issued {
				break
			}
			sim.now = max(sim.now, arrivals[0])
			sim.formed = math.Nextafter(sim.now, math.Inf(1))
			continue
		}
		var next float64 = -1
		if len(arrivals) > 0 {
			next = arrivals[0]
		}
		if err := sim.coast(next, &batchTime); err != nil {
			return run{}, err
		}
		decodes, chunks := sim.schedule()
		if len(decodes) == 0 && len(chunks) == 0 {
			// Requests that arrived prefilled join the next step.
			decodes, chunks = sim.schedule()
		}
		if len(decodes) == 0 && len(chunks) == 0 {
			return run{}, fmt.Errorf("the engine cannot schedule a request: %d KV blocks of %d tokens hold no request of %d+%d tokens", kvBlocks, e.BlockSize, l.isl, l.osl)
		}
		if sim.out.steps++; sim.out.steps > maxSteps {
			return run{}, fmt.Errorf("the load needs more than %d engine steps; simulate fewer requests", maxSteps)
		}
		dt, err := sim.stepTime(decodes, chunks)
		if err != nil {
			return run{}, err
		}
		sim.advance(dt)
		batchTime += dt * float64(len(decodes)+len(chunks))
		var done []*seq
		for _, s := range decodes {
			s.gen++
			if s.gen >= s.osl {
				done = append(done, s)
			}
		}
		for _, c := range chunks {
			s := c.s
			if s.done += c.q; s.done < s.target {
				continue
			}
			s.gen++
			if !s.started {
				s.started, s.first = true, sim.now
				if sim.e.Overlap {
					sim.pending = append(sim.pending, s)
				} else {
					sim.emitFirst(s)
				}
			}
			if s.gen >= s.osl {
				done = append(done, s)
			}
		}
		for _, s := range done {
			sim.finish(s)
			finished++
			if l.clients > 0 && issued < l.requests {
				at := sim.now + l.think
				i := sort.SearchFloat64s(arrivals, at)
				arrivals = slices.Insert(arrivals, i, at)
				issued++
			}
		}
	}
	sim.out.duration = sim.now
	sim.out.batch = batchTime / sim.now
	return sim.out, nil
}

// advance ends a step of dt: the clock moves on, the first tokens an
// overlap scheduler held back are emitted, and the next step's batch is
// formed (at this step's start under an overlap scheduler).
func (sim *simulator) advance(dt float64) {
	start := sim.now
	sim.last = dt
	sim.now += dt
	sim.emit()
	sim.formed = sim.now
	if sim.e.Overlap {
		sim.formed = start
	}
}

// emit emits the first tokens held back by an overlap scheduler.
func (sim *simulator) emit() {
	for _, s := range sim.pending {
		if !s.emitted {
			sim.emitFirst(s)
		}
	}
	sim.pending = sim.pending[:0]
}

// emitFirst records s's first token reaching its client now.
func (sim *simulator) emitFirst(s *seq) {
	s.emitted, s.ttft = true, sim.now-s.arrival
	sim.firsts++
	if sim.l.burst {
		sim.out.ttft = append(sim.out.ttft, s.ttft)
	}
}

// simRequestsPerClient is the requests per client a closed-loop run
// simulates after the first wave: enough for the steady state's figures,
// fewer than a benchmark's.
const simRequestsPerClient = 4

// closedLoop serves closed-loop clients as a benchmark runs them: every
// client sends its first request at once (vLLM's and SGLang's
// bench_serving at an unbounded rate under --max-concurrency), so the first
// wave's prompts queue behind each other; then the requests drift apart
// (their lengths vary, and each ends when its own output does), which the
// steady run models by clients starting spread over one request's
// duration. TTFT weighs the first wave by its share of the benchmark's
// requests (l.requests); the rest of the figures are the steady run's.
// perClient bounds the steady run's requests per client.
func closedLoop(e Engine, p *pricer, kvBlocks int64, l load, perClient int64) (run, error) {
	b := l
	b.burst = true
	first, err := simulate(e, p, kvBlocks, b)
	if err != nil {
		return run{}, err
	}
	st := l
	st.requests = min(l.requests, perClient*l.clients)
	steady, err := simulate(e, p, kvBlocks, st)
	if err != nil {
		return run{}, err
	}
	w := float64(len(first.ttft)) / float64(l.requests)
	steady.ttftStat = mix(first.ttft, w, steady.ttft)
	steady.steps += first.steps
	return steady, nil
}

// coast runs the steps in which nothing changes but the contexts: every
// running sequence decoding, none about to finish, none waiting that could
// be admitted, KV blocks enough for all of them, no arrival before next
// (-1: none). It prices those steps without scheduling each one, and
// leaves the step that changes something to schedule.
func (sim *simulator) coast(next float64, batchTime *float64) error {
	n := int64(len(sim.running))
	if n == 0 || n > sim.e.MaxTokens || sim.queued() > 0 && sim.admissible() {
		return nil
	}
	k := sim.l.osl
	var ctx int64
	for _, s := range sim.running {
		if s.done < s.target {
			return nil
		}
		k = min(k, s.osl-s.gen-1)
		ctx += s.isl + s.gen
	}
	if k <= 0 {
		return nil
	}
	if sim.e.Reserve == ReservePrompt {
		var need int64
		for _, s := range sim.running {
			need += sim.blocks(s.isl+s.gen+k) - s.held
		}
		if need > sim.free {
			return nil
		}
		for _, s := range sim.running {
			b := sim.blocks(s.isl+s.gen+k) - s.held
			s.held += b
			sim.free -= b
		}
	}
	var j int64
	for j < k && (next < 0 || sim.now < next) {
		m := ctx / n
		dt, err := sim.decodeStep(n, m)
		if err != nil {
			return err
		}
		if len(sim.pending) > 0 {
			// The first coasted step emits the first tokens held back.
			sim.advance(dt)
			*batchTime += dt * float64(n)
			ctx += n
			j++
			if sim.out.steps++; sim.out.steps > maxSteps {
				return fmt.Errorf("the load needs more than %d engine steps; simulate fewer requests", maxSteps)
			}
			if sim.l.burst {
				// A first wave ends with its first tokens.
				break
			}
			continue
		}
		// The steps until the rounded context changes cost the same:
		// take them at once, up to the next arrival.
		q := max(m/64, 16)
		same := min(max(roundCtx(m)+q/2-m, 1), k-j)
		if next >= 0 {
			same = min(same, max(int64(math.Ceil((next-sim.now)/dt)), 1))
		}
		sim.now += float64(same-1) * dt
		sim.advance(dt)
		*batchTime += float64(same) * dt * float64(n)
		ctx += same * n
		j += same
		if sim.out.steps += int(same); sim.out.steps > maxSteps {
			return fmt.Errorf("the load needs more than %d engine steps; simulate fewer requests", maxSteps)
		}
	}
	for _, s := range sim.running {
		s.gen += j
	}
	return nil
}

// admissible says whether the head of the queue could enter the next step.
func (sim *simulator) admissible() bool {
	if int64(len(sim.running)) >= sim.e.MaxSeqs {
		return false
	}
	s := sim.next()
	q := min(s.target-s.done, sim.e.MaxTokens)
	reserve := s.done + q
	if sim.e.Reserve == ReserveRequest {
		reserve = s.isl + s.osl
	}
	return sim.blocks(reserve) <= sim.free
}

// decodeStep is a step of n sequences decoding at a mean context of ctx,
// memoised by n and the context as decode rounds it.
func (sim *simulator) decodeStep(n, ctx int64) (float64, error) {
	k := [2]int64{n, roundCtx(ctx)}
	if t, ok := sim.p.steps[k]; ok {
		return t + sim.e.StepOverhead, nil
	}
	d, err := sim.p.tokens(n)
	if err != nil {
		return 0, err
	}
	h, err := sim.p.logits(n)
	if err != nil {
		return 0, err
	}
	a, err := sim.p.decode(n, ctx)
	if err != nil {
		return 0, err
	}
	sim.p.steps[k] = d + h + a
	return d + h + a + sim.e.StepOverhead, nil
}

func (sim *simulator) finish(s *seq) {
	for i, r := range sim.running {
		if r == s {
			sim.running = append(sim.running[:i], sim.running[i+1:]...)
			break
		}
	}
	sim.free += s.held
	if !s.emitted {
		// Its only token: emitted as it ends.
		sim.emitFirst(s)
	}
	o := &sim.out
	o.ttft = append(o.ttft, s.ttft)
	if s.osl > 1 {
		o.tpot = append(o.tpot, (sim.now-s.first)/float64(s.osl-1))
	}
	o.e2e = append(o.e2e, max(sim.now, s.first)-s.arrival)
	o.outTokens += s.osl
}

// Stat is a latency's mean and 90th percentile over the requests, in
// seconds.
type Stat struct {
	Mean float64 `json:"mean_seconds"`
	P90  float64 `json:"p90_seconds"`
}

// mix is the statistics of a: share w of the values, and b: the rest.
func mix(a []float64, w float64, b []float64) *Stat {
	type v struct{ x, w float64 }
	var vs []v
	for _, x := range a {
		vs = append(vs, v{x, w / float64(len(a))})
	}
	for _, x := range b {
		vs = append(vs, v{x, (1 - w) / float64(len(b))})
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].x < vs[j].x })
	var s Stat
	cum := 0.0
	p90 := math.NaN()
	for _, x := range vs {
		s.Mean += x.x * x.w
		if cum += x.w; math.IsNaN(p90) && cum >= 0.9-1e-12 {
			p90 = x.x
		}
	}
	s.P90 = p90
	if math.IsNaN(p90) && len(vs) > 0 {
		s.P90 = vs[len(vs)-1].x
	}
	return &s
}

// ttft is a run's TTFT statistics.
func (r run) ttftStats() Stat {
	if r.ttftStat != nil {
		return *r.ttftStat
	}
	return stat(r.ttft)
}

func stat(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	// Nearest rank.
	i := int(math.Ceil(0.9*float64(len(s)))) - 1
	return Stat{Mean: sum / float64(len(s)), P90: s[max(i, 0)]}
}
