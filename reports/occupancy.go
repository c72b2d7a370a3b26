package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/escape"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/units"
)

// Occupancy is the answer of `gpucalc occupancy`, ready to render.
type Occupancy struct {
	Target occupancy.Target `json:"target"`
	Kernel occupancy.Kernel `json:"kernel"`
	Launch occupancy.Launch `json:"launch"`
	// Defaults names the inputs that were not given and took their default.
	Defaults  []string         `json:"defaults,omitempty"`
	Result    occupancy.Result `json:"result"`
	Occupancy float64          `json:"occupancy"`
	// Reason says why no block is resident, when none is.
	Reason string           `json:"reason,omitempty"`
	Waves  *occupancy.Waves `json:"waves,omitempty"`
	// Cliffs are the nearest register counts and shared-memory sizes that
	// change resident blocks.
	Cliffs *occupancy.Cliffs `json:"cliffs,omitempty"`
	// Clusters is set with --cluster.
	Clusters *occupancy.Clusters `json:"clusters,omitempty"`
	Notes    []string            `json:"notes"`
}

// NewOccupancy assembles the report and its notes.
func NewOccupancy(t occupancy.Target, k occupancy.Kernel, l occupancy.Launch, defaults []string, r occupancy.Result, w *occupancy.Waves, cliffs *occupancy.Cliffs, c *occupancy.Clusters) Occupancy {
	o := Occupancy{Target: t, Kernel: k, Launch: l, Defaults: defaults, Result: r, Occupancy: r.Occupancy(), Waves: w, Cliffs: cliffs, Clusters: c}
	if r.Reason != nil {
		o.Reason = r.Reason.Error()
	}
	// Empty, not nil: JSON writes [] when there is nothing to note.
	o.Notes = append([]string{}, occupancyNotes(o)...)
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
		add("limited by", limiterText(r.Limiters))
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
	if c := o.Cliffs; c != nil {
		tables = append(tables, cliffTable(*c, o.Kernel, o.Launch))
	}
	if c := o.Clusters; c != nil {
		tables = append(tables, clusterTable(*c, o.Target))
	}
	return tables
}

func limiterText(l occupancy.Limiter) string {
	return strings.ReplaceAll(strings.ReplaceAll(l.String(), "|", ", "), "_", " ")
}

func cliffTable(c occupancy.Cliffs, k occupancy.Kernel, l occupancy.Launch) Table {
	tab := Table{Title: "Cliffs: the nearest values that change resident blocks", Header: []string{"Nearest change", "Value", "Blocks per SM"}}
	add := func(what string, cl *occupancy.Cliff, f func(int) string) {
		if cl == nil {
			tab.Rows = append(tab.Rows, []string{what, "none", "-"})
			return
		}
		tab.Rows = append(tab.Rows, []string{what, f(cl.Value), fmt.Sprintf("%d (now %d)", cl.Blocks, c.Blocks)})
	}
	add("fewer registers", c.RegsDown, strconv.Itoa)
	add("more registers", c.RegsUp, strconv.Itoa)
	add("less shared memory", c.SmemDown, size)
	add("more shared memory", c.SmemUp, size)
	return tab
}

