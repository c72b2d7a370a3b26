package reports

import (
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/units"
)

// NCU renders kernels measured by Nsight Compute: an overview, then compute,
// memory and occupancy tables keyed by ncu's launch ID. device names the
// catalog entry the shares are taken against and origin where it came from.
func NCU(as *ncu.Analyses, device, origin string) []Table {
	// The notes about kernels, gathered in one pass: each pass analyses
	// every kernel again.
	g := grouped(as, func(a *ncu.Analysis) string {
		if len(a.Implausible) == 0 {
			return ""
		}
		return "implausible: " + strings.Join(a.Implausible, "; ") + " (was the export edited, or profiled on another GPU than the device?)"
	}, func(a *ncu.Analysis) string {
		if len(a.Missing) == 0 {
			return ""
		}
		return "the export lacks " + strings.Join(a.Missing, ", ") + " (profile with --set full for every figure)"
	}, func(a *ncu.Analysis) string {
		if a.Occupancy.Error == "" && a.Kernel.Occupancy.Theoretical != nil && !a.Occupancy.Match {
			return mismatched
		}
		return ""
	}, func(a *ncu.Analysis) string { return a.Occupancy.Error })
	return []Table{ncuKernels(as, device, origin, append(g[0].lines(), g[1].lines()...)), ncuCompute(as), ncuMemory(as),
		ncuOccupancy(as, g[2].ids[mismatched], g[3].lines())}
}

// mismatched is the note of a kernel whose theoretical occupancy gpucalc
// and Nsight Compute disagree on.
const mismatched = "mismatched"

// ncuKernels is the table of kernels; notes says what is implausible or
// missing (grouped).
func ncuKernels(as *ncu.Analyses, device, origin string, notes []string) Table {
	t := Table{
		Title:  fmt.Sprintf("Kernels on %s (%s)", device, origin),
		Header: []string{"ID", "Kernel", "Block", "Grid", "Duration", "FLOP/s", "Bound"},
	}
	t.Stream = kernelRows(as, func(a *ncu.Analysis, row []string, yield func([]string) bool) bool {
		flops, bound := "-", "-"
		if a.FLOPs > 0 && a.Duration > 0 {
			flops = units.FormatFLOPS(a.FLOPs / a.Duration)
		}
		if a.Bound != "" {
			bound = a.Bound + " " + pct(a.BoundShare)
		}
		if len(a.Implausible) > 0 {
			bound += " (implausible)"
		}
		return yield(append(row[:0], strconv.Itoa(a.ID), a.Name, a.Block.String(), a.Grid.String(), duration(a.Duration), flops, bound))
	})
	t.Notes = []string{
		"FLOP/s: FADD, FMUL and FFMA (2 FLOPs) thread instructions of each precision, and the tensor-core operation counters, over gpu__time_duration.",
		"Bound: the device ceiling (dense datasheet peak or bandwidth) the kernel comes closest to, and the share of it reached.",
	}
	t.Notes = append(t.Notes, notes...)
	return t
}

// idNotes are the distinct texts a note gave, in order, and the IDs of
// the kernels each is about.
type idNotes struct {
	order []string
	ids   map[string][]string
}

// grouped gathers what each of notes says of the kernels ("" for
// nothing), in one pass over them.
func grouped(as *ncu.Analyses, notes ...func(*ncu.Analysis) string) []idNotes {
	out := make([]idNotes, len(notes))
	for i := range out {
		out[i].ids = map[string][]string{}
	}
	for a := range as.All() {
		for i, note := range notes {
			n := note(a)
			if n == "" {
				continue
			}
			g := &out[i]
			if _, ok := g.ids[n]; !ok {
				g.order = append(g.order, n)
			}
			g.ids[n] = append(g.ids[n], strconv.Itoa(a.ID))
		}
	}
	return out
}

// lines returns one note per distinct text, naming the IDs it is about:
// "IDs 0, 1: ...".
func (g idNotes) lines() []string {
	out := make([]string, 0, len(g.order))
	for _, n := range g.order {
		label := "ID "
		if len(g.ids[n]) > 1 {
			label = "IDs "
		}
		out = append(out, label+strings.Join(g.ids[n], ", ")+": "+n)
	}
	return out
}

