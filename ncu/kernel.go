package ncu

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/rows"
)

// Kernel is one profiled launch as the export measured it.
type Kernel struct {
	// ID is ncu's launch ID; Name the short name (see ShortName) and
	// FullName the name as exported.
	ID       int    `json:"id"`
	Name     string `json:"name"`
	FullName string `json:"full_name"`
	// Device is the GPU's name as the export gives it
	// (device__attribute_display_name) and CC its compute capability.
	Device string     `json:"device"`
	CC     devices.CC `json:"compute_capability"`
	Block  Dim3       `json:"block"`
	Grid   Dim3       `json:"grid"`
	// Duration is gpu__time_duration.sum, in seconds.
	Duration float64 `json:"duration_seconds"`
	// Launch is nil when the export lacks the launch statistics.
	Launch *Launch `json:"launch,omitempty"`
	// Work is the floating-point work by precision, largest first.
	Work []Work `json:"work"`
	// Traffic is the bytes moved at each memory level the export measures.
	Traffic []Traffic `json:"traffic"`
	// Occupancy is what Nsight Compute reports, in percent of the SM's warp
	// slots.
	Occupancy NCUOccupancy `json:"ncu_occupancy"`
	// Missing lists the figures the export lacks for this kernel (the
	// metric names gpucalc looked for).
	Missing []string `json:"missing,omitempty"`
	// Implausible lists figures that cannot be real: a negative counter,
	// an occupancy over 100%, and (from Analyze) a rate far above the
	// device's ceiling. The kernel is kept, flagged.
	Implausible []string `json:"implausible,omitempty"`
}

// Dim3 is a CUDA block or grid shape.
type Dim3 struct {
	X int `json:"x"`
	Y int `json:"y"`
	Z int `json:"z"`
}

// Size is X·Y·Z.
func (d Dim3) Size() int { return d.X * d.Y * d.Z }

func (d Dim3) String() string {
	switch {
	case d.Z > 1:
		return fmt.Sprintf("%d×%d×%d", d.X, d.Y, d.Z)
	case d.Y > 1:
		return fmt.Sprintf("%d×%d", d.X, d.Y)
	}
	return strconv.Itoa(d.X)
}

// Launch holds the launch statistics that occupancy depends on.
type Launch struct {
	RegistersPerThread int `json:"registers_per_thread"`
	// StaticSmem and DynamicSmem are shared memory per block in bytes, as
	// the kernel asks for it (without the driver's reserved 1 KiB).
	StaticSmem  int `json:"static_smem_bytes"`
	DynamicSmem int `json:"dynamic_smem_bytes"`
	// SmemConfig is the shared-memory carveout the driver chose for the
	// launch, in bytes per SM (0: not exported).
	SmemConfig int `json:"smem_config_bytes"`
	// ClusterSize is the thread-block cluster size (0: no clusters).
	ClusterSize int `json:"cluster_size,omitempty"`
	// Barriers is the named barriers a block uses (launch__barrier_count;
	// 0 when the export lacks it).
	Barriers int `json:"barriers"`
}

// NCUOccupancy is Nsight Compute's occupancy report for a launch.
type NCUOccupancy struct {
	// Theoretical is sm__maximum_warps_per_active_cycle_pct; Achieved is
	// sm__warps_active.avg.pct_of_peak_sustained_active; nil when the
	// export lacks them.
	Theoretical *float64 `json:"theoretical_pct,omitempty"`
	Achieved    *float64 `json:"achieved_pct,omitempty"`
	// BlocksPerSM is the fewest blocks any launch__occupancy_limit_*
	// allows and Limiters the limits that allow that few; By holds each
	// limit's count, indexed like occupancy.Limiters (0: not exported).
	BlocksPerSM int               `json:"blocks_per_sm"`
	Limiters    occupancy.Limiter `json:"limiters"`
	By          [5]int            `json:"blocks_by_limit"`
}

// Work is the floating-point work of one precision.
type Work struct {
	DType devices.DType `json:"dtype"`
	Path  devices.Path  `json:"path"`
	// FLOPs counts an FMA as two operations.
	FLOPs float64 `json:"flops"`
}

// Key is the device catalog's peak key ("fp32", "bf16_tensor").
func (w Work) Key() string { return devices.PeakKey(w.DType, w.Path) }

