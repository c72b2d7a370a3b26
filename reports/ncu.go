package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/units"
)

// NCU renders kernels measured by Nsight Compute: an overview, then compute,
// memory and occupancy tables keyed by ncu's launch ID. device names the
// catalog entry the shares are taken against and origin where it came from.
func NCU(as []ncu.Analysis, device, origin string) []Table {
	return []Table{ncuKernels(as, device, origin), ncuCompute(as), ncuMemory(as), ncuOccupancy(as)}
}

func ncuKernels(as []ncu.Analysis, device, origin string) Table {
	t := Table{
		Title:  fmt.Sprintf("Kernels on %s (%s)", device, origin),
		Header: []string{"ID", "Kernel", "Block", "Grid", "Duration", "FLOP/s", "Bound"},
	}
	for _, a := range as {
		flops, bound := "-", "-"
		if a.FLOPs > 0 && a.Duration > 0 {
			flops = units.FormatFLOPS(a.FLOPs / a.Duration)
		}
		if a.Bound != "" {
			bound = a.Bound + " " + pct(a.BoundShare)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(a.ID), a.Name, a.Block.String(), a.Grid.String(),
			duration(a.Duration), flops, bound})
	}
	t.Notes = []string{
		"FLOP/s: FADD, FMUL and FFMA (2 FLOPs) thread instructions of each precision, and the tensor-core operation counters, over gpu__time_duration.",
		"Bound: the device ceiling (dense datasheet peak or bandwidth) the kernel comes closest to, and the share of it reached.",
	}
	for _, a := range as {
		if len(a.Missing) > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("ID %d: the export lacks %v", a.ID, a.Missing))
		}
	}
	return t
}

func ncuCompute(as []ncu.Analysis) Table {
	t := Table{Title: "Compute", Header: []string{"ID", "Precision", "FLOPs", "FLOP/s", "Peak", "Of peak"}}
	for _, a := range as {
		for _, r := range a.Compute {
			peak, share := "-", "-"
			if r.Peak > 0 {
				peak, share = units.FormatFLOPS(r.Peak), pct(r.Share)
			}
			t.Rows = append(t.Rows, []string{strconv.Itoa(a.ID), r.Key(), units.FormatDecimal(r.FLOPs, "FLOP"),
				units.FormatFLOPS(r.PerSecond), peak, share})
		}
	}
	t.Notes = []string{"fp16 on CUDA cores counts packed HADD2/HMUL2 as 2 FLOPs and HFMA2 as 4 (bf16 forms included), as Nsight Compute does."}
	return t
}

func ncuMemory(as []ncu.Analysis) Table {
	t := Table{Title: "Memory", Header: []string{"ID", "Level", "Bytes", "Bandwidth", "Of ceiling", "FLOP/byte"}}
	for _, a := range as {
		for _, l := range a.Memory {
			ceil, ai := "-", "-"
			if l.Ceiling > 0 {
				ceil = pct(l.Share)
			}
			if l.Bytes > 0 {
				ai = strconv.FormatFloat(l.Intensity, 'g', 4, 64)
			}
			t.Rows = append(t.Rows, []string{strconv.Itoa(a.ID), string(l.Level), units.FormatDecimal(l.Bytes, "B"),
				units.FormatBandwidth(l.PerSecond), ceil, ai})
		}
	}
	t.Notes = []string{
		"dram: dram__bytes_read + dram__bytes_write. l2: bytes between the SMs and L2 (l1tex__m_xbar2l1tex_read_bytes + l1tex__m_l1tex2xbar_write_bytes).",
		"l1: L1 tag-stage sectors × 32 B (l1tex__t_sectors); TMA and wgmma traffic bypasses it. Sizes and rates are decimal (1 MB = 1e6 B).",
	}
	return t
}

func ncuOccupancy(as []ncu.Analysis) Table {
	t := Table{
		Title: "Occupancy (% of the SM's warp slots)",
		Header: []string{"ID", "Registers", "Shared memory", "Theoretical (gpucalc)", "Theoretical (Nsight)", "Match",
			"Achieved", "Blocks/SM", "Limiter"},
	}
	var mismatch []string
	for _, a := range as {
		o := a.Occupancy
		ours, match, blocks, limiter := "-", "-", "-", "-"
		if o.Error == "" {
			ours, blocks, limiter = occPct(o.Theoretical), strconv.Itoa(o.BlocksPerSM), o.Limiters.String()
			match = "yes"
			if !o.Match {
				match = "NO"
				mismatch = append(mismatch, strconv.Itoa(a.ID))
			}
		}
		smem := a.Launch.StaticSmem + a.Launch.DynamicSmem
		t.Rows = append(t.Rows, []string{strconv.Itoa(a.ID), strconv.Itoa(a.Launch.RegistersPerThread),
			units.FormatSize(int64(smem)), ours, occPct(o.NCU), match, occPct(o.Achieved), blocks, limiter})
	}
	t.Notes = []string{
		"Theoretical (gpucalc): the CUDA runtime's calculation from the launch statistics: registers, block size, static + dynamic shared memory (shown; the driver adds 1 KiB per block), barriers and the carveout the driver chose.",
		"Theoretical (Nsight): sm__maximum_warps_per_active_cycle_pct. Achieved: sm__warps_active.avg.pct_of_peak_sustained_active.",
	}
	if len(mismatch) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("gpucalc and Nsight Compute disagree for ID %s: check the launch statistics in the export (a non-default launch attribute?).", strings.Join(mismatch, ", ")))
	}
	for _, a := range as {
		if a.Occupancy.Error != "" {
			t.Notes = append(t.Notes, fmt.Sprintf("ID %d: %s", a.ID, a.Occupancy.Error))
		}
	}
	return t
}

// occPct prints an occupancy percentage to the two decimals Nsight Compute
// prints.
func occPct(p float64) string { return strconv.FormatFloat(math.Round(p*100)/100, 'f', -1, 64) + "%" }

func duration(s float64) string {
	if s <= 0 {
		return "-"
	}
	return units.FormatDuration(s)
}
