// Package sim is a small, fast, cycle-level model of one streaming
// multiprocessor running a simple kernel: it shows how resident warps hide
// latency and how throughput climbs toward the roofline as occupancy grows.
//
// The model (see README.md for what it leaves out):
//   - Schedulers warp schedulers; warp w belongs to scheduler w mod
//     Schedulers. Each issues at most one instruction per cycle, from the
//     warp it issued last if that one is ready, else from the youngest ready
//     warp (greedy-then-youngest, as Huerta et al. found on recent NVIDIA
//     parts).
//   - Warps are in order with a scoreboard: an instruction waits for the
//     registers it reads. FMAs take FMALatency and occupy the scheduler's
//     FMA pipe for FMAInterval cycles; other ALU instructions take
//     FMALatency; a taken branch stalls its warp for BranchBubble cycles.
//   - A global access is split into 128-byte lines. Each line goes to one of
//     Channels memory channels (chosen at random), which together serve the
//     SM's share of DRAM bandwidth first come first served; a line returns
//     DRAMLatency ± Jitter cycles after its service, and a load completes
//     with its last line. Latency therefore grows with load.
//   - Shared-memory loads queue at SmemBytesPerCycle and take SmemLatency.
//
// Runs are deterministic for a given Params.Seed.
package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Params are the machine parameters of one SM, in SM clock cycles.
type Params struct {
	Schedulers   int     `json:"schedulers"`
	FMALatency   float64 `json:"fma_latency_cycles"`
	FMAInterval  float64 `json:"fma_interval_cycles"`
	BranchBubble float64 `json:"branch_bubble_cycles"`
	SmemLatency  float64 `json:"smem_latency_cycles"`
	// SmemBytesPerCycle is the SM's shared-memory bandwidth.
	SmemBytesPerCycle float64 `json:"smem_bytes_per_cycle"`
	// DRAMLatency is the unloaded DRAM latency; DRAMBytesPerCycle the SM's
	// share of achievable DRAM bandwidth.
	DRAMLatency       float64 `json:"dram_latency_cycles"`
	DRAMBytesPerCycle float64 `json:"dram_bytes_per_cycle"`
	// Channels and Jitter shape the memory queue: how many channels share
	// the SM's bandwidth, and the half-width of the uniform spread of DRAM
	// latency.
	Channels int     `json:"channels"`
	Jitter   float64 `json:"jitter_cycles"`
	Seed     uint64  `json:"seed"`
}

// MaxWarps is the most warps one simulated SM may hold.
const MaxWarps = 64

// Validate checks the parameters.
func (p Params) Validate() error {
	switch {
	case p.Schedulers < 1:
		return errors.New("sim: need at least one scheduler")
	case p.FMALatency < 1 || p.FMAInterval < 1:
		return errors.New("sim: FMA latency and interval must be at least one cycle")
	case p.BranchBubble < 0 || p.SmemLatency < 0 || p.DRAMLatency < 0 || p.Jitter < 0:
		return errors.New("sim: latencies must not be negative")
	case p.Jitter > p.DRAMLatency:
		return errors.New("sim: DRAM latency jitter larger than the latency")
	case !(p.DRAMBytesPerCycle > 0) || !(p.SmemBytesPerCycle > 0):
		return errors.New("sim: bandwidths must be positive")
	case p.Channels < 1:
		return errors.New("sim: need at least one memory channel")
	}
	return nil
}

// Result is what one simulated run achieved, per SM.
type Result struct {
	Warps        int   `json:"warps_per_sm"`
	Cycles       int64 `json:"cycles"`
	Instructions int64 `json:"warp_instructions"`
	// Bytes of global memory traffic (loads and stores) and FP32 FLOPs.
	Bytes float64 `json:"bytes"`
	FLOPs float64 `json:"flops"`
	// MeanLoadLatency is the mean cycles from a global load's issue to its
	// completion (loaded latency); zero without loads.
	MeanLoadLatency float64 `json:"mean_load_latency_cycles"`
	// Scaled is the factor the counts were scaled by when the run was
	// longer than MaxInstructions (see RunProgress); 0 when simulated whole.
	Scaled float64 `json:"scaled,omitempty"`
}

