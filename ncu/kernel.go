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
var cudaCoreOps = []struct {
	dtype devices.DType
	inst  string
	flops float64
}{
	{devices.FP64, "dadd", 1}, {devices.FP64, "dmul", 1}, {devices.FP64, "dfma", 2},
	{devices.FP32, "fadd", 1}, {devices.FP32, "fmul", 1}, {devices.FP32, "ffma", 2},
	{devices.FP16, "hadd", 2}, {devices.FP16, "hmul", 2}, {devices.FP16, "hfma", 4},
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

// Kernels reads every kernel of the export.
func (e *Export) Kernels() ([]Kernel, error) {
	out := make([]Kernel, 0, len(e.Rows))
	for _, r := range e.Rows {
		k, err := e.kernel(r)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// reader gathers a row's values and what is missing.
type reader struct {
	e       *Export
	r       Row
	missing []string
	err     error
}

func (rd *reader) value(metric string) (float64, bool) {
	v, ok, err := rd.e.Value(rd.r, metric)
	if err != nil && rd.err == nil {
		rd.err = err
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

func (e *Export) kernel(r Row) (Kernel, error) {
	rd := &reader{e: e, r: r}
	full := e.Text(r, "Kernel Name")
	if full == "" {
		full = e.Text(r, "launch__kernel_name")
	}
	id, err := strconv.Atoi(strings.TrimSpace(e.Text(r, "ID")))
	if err != nil {
		return Kernel{}, fmt.Errorf("line %d: ID %q is not a number", r.Line, e.Text(r, "ID"))
	}
	k := Kernel{ID: id, FullName: full, Name: ShortName(full), Device: e.Text(r, mDisplayName)}
	k.CC = e.cc(r)
	k.Block = rd.dim3("Block Size", "launch__block_dim")
	k.Grid = rd.dim3("Grid Size", "launch__grid_dim")
	k.Duration = rd.need(mDuration)
	k.Launch = rd.launch()
	k.Work = rd.work()
	k.Traffic = rd.traffic()
	k.Occupancy = NCUOccupancy{Theoretical: rd.optional(mTheoretical), Achieved: rd.optional(mAchieved)}
	rd.limits(&k.Occupancy)
	if rd.err != nil {
		return Kernel{}, rd.err
	}
	k.Missing = rd.missing
	return k, nil
}

// cc reads the compute capability from the CC column or the device
// attributes; zero when neither is there.
func (e *Export) cc(r Row) devices.CC {
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

// dim3 reads "(384, 1, 1)" from a column, else the _x/_y/_z metrics.
func (rd *reader) dim3(col, metric string) Dim3 {
	if t := strings.Trim(strings.TrimSpace(rd.e.Text(rd.r, col)), "()"); t != "" {
		var d Dim3
		if n, err := fmt.Sscanf(strings.ReplaceAll(t, " ", ""), "%d,%d,%d", &d.X, &d.Y, &d.Z); n == 3 && err == nil && d.X > 0 && d.Y > 0 && d.Z > 0 {
			return d
		}
	}
	x, okx := rd.value(metric + "_x")
	y, oky := rd.value(metric + "_y")
	z, okz := rd.value(metric + "_z")
	if !okx || !oky || !okz {
		rd.missing = append(rd.missing, metric+"_x/y/z")
		return Dim3{}
	}
	return Dim3{int(x), int(y), int(z)}
}

// count returns an instruction counter: the .sum when the export has it,
// else the .sum.per_cycle_elapsed rate times the SM sub-partition cycles
// elapsed (what the roofline sections collect).
func (rd *reader) count(metric string) (float64, bool) {
	if v, ok := rd.value(metric + ".sum"); ok {
		return v, true
	}
	rate, ok := rd.value(metric + ".sum.per_cycle_elapsed")
	if !ok {
		return 0, false
	}
	cycles, ok := rd.value(mSMSPCycles)
	return rate * cycles, ok
}

func (rd *reader) work() []Work {
	byKey := map[string]*Work{}
	var order []string
	add := func(dt devices.DType, p devices.Path, flops float64) {
		k := devices.PeakKey(dt, p)
		w, ok := byKey[k]
		if !ok {
			w = &Work{DType: dt, Path: p}
			byKey[k] = w
			order = append(order, k)
		}
		w.FLOPs += flops
	}
	found := false
	for _, op := range cudaCoreOps {
		n, ok := rd.count("smsp__sass_thread_inst_executed_op_" + op.inst + "_pred_on")
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
		if ok && v > 0 {
			add(tc.dtype, devices.Tensor, v*unitScale(rd.e.Units[tc.index]))
		}
	}
	if len(rd.e.tensor) == 0 {
		rd.missing = append(rd.missing, "sm__ops_path_tensor_op_*.sum")
	}
	out := make([]Work, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FLOPs > out[j].FLOPs })
	return out
}

func (rd *reader) traffic() []Traffic {
	var t []Traffic
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
var ncuLimits = [5]string{"warps", "registers", "shared_mem", "blocks", "barriers"}

// limits reads Nsight Compute's per-limit block counts.
func (rd *reader) limits(o *NCUOccupancy) {
	best := -1
	for i, l := range ncuLimits {
		v, ok := rd.value("launch__occupancy_limit_" + l)
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
