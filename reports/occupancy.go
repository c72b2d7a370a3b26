package reports

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/units"
)

// Target is the device or architecture an occupancy question is about.
type Target struct {
	// Device is the catalog name; empty when only an architecture was given.
	Device string `json:"device,omitempty"`
	// Origin says where the device came from when it was not named
	// ("default; set --device or GPUCALC_DEVICE").
	Origin string       `json:"device_origin,omitempty"`
	Arch   devices.Arch `json:"-"`
	CC     devices.CC   `json:"compute_capability"`
	// SMs is the device's SM count; 0 for an architecture.
	SMs int `json:"sms,omitempty"`
}

func (t Target) String() string {
	s := "compute capability " + t.Arch.CC.String() + " (" + t.Arch.CC.SM() + ", " + t.Arch.Family + ")"
	if t.Device != "" {
		s = t.Device + ", " + s
		if t.SMs > 0 {
			s += ", " + strconv.Itoa(t.SMs) + " SMs"
		}
	}
	if t.Origin != "" {
		s += " (" + t.Origin + ")"
	}
	return s
}

// Occupancy is the answer of `gpucalc occupancy`, ready to render.
type Occupancy struct {
	Target Target           `json:"target"`
	Kernel occupancy.Kernel `json:"kernel"`
	Launch occupancy.Launch `json:"launch"`
	// Defaults names the inputs that were not given and took their default.
	Defaults  []string         `json:"defaults,omitempty"`
	Result    occupancy.Result `json:"result"`
	Occupancy float64          `json:"occupancy"`
	// Reason says why no block is resident, when none is.
	Reason string           `json:"reason,omitempty"`
	Waves  *occupancy.Waves `json:"waves,omitempty"`
	Notes  []string         `json:"notes"`
}

