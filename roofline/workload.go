package roofline

import (
	"fmt"
	"sort"

	"github.com/gpucalc/gpucalc/ops"
)

// AnalyzeWorkload places every op of w on the model's device, in order,
// with the entry's name and count.
func (m *Model) AnalyzeWorkload(w ops.Workload) ([]Point, error) {
	out := make([]Point, 0, len(w.Entries))
	for _, e := range w.Entries {
		p, err := m.Analyze(e.Op)
		if err != nil {
			if e.Name == "" {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %w", e.Name, err)
		}
		p.Name, p.Count = e.Name, e.Count
		out = append(out, p)
	}
	return out, nil
}

// Summary totals a list of points (a workload) on one device. Times are
// weighted by each point's count.
type Summary struct {
	Device     string  `json:"device"`
	Ops        int     `json:"ops"`
	Expected   float64 `json:"expected_seconds"`
	LowerBound float64 `json:"lower_bound_seconds"`
	FLOPs      float64 `json:"flops"`
	Bytes      float64 `json:"bytes"`
	// MemoryBoundShare is the share of expected time spent in ops whose
	// roofline bound is memory.
	MemoryBoundShare float64 `json:"memory_bound_share"`
	// Top are the indexes of the points taking the most expected time,
	// longest first (at most five).
	Top []int `json:"top"`
}

// Summarize totals points.
func Summarize(points []Point) Summary {
	var s Summary
	var mem float64
	for _, p := range points {
		n := float64(max(p.Count, 1))
		s.Device = p.Device
		s.Ops += max(p.Count, 1)
		s.Expected += n * p.Expected
		s.LowerBound += n * p.LowerBound
		s.FLOPs += n * p.FLOPs
		s.Bytes += n * p.Bytes
		if p.Bound == MemoryBound {
			mem += n * p.Expected
		}
	}
	if s.Expected > 0 {
		s.MemoryBoundShare = mem / s.Expected
	}
	idx := make([]int, len(points))
	for i := range idx {
		idx[i] = i
	}
	time := func(i int) float64 { return float64(max(points[i].Count, 1)) * points[i].Expected }
	sort.SliceStable(idx, func(a, b int) bool { return time(idx[a]) > time(idx[b]) })
	s.Top = idx[:min(5, len(idx))]
	return s
}