func joinGPCs(g []int) string {
	s := make([]string, len(g))
	for i, n := range g {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

func clusterTable(c occupancy.Clusters, t occupancy.Target) Table {
	tab := Table{Title: fmt.Sprintf("Clusters of %d blocks on the whole GPU (model)", c.Size), Header: []string{"Quantity", "Value"}}
	add := func(k, v string) { tab.Rows = append(tab.Rows, []string{k, v}) }
	add("active clusters", strconv.Itoa(c.Active))
	add("active blocks", strconv.Itoa(c.Blocks))
	add("blocks per SM under cluster launch", fmt.Sprintf("%d (plain calculation %d, capped at 8)", c.SlotsPerSM, c.BlocksPerSM))
	add("naive bound (slots × SMs / size)", strconv.Itoa(c.Naive))
	g := joinGPCs(c.GPCs)
	if c.Estimated {
		g += " (estimate: CUTLASS's 18 SMs per GPC)"
	}
	add("SMs per GPC", g)
	add("largest cluster size with a cluster active", strconv.Itoa(c.MaxSize))
	// The model itself is described in --help and docs/occupancy.md.
	if !c.Estimated {
		tab.Notes = []string{"A model (NVIDIA publishes no formula) that reproduces all 2,400 cudaOccupancyMaxActiveClusters answers measured on an H100 SXM."}
	} else {
		tab.Notes = []string{"This device's GPC layout is not in the catalog; on the H100 the 18-SM estimate is off by up to 9%. Check with cudaOccupancyMaxActiveClusters."}
	}
	if c.NonPortable {
		tab.Notes = append(tab.Notes, fmt.Sprintf("Cluster sizes above %d are non-portable: set cudaFuncAttributeNonPortableClusterSizeAllowed to 1 on the kernel first, or the launch fails (cudaErrorInvalidClusterSize).", t.Arch.MaxClusterSize))
	}
	return tab
}

// occupancyNotes are at most two lines: the defaults used, then what the
// user must know to launch this configuration at all. The 1 KiB CUDA
// reserves is in the allocation row; the conventions are in --help.
func occupancyNotes(o Occupancy) []string {
	var n, warn []string
	a, r := o.Target.Arch, o.Result
	if len(o.Defaults) > 0 {
		n = append(n, "Defaults used: "+strings.Join(o.Defaults, ", ")+".")
	}

	smem := o.Kernel.StaticSmem + o.Launch.DynamicSmem
	if smem > a.SmemPerBlock {
		warn = append(warn, fmt.Sprintf("More than %s of shared memory per block must be dynamic and needs cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, %d) before the launch; without it the launch fails. The results assume it.", size(a.SmemPerBlock), o.Launch.DynamicSmem))
	}
	if r.Reason == occupancy.ErrRegsPerBlock && r.RegsPerBlock <= a.RegsPerBlock {
		w := (r.WarpsPerBlock + a.WarpAllocGranularity - 1) / a.WarpAllocGranularity * a.WarpAllocGranularity
		warn = append(warn, fmt.Sprintf("The block's %d registers would fit, but the hardware checks registers as if the block's %d warps were spread over all %d sub-partitions: %d warps × %d = %d > %d. Use a block of a multiple of %d warps, or fewer registers.",
			r.RegsPerBlock, r.WarpsPerBlock, a.WarpAllocGranularity, w, r.RegsPerWarp, w*r.RegsPerWarp, a.RegsPerBlock, a.WarpAllocGranularity))
	}
	if r.Reason == occupancy.ErrLaunchBounds {
		warn = append(warn, fmt.Sprintf("Without its launch bounds the kernel would have %d blocks per SM; cudaOccupancyMaxActiveBlocksPerMultiprocessor reports that number, but the launch fails.",
			min(r.ByWarps, r.ByRegisters, r.BySharedMemory, r.ByBlocks, r.ByBarriers)))
	}
	if len(warn) > 0 {
		n = append(n, strings.Join(warn, " "))
	}
	return n
}

// Suggestion renders `gpucalc occupancy suggest`.
func Suggestion(t occupancy.Target, k occupancy.Kernel, o occupancy.SuggestOptions, s occupancy.Suggestion) []Table {
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
		cand.Rows = append(cand.Rows, []string{strconv.Itoa(c.Threads), size(c.DynamicSmem), strconv.Itoa(c.Blocks), strconv.Itoa(c.ActiveThreads), pct(c.Occupancy), c.Limiters.String(), mark})
	}
	cand.Notes = []string{
		"cudaOccupancyMaxPotentialBlockSize maximises active threads per SM (threads × blocks); a tie keeps the larger block, and the search stops at the first block size that fills the SM.",
	}
	return []Table{sum, cand}
}

// AvailSmem renders `gpucalc occupancy avail-smem`.
func AvailSmem(t occupancy.Target, k occupancy.Kernel, blocks, threads int, s occupancy.AvailSmem) Table {
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

// OccupancyBatch writes batch results row by row: CSV streams (written by
// hand: a million rows must take well under two seconds); JSON streams an
// array of objects (numbers as numbers, empty cells as null); table and
// Markdown collect the rows and render them at Flush.
type OccupancyBatch struct {
	w      io.Writer
	f      Format
	width  int
	header []string
	rec    []string
	buf    []byte
	table  Table
	rows   int
}

// NewOccupancyBatch starts the output: the input's columns, then
// BatchColumns. width is the table's (see Render).
func NewOccupancyBatch(w io.Writer, f Format, width int, inputHeader []string) (*OccupancyBatch, error) {
	b := &OccupancyBatch{w: w, f: f, width: width, header: append(append([]string(nil), inputHeader...), BatchColumns...)}
	switch f {
	case FormatCSV:
		for i, h := range b.header {
			if i > 0 {
				b.buf = append(b.buf, ',')
			}
			b.buf = appendCSV(b.buf, h)
		}
		_, err := w.Write(append(b.buf, '\n'))
		return b, err
	case FormatJSON:
		_, err := io.WriteString(w, "[")
		return b, err
	case FormatTable, FormatMarkdown:
		b.table.Header = b.header
		b.table.Optional = []string{"blocks_by_warps", "blocks_by_regs", "blocks_by_smem", "blocks_by_blocks", "regs_per_block", "smem_per_block"}
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
	if err == nil {
		err = r.Err
	}
	b.rows++
	if b.f == FormatCSV {
		return b.csvRow(fields, n, r, err)
	}
	b.rec = append(b.rec[:0], fields...)
	for len(b.rec) < n {
		b.rec = append(b.rec, "")
	}
	b.rec = b.rec[:n]
	if err != nil {
		for range BatchColumns[:len(BatchColumns)-1] {
			b.rec = append(b.rec, "")
		}
		b.rec = append(b.rec, err.Error())
	} else {
		b.rec = append(b.rec, strconv.Itoa(r.Blocks), strconv.Itoa(r.Warps), strconv.FormatFloat(r.Occupancy(), 'f', 4, 64), r.Limiters.String(),
			limitCell(r.ByWarps), limitCell(r.ByRegisters), limitCell(r.BySharedMemory), limitCell(r.ByBlocks),
			strconv.Itoa(r.RegsPerBlock), strconv.Itoa(r.SmemPerBlock), reasonText(r))
	}
	if b.f == FormatJSON {
		return b.jsonRow()
	}
	b.table.Rows = append(b.table.Rows, append([]string(nil), b.rec...))
	return nil
}

func reasonText(r occupancy.Result) string {
	if r.Reason != nil {
		return r.Reason.Error()
	}
	return ""
}

// csvRow writes one CSV record straight into a buffer, quoting as
// encoding/csv does: a million rows must take well under two seconds.
func (b *OccupancyBatch) csvRow(fields []string, n int, r occupancy.Result, err error) error {
	b.buf = b.buf[:0]
	for i := range n {
		if i > 0 {
			b.buf = append(b.buf, ',')
		}
		if i < len(fields) {
			b.buf = appendCSV(b.buf, fields[i])
		}
	}
	if err != nil {
		b.buf = append(b.buf, ",,,,,,,,,,,"...)
		b.buf = appendCSV(b.buf, err.Error())
	} else {
		num := func(v int) {
			b.buf = append(b.buf, ',')
			if v != occupancy.Unlimited {
				b.buf = strconv.AppendInt(b.buf, int64(v), 10)
			}
		}
		num(r.Blocks)
		num(r.Warps)
		b.buf = append(b.buf, ',')
		b.buf = strconv.AppendFloat(b.buf, r.Occupancy(), 'f', 4, 64)
		b.buf = append(b.buf, ',')
		b.buf = append(b.buf, r.Limiters.String()...)
		num(r.ByWarps)
		num(r.ByRegisters)
		num(r.BySharedMemory)
		num(r.ByBlocks)
		num(r.RegsPerBlock)
		num(r.SmemPerBlock)
		b.buf = append(b.buf, ',')
		b.buf = appendCSV(b.buf, reasonText(r))
	}
	b.buf = append(b.buf, '\n')
	_, err = b.w.Write(b.buf)
	return err
}

// appendCSV appends one field, neutralised as Table's CSV is
// (escape.CSV) and quoted where encoding/csv would quote it.
func appendCSV(buf []byte, f string) []byte {
	f = escape.CSV(f)
	quote := f != "" && (f[0] == ' ' || f[0] == '\t' || f == `\.`)
	for i := 0; i < len(f) && !quote; i++ {
		c := f[i]
		quote = c == ',' || c == '"' || c == '\r' || c == '\n'
	}
	if !quote {
		return append(buf, f...)
	}
	buf = append(buf, '"')
	buf = append(buf, strings.ReplaceAll(f, `"`, `""`)...)
	return append(buf, '"')
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
		return nil
	case FormatJSON:
		end := "\n]\n"
		if b.rows == 0 {
			end = "]\n"
		}
		_, err := io.WriteString(b.w, end)
		return err
	}
	return Render(b.w, b.f, b.width, b.table)
}

// BuildRow is one kernel of a build log with its occupancy.
type BuildRow struct {
	Kernel occupancy.BuildKernel `json:"kernel"`
	// Threads is the block size used; ThreadsFrom says whether it came from
	// --launch or the default.
	Threads     int              `json:"threads"`
	ThreadsFrom string           `json:"threads_from"`
	Result      occupancy.Result `json:"result"`
	Occupancy   float64          `json:"occupancy"`
	// MaxThreads is the largest block the registers allow.
	MaxThreads int      `json:"max_threads_by_regs"`
	Flags      []string `json:"flags,omitempty"`
	// Error says why the kernel could not be calculated; the figures are
	// then empty.
	Error string `json:"error,omitempty"`
}

// NewBuildRow fills the derived fields of a row.
func NewBuildRow(k occupancy.BuildKernel, threads int, from string, r occupancy.Result, maxThreads int) BuildRow {
	row := BuildRow{Kernel: k, Threads: threads, ThreadsFrom: from, Result: r, Occupancy: r.Occupancy(), MaxThreads: maxThreads}
	if k.Spills() {
		row.Flags = append(row.Flags, fmt.Sprintf("spills (%d B stores, %d B loads)", k.SpillStores, k.SpillLoads))
	}
	if k.Stack > 0 {
		row.Flags = append(row.Flags, fmt.Sprintf("local memory: %d B stack per thread", k.Stack))
	}
	if threads > maxThreads {
		row.Flags = append(row.Flags, fmt.Sprintf("%d threads need more registers than a block has", threads))
	}
	if r.Reason != nil && threads <= maxThreads {
		row.Flags = append(row.Flags, r.Reason.Error())
	}
	return row
}

// SortBuildRows orders rows by occupancy, lowest first, then by name.
func SortBuildRows(rows []BuildRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Occupancy != rows[j].Occupancy {
			return rows[i].Occupancy < rows[j].Occupancy
		}
		return rows[i].Kernel.Short < rows[j].Kernel.Short
	})
}

