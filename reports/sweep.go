package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/occupancy"
)

// sweepAxis names the varied quantity and formats its values.
func sweepAxis(q occupancy.Quantity) (name string, format func(int) string) {
	switch q {
	case occupancy.VaryThreads:
		return "Threads per block", strconv.Itoa
	case occupancy.VaryRegs:
		return "Registers per thread", strconv.Itoa
	}
	return "Shared memory per block", size
}

// SweepTable renders a sweep as ranges of the varied quantity with the same
// resident blocks and limits; the range holding the current value is marked.
func SweepTable(t occupancy.Target, q occupancy.Quantity, pts []occupancy.Point, current int) Table {
	name, f := sweepAxis(q)
	tab := Table{Title: "Occupancy against " + strings.ToLower(name) + " on " + t.String(),
		Header: []string{name, "Blocks per SM", "Warps per SM", "Occupancy", "Limited by", "Current"}}
	for _, g := range sweepGroups(q, pts) {
		span := f(g.from)
		if g.to > g.from {
			span += " – " + f(g.to)
		}
		mark := ""
		if current >= g.from && current <= g.to {
			mark = "◀ " + f(current)
		}
		p := g.first
		tab.Rows = append(tab.Rows, []string{span, strconv.Itoa(p.Blocks), strconv.Itoa(p.Warps), pct(p.Occupancy), limiterText(p.Limiters), mark})
	}
	tab.Notes = []string{map[occupancy.Quantity]string{
		occupancy.VaryThreads: "Block sizes in steps of 32 (plus the current one); rows group sizes with the same blocks per SM, warps and limits.",
		occupancy.VaryRegs:    "Every register count; rows group counts with the same blocks per SM, warps and limits.",
		occupancy.VarySmem:    "Shared memory per block, static plus dynamic, exact to the byte; rows group sizes with the same blocks per SM, warps and limits.",
	}[q]}
	return tab
}

// sweepGroup is a range of the varied quantity with the same resident
// blocks, warps and limits.
type sweepGroup struct {
	from, to int
	first    occupancy.Point
}

// sweepGroups groups a sweep's points into ranges with the same result.
func sweepGroups(q occupancy.Quantity, pts []occupancy.Point) []sweepGroup {
	var out []sweepGroup
	for i := 0; i < len(pts); {
		j := i
		for j+1 < len(pts) && pts[j+1].Blocks == pts[i].Blocks && pts[j+1].Warps == pts[i].Warps && pts[j+1].Limiters == pts[i].Limiters {
			j++
		}
		// Shared-memory points are the largest size of each allocation, so
		// a range starts one byte above the previous range's last point.
		lo := pts[i].X
		if q == occupancy.VarySmem && i > 0 {
			lo = pts[i-1].X + 1
		}
		out = append(out, sweepGroup{from: lo, to: pts[j].X, first: pts[i]})
		i = j + 1
	}
	return out
}

// OccupancyChart is the three panels of 'gpucalc occupancy --plot': the
// configuration k, l on t and the sweeps around it (occupancy.SweepAround).
func OccupancyChart(t occupancy.Target, k occupancy.Kernel, l occupancy.Launch, n occupancy.Neighbourhood) chart.Occupancy {
	r := n.Result
	where := t.Arch.CC.SM()
	if t.Device != "" {
		where = t.Device + " (" + where + ")"
	}
	c := chart.Occupancy{Title: fmt.Sprintf("Occupancy on %s: %d threads, %d registers, %s shared memory: %d warps per SM (%s), limited by %s",
		where, l.Threads, k.Regs, units0(k.StaticSmem+l.DynamicSmem), r.Warps, pct(r.Occupancy()), limiterText(r.Limiters))}
	for i, q := range occupancy.Quantities {
		c.Panels[i] = SweepChart(t, q, n.Sweeps[i], q.Value(k, l))
	}
	return c
}

func units0(b int) string {
	if b == 0 {
		return "no"
	}
	return size(b)
}

// SweepChart is the chart of 'gpucalc occupancy sweep --plot': warps per SM
// against quantity q, the current value marked.
func SweepChart(t occupancy.Target, q occupancy.Quantity, pts []occupancy.Point, current int) chart.Sweep {
	name, f := sweepAxis(q)
	return chart.Sweep{Target: t, Quantity: q, Points: pts, Current: current, Name: name, CurrentLabel: f(current)}
}

// sweepColumn names the varied quantity in record headers.
func sweepColumn(q occupancy.Quantity) string {
	switch q {
	case occupancy.VaryThreads:
		return "threads_per_block"
	case occupancy.VaryRegs:
		return "regs_per_thread"
	}
	return "smem_per_block_bytes"
}

// SweepRecords is 'gpucalc occupancy sweep': the rows of SweepTable, each
// range as from and to, the current value in the row that holds it.
func SweepRecords(q occupancy.Quantity, pts []occupancy.Point, current int) []Table {
	n := sweepColumn(q)
	t := Table{Key: "sweep", Header: []string{"from_" + n, "to_" + n, "blocks_per_sm", "warps_per_sm", "occupancy", "limiters", "current_" + n}}
	for _, g := range sweepGroups(q, pts) {
		cur := ""
		if current >= g.from && current <= g.to {
			cur = integer(current)
		}
		p := g.first
		t.Rows = append(t.Rows, []string{integer(g.from), integer(g.to), integer(p.Blocks), integer(p.Warps), num(p.Occupancy), p.Limiters.String(), cur})
	}
	return []Table{t}
}

// SweepView is 'gpucalc occupancy sweep'.
type SweepView struct {
	Target  occupancy.Target   `json:"target"`
	Kernel  occupancy.Kernel   `json:"kernel"`
	Launch  occupancy.Launch   `json:"launch"`
	Vary    occupancy.Quantity `json:"vary"`
	Current int                `json:"current"`
	Points  []occupancy.Point  `json:"points"`
}