// BytesPerCycle is the achieved global-memory throughput of the SM.
func (r Result) BytesPerCycle() float64 { return r.Bytes / float64(r.Cycles) }

// FLOPsPerCycle is the achieved FP32 throughput of the SM.
func (r Result) FLOPsPerCycle() float64 { return r.FLOPs / float64(r.Cycles) }

// IPC is warp instructions issued per cycle by the SM.
func (r Result) IPC() float64 { return float64(r.Instructions) / float64(r.Cycles) }

type opKind uint8

const (
	opALU opKind = iota
	opFMA
	opLoad
	opSmem
	opStore
	opBranch
)

// maxRegs bounds the registers the scoreboard tracks per warp.
const maxRegs = 62

// never is a ready time that does not come; noReg a source that is always
// ready.
const (
	never = math.MaxInt64
	noReg = maxRegs + 1
)

type instr struct {
	op         opKind
	dst        uint8 // noReg: none
	src1, src2 uint8 // noReg: none
}

// program returns the instructions of one loop iteration.
func (k Kernel) program() []instr {
	var prog []instr
	add := func(op opKind, dst, s1, s2 int) {
		prog = append(prog, instr{op, uint8(dst), uint8(s1), uint8(s2)})
	}
	load := func(i int) int { return i }
	smem := func(i int) int { return k.Loads + i }
	chain := func(c int) int { return k.Loads + k.Smem + c }
	for i := range k.Loads {
		add(opLoad, load(i), noReg, noReg)
	}
	for i := range k.Smem {
		add(opSmem, smem(i), noReg, noReg)
	}
	// The first FMA of each chain reads a load (or a shared-memory value)
	// when there is one; values no chain reads are summed.
	feeds := k.Loads
	feed := load
	if feeds == 0 {
		feeds, feed = k.Smem, smem
	}
	for s := range k.ChainFMAs {
		for c := range k.Chains {
			src2 := noReg
			if s == 0 && feeds > 0 {
				src2 = feed(c % feeds)
			}
			add(opFMA, chain(c), chain(c), src2)
		}
	}
	if k.Chains == 0 {
		for i := range k.Loads {
			for range (k.LoadBytes + 3) / 4 {
				add(opALU, noReg, load(i), noReg)
			}
		}
	}
	if k.Chains == 0 || k.Loads > 0 {
		for i := range k.Smem {
			add(opALU, noReg, smem(i), noReg)
		}
	}
	if k.Loads > 0 || k.Smem > 0 {
		for c := range k.Chains {
			add(opALU, noReg, chain(c), noReg)
		}
	}
	for i := range k.Stores {
		src := noReg
		switch {
		case k.Chains > 0:
			src = chain(i % k.Chains)
		case k.Loads > 0:
			src = load(i % k.Loads)
		}
		add(opStore, noReg, src, noReg)
	}
	for range k.Overhead - 1 {
		add(opALU, noReg, noReg, noReg)
	}
	add(opBranch, noReg, noReg, noReg)
	return prog
}

type warp struct {
	pc, iter, iters int
	stall           int64
	reg             [maxRegs + 2]int64 // indexed by register; noReg stays 0
}

// scheduler keeps its warps' ready times in small arrays of its own, which
// the issue scan reads, indexed by the warp's slot.
type scheduler struct {
	warps   []int   // by slot, ascending: the last is the youngest
	readyAt []int64 // operands ready, FMA pipe aside; never when done
	fma     []bool  // next instruction is an FMA
	last    int     // slot issued last, or -1
	fmaFree int64
	next    int64 // earliest cycle it may issue
}

// MaxInstructions bounds the warp instructions one run simulates, so that
// its cost is bounded whatever the kernel: a longer run stops there and is
// scaled (Result.Scaled). At about 20 million warp instructions a second, a
// run takes a fraction of a second.
const MaxInstructions = 1 << 22