// Level is a memory level gpucalc reads traffic for.
type Level string

// Memory levels, outermost first.
const (
	DRAM Level = "dram"
	L2   Level = "l2"
	L1   Level = "l1"
)

// Traffic is the bytes moved at one memory level.
type Traffic struct {
	Level Level   `json:"level"`
	Bytes float64 `json:"bytes"`
}

// Metrics gpucalc reads. The CUDA-core counters are thread instructions
// executed with the predicate on, as Nsight Compute's roofline counts them.
const (
	mDuration    = "gpu__time_duration.sum"
	mSMSPCycles  = "smsp__cycles_elapsed.avg"
	mDRAMRead    = "dram__bytes_read.sum"
	mDRAMWrite   = "dram__bytes_write.sum"
	mDRAMBytes   = "dram__bytes.sum"
	mL2Read      = "l1tex__m_xbar2l1tex_read_bytes.sum"
	mL2Write     = "l1tex__m_l1tex2xbar_write_bytes.sum"
	mL2Sectors   = "lts__t_sectors.sum"
	mL1Bytes     = "l1tex__t_bytes.sum"
	mL1Sectors   = "l1tex__t_sectors.sum"
	mTheoretical = "sm__maximum_warps_per_active_cycle_pct"
	mAchieved    = "sm__warps_active.avg.pct_of_peak_sustained_active"
	mDisplayName = "device__attribute_display_name"
	mRegisters   = "launch__registers_per_thread"
	mStaticSmem  = "launch__shared_mem_per_block_static"
	mDynamicSmem = "launch__shared_mem_per_block_dynamic"
	mSmemConfig  = "launch__shared_mem_config_size"
	mClusterSize = "launch__cluster_size"
	mBarriers    = "launch__barrier_count"
)

// sectorBytes is the size of an L1/L2 sector.
const sectorBytes = 32

// cudaCoreOps are the instruction counters of each CUDA-core precision and
// the FLOPs one thread instruction does. The fp16 counters (HADD2, HMUL2,
// HFMA2, bf16 forms included) work on packed pairs, as Nsight Compute's
// half-precision roofline counts them.
var cudaCoreOps = []cudaCoreOp{
	coreOp(devices.FP64, "dadd", 1), coreOp(devices.FP64, "dmul", 1), coreOp(devices.FP64, "dfma", 2),
	coreOp(devices.FP32, "fadd", 1), coreOp(devices.FP32, "fmul", 1), coreOp(devices.FP32, "ffma", 2),
	coreOp(devices.FP16, "hadd", 2), coreOp(devices.FP16, "hmul", 2), coreOp(devices.FP16, "hfma", 4),
}

// cudaCoreOp is one instruction's counters: its .sum, and its rate per
// cycle (names built once, not per row).
type cudaCoreOp struct {
	dtype     devices.DType
	sum, rate string
	flops     float64
}

func coreOp(dt devices.DType, inst string, flops float64) cudaCoreOp {
	m := "smsp__sass_thread_inst_executed_op_" + inst + "_pred_on.sum"
	return cudaCoreOp{dtype: dt, sum: m, rate: m + ".per_cycle_elapsed", flops: flops}
}

// tensorRE matches the tensor-core operation counters
// (sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum), which
// count an FMA as two operations.
var tensorRE = regexp.MustCompile(`^sm__ops_path_tensor_op_[a-z]+_src_([a-z0-9]+)(?:_dst_[a-z0-9]+)?(?:_sparsity_(?:on|off))?\.sum$`)

// tensorColumn is a tensor-core operation counter of the export.
type tensorColumn struct {
	index int
	dtype devices.DType
}

// tensorCounter recognizes a tensor-core operation counter and its
// precision; ok is false for other columns and for int1/int4 counters.
func tensorCounter(col string) (tensorColumn, bool) {
	m := tensorRE.FindStringSubmatch(col)
	if m == nil {
		return tensorColumn{}, false
	}
	dt, ok := tensorDTypes[m[1]]
	return tensorColumn{dtype: dt}, ok
}