// NewOccupancy assembles the report and its notes.
func NewOccupancy(t Target, k occupancy.Kernel, l occupancy.Launch, defaults []string, r occupancy.Result, w *occupancy.Waves) Occupancy {
	o := Occupancy{Target: t, Kernel: k, Launch: l, Defaults: defaults, Result: r, Occupancy: r.Occupancy(), Waves: w}
	if r.Reason != nil {
		o.Reason = r.Reason.Error()
	}
	o.Notes = occupancyNotes(o)
	return o
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func size(b int) string {
	s := units.FormatSize(int64(b))
	if b >= 1024 && b%1024 != 0 {
		s += " (" + strconv.Itoa(b) + " B)"
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func count(n int) string {
	if n == occupancy.Unlimited {
		return "no limit"
	}
	return strconv.Itoa(n)
}

func (o Occupancy) isDefault(name string) bool {
	for _, d := range o.Defaults {
		if d == name {
			return true
		}
	}
	return false
}

// Tables renders the summary, the limits and, with a grid, the waves.
func (o Occupancy) Tables() []Table {
	r, a := o.Result, o.Target.Arch
	smem := o.Kernel.StaticSmem + o.Launch.DynamicSmem
	threads := strconv.Itoa(o.Launch.Threads)
	if o.isDefault("threads") {
		threads += " (default; set --threads)"
	}
	regs := strconv.Itoa(o.Kernel.Regs)
	if o.isDefault("regs") {
		regs += " (default; set --regs)"
	}
	summary := Table{Title: "Occupancy on " + o.Target.String(), Header: []string{"Quantity", "Value"}}
	add := func(k, v string) { summary.Rows = append(summary.Rows, []string{k, v}) }
	add("threads per block", threads)
	add("registers per thread", regs)
	add("shared memory per block", size(smem)+" ("+size(o.Kernel.StaticSmem)+" static + "+size(o.Launch.DynamicSmem)+" dynamic)")
	if o.Kernel.MaxThreads > 0 {
		add("launch bounds (max threads per block)", strconv.Itoa(o.Kernel.MaxThreads))
	}
	add("named barriers per block", strconv.Itoa(max(o.Kernel.Barriers, 1)))
	add("blocks per SM", strconv.Itoa(r.Blocks))
	add("warps per SM", fmt.Sprintf("%d of %d", r.Warps, r.MaxWarps))
	add("threads per SM", fmt.Sprintf("%d of %d", r.Threads, a.MaxThreadsPerSM))
	add("occupancy", pct(o.Occupancy))
	if o.Reason != "" {
		add("cannot launch", o.Reason)
	} else {
		add("limited by", strings.ReplaceAll(strings.ReplaceAll(r.Limiters.String(), "|", ", "), "_", " "))
	}
	add("registers per warp (allocated)", fmt.Sprintf("%d (%d × 32 rounded up to %d)", r.RegsPerWarp, o.Kernel.Regs, a.RegAllocUnit))
	add("registers per block (allocated)", fmt.Sprintf("%d (%d warps)", r.RegsPerBlock, r.WarpsPerBlock))
	add("shared memory per block (allocated)", fmt.Sprintf("%s (with %s reserved, rounded up to %d B)", size(r.SmemPerBlock), size(r.SmemReserved), a.SmemAllocUnit))
	pref := o.Launch.Carveout.String()
	if b, ok := o.Launch.Carveout.Size(); ok {
		pref = size(b)
	}
	carve := "preference " + pref + " → " + size(r.CarveoutPreferred)
	if r.Carveout != r.CarveoutPreferred && r.Carveout > 0 {
		carve += ", raised to " + size(r.Carveout) + " so that one block fits"
	}
	add("shared memory carveout per SM", carve)

	limits := Table{Title: "Limits (blocks per SM each allows)", Header: []string{"Limit", "Blocks per SM", "Per block", "Per SM", "Limiting"}}
	row := func(l occupancy.Limiter, perBlock, perSM string) {
		mark := ""
		if r.Limiters&l != 0 {
			mark = "yes"
		}
		limits.Rows = append(limits.Rows, []string{strings.ReplaceAll(l.String(), "_", " "), count(r.By(l)), perBlock, perSM, mark})
	}
	row(occupancy.LimitWarps, fmt.Sprintf("%d warps", r.WarpsPerBlock), fmt.Sprintf("%d warps", a.MaxWarpsPerSM))
	row(occupancy.LimitRegisters, fmt.Sprintf("%d registers", r.RegsPerBlock), fmt.Sprintf("%d registers", a.RegsPerSM))
	perSM := size(r.Carveout) + " carveout"
	if r.Carveout == 0 {
		perSM = size(a.SmemPerSM) + " largest carveout"
	}
	row(occupancy.LimitSharedMemory, size(r.SmemPerBlock), perSM)
	row(occupancy.LimitBlocks, "1 block", fmt.Sprintf("%d blocks", a.MaxBlocksPerSM))
	if a.CC.Major >= 9 {
		row(occupancy.LimitBarriers, plural(max(o.Kernel.Barriers, 1), "barrier"), plural(a.BarriersPerSM, "barrier"))
	}
	limits.Notes = o.Notes
	tables := []Table{summary, limits}
	if w := o.Waves; w != nil {
		tables = append(tables, Table{Title: "Waves", Header: []string{"Grid (blocks)", "Blocks per wave", "Waves", "Blocks in last wave", "Last wave fill"},
			Rows:  [][]string{{strconv.Itoa(w.Grid), strconv.Itoa(w.PerWave), strconv.Itoa(w.Waves), strconv.Itoa(w.LastWaveBlocks), pct(w.LastWaveFill)}},
			Notes: []string{fmt.Sprintf("Blocks per wave = %d blocks per SM × %d SMs.", r.Blocks, o.Target.SMs)}})
	}
	return tables
}

func occupancyNotes(o Occupancy) []string {
	var n []string
	a, r := o.Target.Arch, o.Result
	if len(o.Defaults) > 0 {
		n = append(n, "Defaults used: "+strings.Join(o.Defaults, ", ")+".")
	}
	smem := o.Kernel.StaticSmem + o.Launch.DynamicSmem
	if smem > a.SmemPerBlock {
		n = append(n, fmt.Sprintf("More than %s of shared memory per block must be dynamic and needs cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, %d) before the launch; without it the launch fails. The results assume it.", size(a.SmemPerBlock), o.Launch.DynamicSmem))
	}
	if r.SmemReserved > 0 {
		n = append(n, fmt.Sprintf("From compute capability 8.0 CUDA reserves %s of shared memory per block (system use); it is counted in the allocation and not available to the kernel.", size(r.SmemReserved)))
	}
	if r.Reason == occupancy.ErrRegsPerBlock && r.RegsPerBlock <= a.RegsPerBlock {
		w := (r.WarpsPerBlock + a.WarpAllocGranularity - 1) / a.WarpAllocGranularity * a.WarpAllocGranularity
		n = append(n, fmt.Sprintf("The block's %d registers would fit, but the hardware checks registers as if the block's %d warps were spread over all %d sub-partitions: %d warps × %d = %d > %d. Use a block of a multiple of %d warps, or fewer registers.",
			r.RegsPerBlock, r.WarpsPerBlock, a.WarpAllocGranularity, w, r.RegsPerWarp, w*r.RegsPerWarp, a.RegsPerBlock, a.WarpAllocGranularity))
	}
	if r.Reason == occupancy.ErrLaunchBounds {
		n = append(n, fmt.Sprintf("Without its launch bounds the kernel would have %d blocks per SM; cudaOccupancyMaxActiveBlocksPerMultiprocessor reports that number, but the launch fails.",
			min(r.ByWarps, r.ByRegisters, r.BySharedMemory, r.ByBlocks, r.ByBarriers)))
	}
	n = append(n, "Sizes are binary: 1 KiB = 1024 bytes. Occupancy = resident warps / maximum warps per SM.")
	return n
}

// Suggestion renders `gpucalc occupancy suggest`.
func Suggestion(t Target, k occupancy.Kernel, o occupancy.SuggestOptions, s occupancy.Suggestion) []Table {
	sum := Table{Title: "Suggested block size on " + t.String(), Header: []string{"Quantity", "Value"}}
	add := func(k, v string) { sum.Rows = append(sum.Rows, []string{k, v}) }
	add("block size", strconv.Itoa(s.BlockSize))
	add("blocks per SM", strconv.Itoa(s.Result.Blocks))
	add("occupancy", pct(s.Result.Occupancy()))
	if t.SMs > 0 {
		add("minimum grid size", fmt.Sprintf("%d (%s per SM × %d SMs)", s.MinGridSize, plural(s.Result.Blocks, "block"), t.SMs))
	} else {
		add("minimum grid size", "unknown for an architecture; give --device for the SM count")
	}
	add("registers per thread", strconv.Itoa(k.Regs))
	dyn := size(o.DynamicSmem)
	if o.SmemPerThread > 0 {
		dyn += fmt.Sprintf(" + %d B per thread", o.SmemPerThread)
	}
	add("shared memory per block", size(k.StaticSmem)+" static + "+dyn+" dynamic")
	cand := Table{Title: "Candidates (tried largest first, as the runtime does)", Header: []string{"Threads", "Dynamic smem", "Blocks per SM", "Active threads", "Occupancy", "Limited by", "Chosen"}}
	for _, c := range s.Candidates {
		mark := ""
		if c.Threads == s.BlockSize {
			mark = "yes"
		}
		occ := 0.0
		if s.Result.MaxWarps > 0 {
			occ = float64(c.Blocks*((c.Threads+31)/32)) / float64(s.Result.MaxWarps)
		}
		cand.Rows = append(cand.Rows, []string{strconv.Itoa(c.Threads), size(c.DynamicSmem), strconv.Itoa(c.Blocks), strconv.Itoa(c.ActiveThreads), pct(occ), c.Limiters.String(), mark})
	}
	cand.Notes = []string{
		"cudaOccupancyMaxPotentialBlockSize maximises active threads per SM (threads × blocks); a tie keeps the larger block, and the search stops at the first block size that fills the SM.",
	}
	return []Table{sum, cand}
}

// AvailSmem renders `gpucalc occupancy avail-smem`.
func AvailSmem(t Target, k occupancy.Kernel, blocks, threads int, s occupancy.AvailSmem) Table {
	tab := Table{Title: "Dynamic shared memory per block for " + strconv.Itoa(blocks) + " blocks of " + strconv.Itoa(threads) + " threads on " + t.String(), Header: []string{"Quantity", "Bytes", "Size"}}
	tab.Rows = [][]string{
		{"cudaOccupancyAvailableDynamicSMemPerBlock", strconv.Itoa(s.Runtime), size(s.Runtime)},
		{"largest that really fits", strconv.Itoa(s.Fits), size(s.Fits)},
	}
	if s.RuntimeBlocks < blocks {
		tab.Notes = append(tab.Notes, fmt.Sprintf("With the runtime's answer only %s fit: it does not subtract the %s CUDA reserves per block (documented behaviour of cuda_occupancy.h, measured on an H100). Use the second figure.", plural(s.RuntimeBlocks, "block"), size(t.Arch.SmemReservedPerBlock)))
	}
	tab.Notes = append(tab.Notes, fmt.Sprintf("Registers per thread: %d; static shared memory: %s. Sizes are binary.", k.Regs, size(k.StaticSmem)))
	return tab
}

// BatchColumns are the result columns `gpucalc occupancy batch` appends.
var BatchColumns = []string{"blocks_per_sm", "warps_per_sm", "occupancy", "limiters", "blocks_by_warps", "blocks_by_regs", "blocks_by_smem", "blocks_by_blocks", "regs_per_block", "smem_per_block", "error"}

// OccupancyBatch writes batch results row by row: CSV streams; JSON streams
// an array of objects (numbers as numbers, empty cells as null); table and
// Markdown collect the rows and render them at Flush.
type OccupancyBatch struct {
	w      io.Writer
	f      Format
	cw     *csv.Writer
	header []string
	rec    []string
	table  Table
	rows   int
}

// NewOccupancyBatch starts the output: the input's columns, then
// BatchColumns.
func NewOccupancyBatch(w io.Writer, f Format, inputHeader []string) (*OccupancyBatch, error) {
	b := &OccupancyBatch{w: w, f: f, header: append(append([]string(nil), inputHeader...), BatchColumns...)}
	switch f {
	case FormatCSV:
		b.cw = csv.NewWriter(w)
		return b, b.cw.Write(b.header)
	case FormatJSON:
		_, err := io.WriteString(w, "[")
		return b, err
	case FormatTable, FormatMarkdown:
		b.table.Header = b.header
		return b, nil
	}
	return nil, fmt.Errorf("reports: format %q is not a batch format", f)
}

func limitCell(n int) string {
	if n == occupancy.Unlimited {
		return ""
	}
	return strconv.Itoa(n)
}

// Write writes one row: the input fields (padded or cut to the header's n
// columns), then the result, or only err in the error column. A result with a
// reason for 0 blocks has the reason there.
func (b *OccupancyBatch) Write(fields []string, n int, r occupancy.Result, err error) error {
	b.rec = append(b.rec[:0], fields...)
	for len(b.rec) < n {
		b.rec = append(b.rec, "")
	}
	b.rec = b.rec[:n]
	if err == nil {
		err = r.Err
	}
	if err != nil {
		for range BatchColumns[:len(BatchColumns)-1] {
			b.rec = append(b.rec, "")
		}
		b.rec = append(b.rec, err.Error())
	} else {
		reason := ""
		if r.Reason != nil {
			reason = r.Reason.Error()
		}
		b.rec = append(b.rec, strconv.Itoa(r.Blocks), strconv.Itoa(r.Warps), strconv.FormatFloat(r.Occupancy(), 'f', 4, 64), r.Limiters.String(),
			limitCell(r.ByWarps), limitCell(r.ByRegisters), limitCell(r.BySharedMemory), limitCell(r.ByBlocks),
			strconv.Itoa(r.RegsPerBlock), strconv.Itoa(r.SmemPerBlock), reason)
	}
	b.rows++
	switch b.f {
	case FormatCSV:
		return b.cw.Write(b.rec)
	case FormatJSON:
		return b.jsonRow()
	}
	b.table.Rows = append(b.table.Rows, append([]string(nil), b.rec...))
	return nil
}

func (b *OccupancyBatch) jsonRow() error {
	var s strings.Builder
	if b.rows > 1 {
		s.WriteByte(',')
	}
	s.WriteString("\n  {")
	for i, h := range b.header {
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString(strconv.Quote(h))
		s.WriteString(": ")
		v := b.rec[i]
		if v != "" && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') && json.Valid([]byte(v)) {
			s.WriteString(v)
		} else if v == "" {
			s.WriteString("null")
		} else {
			q, _ := json.Marshal(v)
			s.Write(q)
		}
	}
	s.WriteByte('}')
	_, err := io.WriteString(b.w, s.String())
	return err
}

// Flush ends the output.
func (b *OccupancyBatch) Flush() error {
	switch b.f {
	case FormatCSV:
		b.cw.Flush()
		return b.cw.Error()
	case FormatJSON:
		end := "\n]\n"
		if b.rows == 0 {
			end = "]\n"
		}
		_, err := io.WriteString(b.w, end)
		return err
	}
	return Render(b.w, b.f, b.table)
}