// Run simulates warps resident warps running k and returns what the SM
// achieved.
func Run(p Params, k Kernel, warps int) (Result, error) {
	return RunProgress(p, k, warps, nil)
}

// RunProgress is Run that calls progress (when not nil) with the fraction of
// the run done, from time to time.
//
// A run longer than MaxInstructions stops there: the steady state it has
// reached stands for the rest: the cycles until the simulated part's work
// completes are scaled by the run's instructions over those simulated, and
// the instructions, bytes and FLOPs are the whole run's.
func RunProgress(p Params, k Kernel, warps int, progress func(fraction float64)) (Result, error) {
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	if err := k.Validate(); err != nil {
		return Result{}, err
	}
	if warps < 1 || warps > MaxWarps {
		return Result{}, fmt.Errorf("sim: %d warps per SM; expected 1 to %d", warps, MaxWarps)
	}
	m := newMachine(p, k, warps)
	m.progress = progress
	m.run()
	return m.result(), nil
}

type machine struct {
	p     Params
	prog  []instr
	ws    []warp
	sched []scheduler
	rng   *rand.PCG

	fmaLat, fmaInt, bubble, smemLat int64
	loadBytes, storeBytes           int
	lineService, smemService        float64
	chanFree                        []float64
	smemFree                        float64

	now, end     int64
	instructions int64
	// total is the warp instructions of the whole run; budget where it
	// stops; progress is told how far it is every report instructions.
	total, budget, report int64
	iterations            int64 // of all warps together
	k                     Kernel
	progress              func(float64)
	bytes, fmas           float64
	loads                 int64
	loadLatency           float64
}

func newMachine(p Params, k Kernel, warps int) *machine {
	m := &machine{
		p:           p,
		k:           k,
		prog:        k.program(),
		ws:          make([]warp, warps),
		sched:       make([]scheduler, p.Schedulers),
		rng:         rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15),
		fmaLat:      int64(math.Round(p.FMALatency)),
		fmaInt:      int64(math.Round(p.FMAInterval)),
		bubble:      int64(math.Round(p.BranchBubble)),
		smemLat:     int64(math.Round(p.SmemLatency)),
		lineService: lineBytes * float64(p.Channels) / p.DRAMBytesPerCycle,
		smemService: warpSize * 4 / p.SmemBytesPerCycle,
		chanFree:    make([]float64, p.Channels),
		loadBytes:   warpSize * k.LoadBytes,
		storeBytes:  warpSize * k.StoreBytes,
	}
	for i := range m.sched {
		m.sched[i].last = -1
	}
	m.budget, m.report = MaxInstructions, MaxInstructions/64
	for w := range m.ws {
		iters := k.Iterations
		if k.Shared {
			// Split the SM's trip count as evenly as a grid-stride loop.
			iters = k.Iterations / warps
			if w < k.Iterations%warps {
				iters++
			}
		}
		m.ws[w].iters = iters
		m.total += int64(iters) * int64(len(m.prog))
		m.iterations += int64(iters)
		if iters == 0 {
			continue
		}
		s := &m.sched[w%p.Schedulers]
		s.warps = append(s.warps, w)
		s.readyAt = append(s.readyAt, 0)
		s.fma = append(s.fma, m.prog[0].op == opFMA)
	}
	return m
}

func (m *machine) run() {
	// Schedulers interact only through the memory queues, whose effects
	// are fixed at issue, so one pass per cycle both steps the schedulers
	// due now and finds the next cycle any of them is due.
	for m.now = 0; ; {
		next := int64(never)
		for i := range m.sched {
			s := &m.sched[i]
			if s.next == m.now {
				s.next = m.step(s)
			}
			next = min(next, s.next)
		}
		if next == never || m.instructions >= m.budget {
			return
		}
		if m.progress != nil && m.instructions >= m.report {
			m.progress(float64(m.instructions) / float64(min(m.total, m.budget)))
			m.report += MaxInstructions / 64
		}
		m.now = next
	}
}