// tensorDTypes maps the counters' source types to gpucalc's; int1 and int4
// have no catalog peak and are not counted.
var tensorDTypes = map[string]devices.DType{
	"fp64": devices.FP64, "tf32": devices.TF32, "bf16": devices.BF16, "fp16": devices.FP16,
	"fp8": devices.FP8E4M3, "e4m3": devices.FP8E4M3, "e5m2": devices.FP8E5M2, "int8": devices.INT8,
}

// reader gathers a row's values and what is missing.
type reader struct {
	e           *export
	r           Row
	missing     []string
	implausible []string
	err         error
}

// negative records a counter below zero as implausible.
func (rd *reader) negative(what string, v float64) {
	rd.implausible = append(rd.implausible, fmt.Sprintf("%s is negative (%g)", what, v))
}

// value reads a metric; none gpucalc reads can be negative, so a negative
// one is flagged.
func (rd *reader) value(metric string) (float64, bool) {
	v, ok, err := rd.e.Value(rd.r, metric)
	if err != nil && rd.err == nil {
		rd.err = err
	}
	if v < 0 {
		rd.negative(metric, v)
	}
	return v, ok
}

// need reads a metric and records it as missing when absent.
func (rd *reader) need(metric string) float64 {
	v, ok := rd.value(metric)
	if !ok {
		rd.missing = append(rd.missing, metric)
	}
	return v
}

// launch reads the launch statistics; nil when the registers or shared
// memory are missing. The carveout, cluster size and barriers are optional.
func (rd *reader) launch() *Launch {
	l := Launch{
		RegistersPerThread: rd.int(mRegisters),
		StaticSmem:         rd.int(mStaticSmem),
		DynamicSmem:        rd.int(mDynamicSmem),
	}
	for _, m := range []string{mRegisters, mStaticSmem, mDynamicSmem} {
		if slices.Contains(rd.missing, m) {
			return nil
		}
	}
	if _, ok := rd.value(mSmemConfig); ok {
		l.SmemConfig = rd.int(mSmemConfig)
	}
	if v, ok := rd.value(mClusterSize); ok {
		l.ClusterSize = int(v)
	}
	if v, ok := rd.value(mBarriers); ok {
		l.Barriers = int(v)
	}
	return &l
}

// optional reads a metric that may be missing (recorded as such).
func (rd *reader) optional(metric string) *float64 {
	v, ok := rd.value(metric)
	if !ok {
		rd.missing = append(rd.missing, metric)
		return nil
	}
	return &v
}

// int reads a count or size: a whole number from 0 to MaxInt32 (a float64
// beyond an int would convert to its most negative value), else an error.
func (rd *reader) int(metric string) int {
	v := rd.need(metric)
	if v < 0 || v > math.MaxInt32 || v != math.Trunc(v) {
		if rd.err == nil {
			rd.err = fmt.Errorf("line %d: %s is %g; expected a whole number from 0 to %d", rd.r.Line, metric, v, math.MaxInt32)
		}
		return 0
	}
	return int(v)
}

func (e *export) kernel(r Row) (Kernel, error) {
	rd := &reader{e: e, r: r, missing: e.missing[:0]}
	e.next = 0
	full := e.Text(r, "Kernel Name")
	if full == "" {
		full = e.Text(r, "launch__kernel_name")
	}
	device := e.Text(r, mDisplayName)
	for _, n := range []string{full, device} {
		if len(n) > rows.MaxName {
			return Kernel{}, fmt.Errorf("line %d: a name of %d bytes, over the %s names may have (is the file cut short or edited?)", r.Line, len(n), rows.Size(rows.MaxName))
		}
	}
	id, err := strconv.Atoi(strings.TrimSpace(e.Text(r, "ID")))
	if err != nil {
		return Kernel{}, fmt.Errorf("line %d: ID %s is not a number", r.Line, rows.Quote(e.Text(r, "ID")))
	}
	// The names are the row's: Launches keeps one copy of each, and makes
	// the short name.
	k := Kernel{ID: id, FullName: full, Device: device}
	k.CC = e.cc(r)
	k.Block = rd.dim3("Block Size", blockDims)
	k.Grid = rd.dim3("Grid Size", gridDims)
	k.Duration = rd.duration()
	k.Launch = rd.launch()
	k.Work = rd.work()
	k.Traffic = rd.traffic()
	k.Occupancy = NCUOccupancy{Theoretical: rd.optional(mTheoretical), Achieved: rd.optional(mAchieved)}
	for _, o := range []struct {
		metric string
		pct    *float64
	}{{mTheoretical, k.Occupancy.Theoretical}, {mAchieved, k.Occupancy.Achieved}} {
		if o.pct != nil && *o.pct > 100 {
			rd.implausible = append(rd.implausible, fmt.Sprintf("%s is %g%%, over 100%%", o.metric, *o.pct))
		}
	}
	rd.limits(&k.Occupancy)
	if rd.err != nil {
		return Kernel{}, rd.err
	}
	k.Missing, k.Implausible = e.sameMissing(rd.missing), rd.implausible
	return k, nil
}