func ncuCompute(as *ncu.Analyses) Table {
	t := Table{Title: "Compute", Header: []string{"ID", "Precision", "FLOPs", "FLOP/s", "Peak", "Of peak"}}
	t.Stream = kernelRows(as, func(a *ncu.Analysis, row []string, yield func([]string) bool) bool {
		for _, r := range a.Compute {
			peak, share := "-", "-"
			if r.Peak > 0 {
				peak = units.FormatFLOPS(r.Peak)
				if a.Duration > 0 {
					share = pct(r.Share)
				}
			}
			if !yield(append(row[:0], strconv.Itoa(a.ID), r.Key(), units.FormatDecimal(r.FLOPs, "FLOP"), rate(a, r.PerSecond, units.FormatFLOPS), peak, share)) {
				return false
			}
		}
		return true
	})
	t.Notes = []string{"fp16 on CUDA cores counts packed HADD2/HMUL2 as 2 FLOPs and HFMA2 as 4 (bf16 forms included), as Nsight Compute does."}
	return t
}

func ncuMemory(as *ncu.Analyses) Table {
	t := Table{Title: "Memory", Header: []string{"ID", "Level", "Bytes", "Bandwidth", "Of ceiling", "FLOP/byte"}}
	t.Stream = kernelRows(as, func(a *ncu.Analysis, row []string, yield func([]string) bool) bool {
		for _, l := range a.Memory {
			ceil, ai := "-", "-"
			if l.Ceiling > 0 && a.Duration > 0 {
				ceil = pct(l.Share)
			}
			if l.Bytes > 0 {
				ai = strconv.FormatFloat(l.Intensity, 'g', 4, 64)
			}
			if !yield(append(row[:0], strconv.Itoa(a.ID), string(l.Level), units.FormatDecimal(l.Bytes, "B"), rate(a, l.PerSecond, units.FormatBandwidth), ceil, ai)) {
				return false
			}
		}
		return true
	})
	t.Notes = []string{
		"dram: dram__bytes_read + dram__bytes_write. l2: bytes between the SMs and L2 (l1tex__m_xbar2l1tex_read_bytes + l1tex__m_l1tex2xbar_write_bytes).",
		"l1: L1 tag-stage sectors × 32 B (l1tex__t_sectors); TMA and wgmma traffic bypasses it. Sizes and rates are decimal (1 MB = 1e6 B).",
	}
	return t
}

// ncuOccupancy is the occupancy table; mismatch lists the IDs of the
// kernels gpucalc and Nsight disagree on, errors the notes of those
// gpucalc could not compute (grouped).
func ncuOccupancy(as *ncu.Analyses, mismatch, errors []string) Table {
	t := Table{
		Title: "Occupancy (% of the SM's warp slots)",
		Header: []string{"ID", "Registers", "Shared memory", "Theoretical (gpucalc)", "Theoretical (Nsight)", "Match",
			"Achieved", "Blocks/SM", "Limiter"},
		Optional: []string{"Theoretical (Nsight)", "Blocks/SM", "Shared memory", "Registers"},
	}
	t.Stream = kernelRows(as, func(a *ncu.Analysis, row []string, yield func([]string) bool) bool {
		o := a.Occupancy
		ours, theirs, match, blocks, limiter := "-", "-", "-", "-", "-"
		if p := a.Kernel.Occupancy.Theoretical; p != nil {
			theirs = occPct(*p)
		}
		if o.Error == "" {
			ours, blocks, limiter = occPct(o.Theoretical), strconv.Itoa(o.BlocksPerSM), o.Limiters.String()
		}
		if o.Error == "" && a.Kernel.Occupancy.Theoretical != nil {
			match = "yes"
			if !o.Match {
				match = "NO"
			}
		}
		regs, smem := "-", "-"
		if l := a.Launch; l != nil {
			regs, smem = strconv.Itoa(l.RegistersPerThread), units.FormatSize(int64(l.StaticSmem+l.DynamicSmem))
		}
		return yield(append(row[:0], strconv.Itoa(a.ID), regs, smem, ours, theirs, match, optPct(a.Kernel.Occupancy.Achieved), blocks, limiter))
	})
	t.Notes = []string{
		"Theoretical (gpucalc): the CUDA runtime's calculation from the launch statistics: registers, block size, static + dynamic shared memory (shown; the driver adds 1 KiB per block), barriers and the carveout the driver chose.",
		"Theoretical (Nsight): sm__maximum_warps_per_active_cycle_pct. Achieved: sm__warps_active.avg.pct_of_peak_sustained_active.",
	}
	if len(mismatch) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("gpucalc and Nsight Compute disagree for ID %s: check the launch statistics in the export.", strings.Join(mismatch, ", ")))
	}
	t.Notes = append(t.Notes, errors...)
	return t
}