// step issues at most one instruction on s at m.now and returns when s may
// issue next.
func (m *machine) step(s *scheduler) int64 {
	now := m.now
	fmaBusy := s.fmaFree > now
	if i := s.last; i >= 0 && s.readyAt[i] <= now && !(fmaBusy && s.fma[i]) {
		m.issue(s, i)
		return now + 1
	}
	next := int64(never)
	for i := len(s.readyAt) - 1; i >= 0; i-- {
		t := s.readyAt[i]
		if fmaBusy && s.fma[i] {
			t = max(t, s.fmaFree)
		}
		if t <= now {
			s.last = i
			m.issue(s, i)
			return now + 1
		}
		next = min(next, t)
	}
	return next
}

// issue issues the next instruction of the warp in slot i of s.
func (m *machine) issue(s *scheduler, i int) {
	now := m.now
	wp := &m.ws[s.warps[i]]
	in := m.prog[wp.pc]
	m.instructions++
	done := now + 1 // when the instruction's work is complete
	switch in.op {
	case opALU:
		if in.dst != noReg {
			done = now + m.fmaLat
			wp.reg[in.dst] = done
		}
	case opFMA:
		done = now + m.fmaLat
		wp.reg[in.dst] = done
		s.fmaFree = now + m.fmaInt
		m.fmas++
	case opLoad:
		done = m.global(now, m.loadBytes)
		wp.reg[in.dst] = done
		m.loads++
		m.loadLatency += float64(done - now)
	case opStore:
		done = m.global(now, m.storeBytes)
	case opSmem:
		start := max(float64(now), m.smemFree)
		m.smemFree = start + m.smemService
		done = int64(math.Ceil(m.smemFree)) + m.smemLat
		wp.reg[in.dst] = done
	case opBranch:
		wp.stall = now + m.bubble
	}
	// The run lasts until its last work completes, so that no rate is
	// taken over less time than its work needed.
	m.end = max(m.end, done)
	wp.pc++
	if wp.pc == len(m.prog) {
		wp.pc = 0
		wp.iter++
		if wp.iter == wp.iters {
			s.readyAt[i] = never
			s.fma[i] = false
			s.last = -1
			return
		}
	}
	next := m.prog[wp.pc]
	s.readyAt[i] = max(now+1, wp.stall, wp.reg[next.src1], wp.reg[next.src2])
	s.fma[i] = next.op == opFMA
}

// global queues a warp access of n bytes issued at now and returns when its
// last line is back.
func (m *machine) global(now int64, n int) int64 {
	m.bytes += float64(n)
	done := 0.0
	for left := n; left > 0; left -= lineBytes {
		// One random draw per line: the high half picks the channel, the
		// low half the jitter.
		x := m.rng.Uint64()
		c := int((x >> 32) * uint64(len(m.chanFree)) >> 32)
		start := max(float64(now), m.chanFree[c])
		m.chanFree[c] = start + m.lineService*float64(min(left, lineBytes))/lineBytes
		u := float64(uint32(x)) / (1 << 32)
		done = max(done, m.chanFree[c]+m.p.DRAMLatency+m.p.Jitter*(2*u-1))
	}
	return int64(math.Ceil(done))
}

func (m *machine) result() Result {
	r := Result{
		Warps:        len(m.ws),
		Cycles:       max(m.end, 1),
		Instructions: m.instructions,
		Bytes:        m.bytes,
		FLOPs:        m.fmas * warpSize * 2,
	}
	if m.instructions < m.total {
		// Stopped at the budget: the window's pace stands for the whole
		// run, whose work is known from the program (the window's own mix
		// is skewed: an iteration's loads issue before its FMAs).
		f := float64(m.total) / float64(m.instructions)
		r.Scaled = f
		r.Cycles = int64(math.Ceil(float64(r.Cycles) * f))
		r.Instructions = m.total
		r.Bytes = float64(m.iterations) * float64(m.k.Loads*m.loadBytes+m.k.Stores*m.storeBytes)
		r.FLOPs = float64(m.iterations) * float64(m.k.FMAs()) * warpSize * 2
	}
	if m.loads > 0 {
		r.MeanLoadLatency = m.loadLatency / float64(m.loads)
	}
	return r
}