// sameMissing returns what a row lacks, sharing the previous row's list
// when it is the same (the rows of an export mostly lack the same metrics).
func (e *export) sameMissing(m []string) []string {
	if m == nil || !slices.Equal(m, e.lastMissing) {
		e.lastMissing = slices.Clip(slices.Clone(m))
	}
	e.missing = m[:0]
	return e.lastMissing
}

// duration reads gpu__time_duration, refusing one that cannot be: NaN,
// infinite or negative.
func (rd *reader) duration() float64 {
	i, ok := rd.e.column(mDuration)
	if ok && i < len(rd.r.Values) && rd.err == nil {
		switch t := strings.ToLower(strings.TrimSpace(rd.r.Values[i])); {
		case t == "nan" || t == "-nan" || strings.HasSuffix(t, "inf"):
			rd.err = fmt.Errorf("line %d: %s is %s: a kernel's duration must be a number (was the export edited?)", rd.r.Line, mDuration, rows.Quote(t))
			return 0
		}
	}
	d := rd.need(mDuration)
	if d < 0 && rd.err == nil {
		rd.err = fmt.Errorf("line %d: %s is %s: a duration cannot be negative (was the export edited?)", rd.r.Line, mDuration, rows.Quote(rd.r.Values[i]))
	}
	return d
}

// cc reads the compute capability from the CC column or the device
// attributes; zero when neither is there.
func (e *export) cc(r Row) devices.CC {
	if c, err := devices.ParseCC(e.Text(r, "CC")); err == nil {
		return c
	}
	major, ok1, _ := e.Value(r, "device__attribute_compute_capability_major")
	minor, ok2, _ := e.Value(r, "device__attribute_compute_capability_minor")
	if ok1 && ok2 && major > 0 {
		return devices.CC{Major: int(major), Minor: int(minor)}
	}
	return devices.CC{}
}

// dims names the _x/_y/_z metrics of a launch dimension, and what is
// missing without them.
type dims struct{ x, y, z, missing string }

var (
	blockDims = dims{"launch__block_dim_x", "launch__block_dim_y", "launch__block_dim_z", "launch__block_dim_x/y/z"}
	gridDims  = dims{"launch__grid_dim_x", "launch__grid_dim_y", "launch__grid_dim_z", "launch__grid_dim_x/y/z"}
)

// dim3 reads "(384, 1, 1)" from a column, else the _x/_y/_z metrics.
func (rd *reader) dim3(col string, m dims) Dim3 {
	if d, ok := parseDim3(rd.e.Text(rd.r, col)); ok {
		return d
	}
	x, okx := rd.value(m.x)
	y, oky := rd.value(m.y)
	z, okz := rd.value(m.z)
	if !okx || !oky || !okz {
		rd.missing = append(rd.missing, m.missing)
		return Dim3{}
	}
	return Dim3{int(x), int(y), int(z)}
}

// parseDim3 reads "(384, 1, 1)": three positive whole numbers.
func parseDim3(s string) (Dim3, bool) {
	f := strings.Split(strings.Trim(strings.TrimSpace(s), "()"), ",")
	if len(f) != 3 {
		return Dim3{}, false
	}
	var v [3]int
	for i := range f {
		n, err := strconv.Atoi(strings.TrimSpace(f[i]))
		if err != nil || n <= 0 {
			return Dim3{}, false
		}
		v[i] = n
	}
	return Dim3{v[0], v[1], v[2]}, true
}