// occPct prints an occupancy percentage to the two decimals Nsight Compute
// prints.
func occPct(p float64) string { return strconv.FormatFloat(math.Round(p*100)/100, 'f', -1, 64) + "%" }

func optPct(p *float64) string {
	if p == nil {
		return "-"
	}
	return occPct(*p)
}

// kernelRows is a Stream of the rows that rows gives for each analysed
// kernel in turn (rows returns false once yield has), each made in row:
// one array for every row, not one per row (see Table.Stream).
func kernelRows(as *ncu.Analyses, rows func(a *ncu.Analysis, row []string, yield func([]string) bool) bool) iter.Seq[[]string] {
	return func(yield func([]string) bool) {
		row := make([]string, 0, 32)
		for a := range as.All() {
			if !rows(a, row, yield) {
				return
			}
		}
	}
}

// rate formats a per-second figure, "-" when the export has no duration.
func rate(a *ncu.Analysis, v float64, format func(float64) string) string {
	if a.Duration <= 0 {
		return "-"
	}
	return format(v)
}

// chartNameRunes is how much of a kernel's name its chart label keeps.
const chartNameRunes = 32

// NCUChart draws measured kernels on device d's hierarchical roofline: each
// kernel at its achieved FLOP rate, once per memory level with the
// arithmetic intensity of that level's bytes (DRAM, L2, L1; one colour
// each), the roof of that level beside it, numbered by the kernel's ID. The
// ceilings are the dense peaks of the precisions the kernels use; the L2
// slope is the catalog's measured L2 bandwidth where it has one. Without an
// L2 figure the L2 points are left out, and so is an L1 point with fewer
// bytes than the L2 point (TMA and wgmma traffic bypasses the L1 counters),
// each with a note.
func NCUChart(as *ncu.Analyses, d devices.Device) (chart.Roofline, []string) {
	cd := chart.Device{Name: d.Name, DRAM: d.Memory.BytesPerSecond}
	cd.L2, cd.L2Measured = l2Ceiling(d)
	c := chart.Roofline{Title: "Nsight Compute kernels on " + d.Name}
	seen := map[string]bool{}
	var notes []string
	names := make([]string, 0, as.Len())
	for a := range as.All() {
		names = append(names, a.Name)
	}
	names = distinctNames(names, chartNameRunes)
	for a := range as.All() {
		for _, r := range a.Compute {
			if k := r.Key(); r.Peak > 0 && !seen[k] {
				seen[k] = true
				cd.Ceilings = append(cd.Ceilings, chart.Ceiling{Name: ceilingName(k), FLOPS: r.Peak})
			}
		}
	}
	noL2 := false
	i := -1
	for a := range as.All() {
		i++
		rate := 0.0
		if a.Duration > 0 {
			rate = a.FLOPs / a.Duration
		}
		// The kernel's roof: its highest precision's peak.
		peak := 0.0
		for _, r := range a.Compute {
			peak = max(peak, r.Peak)
		}
		var l2 float64
		for _, l := range a.Memory {
			if l.Level == ncu.L2 {
				l2 = l.Bytes
			}
			bw := 0.0
			switch l.Level {
			case ncu.DRAM:
				bw = cd.DRAM
			case ncu.L2:
				if cd.L2 == 0 {
					noL2 = true
					continue
				}
				bw = cd.L2
			case ncu.L1:
				if l.Bytes < l2 {
					notes = append(notes, fmt.Sprintf("not on the chart: ID %d's L1 point (%s at L1, %s at L2: its traffic bypasses the L1 counters)",
						a.ID, units.FormatDecimal(l.Bytes, "B"), units.FormatDecimal(l2, "B")))
					continue
				}
			}
			p := chart.Point{Label: names[i], Key: strconv.Itoa(a.ID), Group: levelGroup[l.Level], FLOPs: a.FLOPs, Bytes: l.Bytes, Rate: rate, Measured: true}
			if bw > 0 && peak > 0 && l.Bytes > 0 {
				p.Roof = min(peak, bw*a.FLOPs/l.Bytes)
				if rate > p.Roof && l.Level == ncu.L2 && cd.L2Measured {
					// ncu counts all L2 traffic; the catalog measures reads.
					notes = append(notes, fmt.Sprintf("ID %d's L2 point lies above its roof: %s of L2 traffic (reads and writes) against %s of measured L2 reads",
						a.ID, units.FormatBandwidth(l.Bytes/a.Duration), units.FormatBandwidth(cd.L2)))
				}
			}
			c.Points = append(c.Points, p)
		}
	}
	if noL2 {
		notes = append(notes, "not on the chart: the L2 points; the catalog has no L2 bandwidth for "+d.Name+" (measured or datasheet) to draw them against")
	}
	c.Devices = []chart.Device{cd}
	return c, notes
}