// BuildTable renders `gpucalc occupancy from-build`.
func BuildTable(rows []BuildRow, notes []string) Table {
	t := Table{Title: "Occupancy of the kernels in the build log (lowest first)",
		Header:   []string{"Kernel", "Arch", "Regs", "Static smem", "Threads", "Blocks per SM", "Occupancy", "Limited by", "Max threads (regs)", "Flags"},
		Optional: []string{"Max threads (regs)", "Arch", "Static smem"}}
	for _, r := range rows {
		if r.Error != "" {
			t.Rows = append(t.Rows, []string{r.Kernel.Short, r.Kernel.CC.SM(), "-", "-", strconv.Itoa(r.Threads), "-", "-", "-", "-", "error: " + r.Error})
			continue
		}
		lim := limiterText(r.Result.Limiters)
		if r.Result.Blocks == 0 {
			lim = "cannot launch"
		}
		t.Rows = append(t.Rows, []string{r.Kernel.Short, r.Kernel.CC.SM(), strconv.Itoa(r.Kernel.Regs), size(r.Kernel.StaticSmem),
			strconv.Itoa(r.Threads), strconv.Itoa(r.Result.Blocks), pct(r.Occupancy), lim, strconv.Itoa(r.MaxThreads), strings.Join(r.Flags, "; ")})
	}
	t.Notes = notes
	return t
}