// count returns an instruction counter: the .sum when the export has it,
// else the .sum.per_cycle_elapsed rate times the SM sub-partition cycles
// elapsed (what the roofline sections collect).
func (rd *reader) count(sum, rate string) (float64, bool) {
	if v, ok := rd.value(sum); ok {
		return v, true
	}
	r, ok := rd.value(rate)
	if !ok {
		return 0, false
	}
	cycles, ok := rd.value(mSMSPCycles)
	return r * cycles, ok
}

func (rd *reader) work() []Work {
	var out []Work
	add := func(dt devices.DType, p devices.Path, flops float64) {
		for i := range out {
			if out[i].DType == dt && out[i].Path == p {
				out[i].FLOPs += flops
				return
			}
		}
		out = append(out, Work{DType: dt, Path: p, FLOPs: flops})
	}
	found := false
	for _, op := range cudaCoreOps {
		n, ok := rd.count(op.sum, op.rate)
		if ok {
			found = true
			if n > 0 {
				add(op.dtype, devices.CUDACores, n*op.flops)
			}
		}
	}
	if !found {
		rd.missing = append(rd.missing, "smsp__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on")
	}
	for _, tc := range rd.e.tensor {
		if tc.index >= len(rd.r.Values) {
			continue
		}
		v, ok, err := parseNumber(rd.r.Values[tc.index])
		if err != nil && rd.err == nil {
			rd.err = fmt.Errorf("line %d: %s: %w", rd.r.Line, rd.e.Columns[tc.index], err)
		}
		switch {
		case ok && v > 0:
			add(tc.dtype, devices.Tensor, v*rd.e.scale[tc.index])
		case ok && v < 0:
			rd.negative(rd.e.Columns[tc.index], v)
		}
	}
	if len(rd.e.tensor) == 0 {
		rd.missing = append(rd.missing, "sm__ops_path_tensor_op_*.sum")
	}
	out = slices.Clip(out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].FLOPs > out[j].FLOPs })
	return out
}

func (rd *reader) traffic() []Traffic {
	t := make([]Traffic, 0, 3)
	if r, ok := rd.value(mDRAMRead); ok {
		w, okw := rd.value(mDRAMWrite)
		if okw {
			t = append(t, Traffic{DRAM, r + w})
		}
	} else if b, ok := rd.value(mDRAMBytes); ok {
		t = append(t, Traffic{DRAM, b})
	}
	if len(t) == 0 {
		rd.missing = append(rd.missing, mDRAMRead+"+"+mDRAMWrite)
	}
	if r, ok := rd.value(mL2Read); ok {
		if w, ok := rd.value(mL2Write); ok {
			t = append(t, Traffic{L2, r + w})
		}
	} else if s, ok := rd.value(mL2Sectors); ok {
		t = append(t, Traffic{L2, s * sectorBytes})
	}
	if len(t) == 0 || t[len(t)-1].Level != L2 {
		rd.missing = append(rd.missing, mL2Read+"+"+mL2Write)
	}
	if b, ok := rd.value(mL1Bytes); ok {
		t = append(t, Traffic{L1, b})
	} else if s, ok := rd.value(mL1Sectors); ok {
		t = append(t, Traffic{L1, s * sectorBytes})
	} else {
		rd.missing = append(rd.missing, mL1Sectors)
	}
	return t
}

// ncuLimits are Nsight Compute's per-limit block counts, in the order of
// occupancy.Limiters.
var ncuLimits = [5]string{"launch__occupancy_limit_warps", "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem",
	"launch__occupancy_limit_blocks", "launch__occupancy_limit_barriers"}

// limits reads Nsight Compute's per-limit block counts.
func (rd *reader) limits(o *NCUOccupancy) {
	best := -1
	for i, l := range ncuLimits {
		v, ok := rd.value(l)
		if !ok {
			continue
		}
		n := int(v)
		o.By[i] = n
		switch {
		case best < 0 || n < best:
			best, o.Limiters = n, occupancy.Limiters[i]
		case n == best:
			o.Limiters |= occupancy.Limiters[i]
		}
	}
	if best < 0 {
		rd.missing = append(rd.missing, "launch__occupancy_limit_*")
		return
	}
	o.BlocksPerSM = best
}