// levelGroup names a memory level's points in the legend.
var levelGroup = map[ncu.Level]string{ncu.DRAM: chart.GroupDRAM, ncu.L2: chart.GroupL2, ncu.L1: chart.GroupL1}

// distinctNames shortens kernel names for a chart: template arguments are
// dropped and the rest cut to n runes; names that then read alike get back
// the first template argument in which they differ, or an index.
func distinctNames(names []string, n int) []string {
	out := make([]string, len(names))
	for i, s := range names {
		base, _ := splitTemplate(s)
		out[i] = cutRunes(base, n)
	}
	same := map[string][]int{}
	for i, s := range out {
		same[s] = append(same[s], i)
	}
	for _, idx := range same {
		if len(idx) < 2 {
			continue
		}
		args := make([][]string, len(idx))
		for k, i := range idx {
			_, args[k] = splitTemplate(names[i])
		}
		if j := telling(args); j >= 0 {
			for k, i := range idx {
				a := ""
				if j < len(args[k]) {
					a = args[k][j]
				}
				out[i] += "<" + cutRunes(a, 20) + ">"
			}
		}
		count := map[string]int{}
		for _, i := range idx {
			count[out[i]]++
		}
		seq := map[string]int{}
		for _, i := range idx {
			if s := out[i]; count[s] > 1 {
				seq[s]++
				out[i] = s + " #" + strconv.Itoa(seq[s])
			}
		}
	}
	return out
}

// splitTemplate splits "name<a, b<c>>" into "name" and its top-level
// arguments ["a", "b<c>"].
func splitTemplate(s string) (string, []string) {
	i := strings.IndexByte(s, '<')
	if i < 0 {
		return s, nil
	}
	var args []string
	depth, start := 0, i+1
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				return s[:i], append(args, strings.TrimSpace(s[start:j]))
			}
		case ',':
			if depth == 1 {
				args = append(args, strings.TrimSpace(s[start:j]))
				start = j + 1
			}
		}
	}
	return s[:i], append(args, strings.TrimSpace(s[start:]))
}

// telling returns the index of the template argument that tells the most
// lists apart (the first of equals), or -1 where all agree.
func telling(lists [][]string) int {
	n := 0
	for _, l := range lists {
		n = max(n, len(l))
	}
	best, bestN := -1, 1
	for j := 0; j < n; j++ {
		seen := map[string]bool{}
		for _, l := range lists {
			a := ""
			if j < len(l) {
				a = l[j]
			}
			seen[a] = true
		}
		if len(seen) > bestN {
			best, bestN = j, len(seen)
		}
	}
	return best
}

func cutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// NCURecords is 'gpucalc ncu': kernels, compute, memory and occupancy, one
// row per kernel (or per kernel and precision or level), keyed by ncu's ID.
func NCURecords(as *ncu.Analyses, device string) []Table {
	k := Table{Key: "kernels", Header: []string{"id", "name", "full_name", "device", "compute_capability", "block_x", "block_y", "block_z",
		"grid_x", "grid_y", "grid_z", "duration_seconds", "flops", "flops_per_second", "bound", "bound_share", "implausible"}}
	c := Table{Key: "compute", Header: []string{"id", "dtype", "path", "flops", "flops_per_second", "peak_flops_per_second", "share_of_peak"}}
	m := Table{Key: "memory", Header: []string{"id", "level", "bytes", "bytes_per_second", "ceiling_bytes_per_second", "share_of_ceiling", "flops_per_byte"}}
	o := Table{Key: "occupancy", Header: []string{"id", "registers_per_thread", "static_smem_bytes", "dynamic_smem_bytes", "smem_config_bytes",
		"theoretical_pct", "ncu_theoretical_pct", "match", "achieved_pct", "blocks_per_sm", "limiters", "error"}}
	pctCell := func(p *float64) string {
		if p == nil {
			return ""
		}
		return num(*p)
	}
	k.Stream = kernelRows(as, func(a *ncu.Analysis, row []string, yield func([]string) bool) bool {
		dur, rate := "", ""
		if a.Duration > 0 {
			dur, rate = num(a.Duration), num(a.FLOPs/a.Duration)
		}
		share := ""
		if a.Bound != "" {
			share = num(a.BoundShare)
		}
		return yield(append(row[:0], integer(a.ID), a.Name, a.FullName, device, a.CC.String(), integer(a.Block.X), integer(a.Block.Y), integer(a.Block.Z),
			integer(a.Grid.X), integer(a.Grid.Y), integer(a.Grid.Z), dur, num(a.FLOPs), rate, a.Bound, share, strings.Join(a.Implausible, "; ")))
	})
	c.Stream = kernelRows(as, func(a *ncu.Analysis, row []string, yield func([]string) bool) bool {
		for _, r := range a.Compute {
			rate, share := "", ""
			if a.Duration > 0 {
				rate = num(r.PerSecond)
				if r.Peak > 0 {
					share = num(r.Share)
				}
			}
			if !yield(append(row[:0], integer(a.ID), string(r.DType), string(r.Path), num(r.FLOPs), rate, optNum(r.Peak), share)) {
				return false
			}
		}
		return true
	})
	m.Stream = kernelRows(as, func(a *ncu.Analysis, row []string, yield func([]string) bool) bool {
		for _, l := range a.Memory {
			rate, share, ai := "", "", ""
			if a.Duration > 0 {
				rate = num(l.PerSecond)
				if l.Ceiling > 0 {
					share = num(l.Share)
				}
			}
			if l.Bytes > 0 {
				ai = num(l.Intensity)
			}
			if !yield(append(row[:0], integer(a.ID), string(l.Level), num(l.Bytes), rate, optNum(l.Ceiling), share, ai)) {
				return false
			}
		}
		return true
	})
	o.Stream = kernelRows(as, func(a *ncu.Analysis, row []string, yield func([]string) bool) bool {
		regs, static, dyn, config := "", "", "", ""
		if l := a.Launch; l != nil {
			regs, static, dyn, config = integer(l.RegistersPerThread), integer(l.StaticSmem), integer(l.DynamicSmem), optInt(l.SmemConfig)
		}
		occ := a.Occupancy
		ours, blocks, lim, match := "", "", "", ""
		if occ.Error == "" {
			ours, blocks, lim = num(occ.Theoretical), integer(occ.BlocksPerSM), occ.Limiters.String()
			if a.Kernel.Occupancy.Theoretical != nil {
				match = boolean(occ.Match)
			}
		}
		return yield(append(row[:0], integer(a.ID), regs, static, dyn, config, ours, pctCell(a.Kernel.Occupancy.Theoretical), match,
			pctCell(a.Kernel.Occupancy.Achieved), blocks, lim, occ.Error))
	})
	return []Table{k, c, m, o}
}

// NCUView is 'gpucalc ncu': the device measured against and every kernel.
type NCUView struct {
	Device       string        `json:"device"`
	DeviceOrigin string        `json:"device_origin"`
	Kernels      *ncu.Analyses `json:"kernels"`
}

// jsonList: an export's kernels are written one at a time (a million
// would take gigabytes encoded whole).
func (v NCUView) jsonList() (any, string, int, func() func(int) any) {
	rest := v
	rest.Kernels = &ncu.Analyses{}
	return rest, "kernels", v.Kernels.Len(), func() func(int) any {
		at := v.Kernels.Cursor()
		return func(i int) any { return at(i) }
	}
}
