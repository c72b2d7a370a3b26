package roofline

import (
	"fmt"
	"strings"
)

// L2State is what the L2 cache holds when an op starts.
type L2State string

// Launch is how an op's kernels are launched.
type Launch string

// The measurement conditions.
const (
	// L2Cold: the inputs come from DRAM, as benchmarks that flush L2
	// between runs measure (triton's do_bench, nvbench's default).
	L2Cold L2State = "cold"
	// L2Warm: inputs that fit in L2 are still there from the last run
	// (replays without a flush, a serving engine's small layers).
	L2Warm L2State = "warm"
	// LaunchEager: each op is launched from the host and timed alone: its
	// time carries the launch overhead and the kernel's ramp.
	LaunchEager Launch = "eager"
	// LaunchGraph: the op's kernels replay back to back in a CUDA graph:
	// each kernel costs the graph's kernel period, no host launch.
	LaunchGraph Launch = "graph"
)

// Conditions are the measurement conditions an op is priced under. The zero
// value is the default: a cold L2 and eager launches.
type Conditions struct {
	L2     L2State `json:"l2"`
	Launch Launch  `json:"launch"`
}

// Default conditions, as gpucalc's figures have always assumed.
const (
	DefaultL2     = L2Cold
	DefaultLaunch = LaunchEager
)

// ParseL2 reads --l2's value.
func ParseL2(s string) (L2State, error) {
	switch v := L2State(strings.ToLower(s)); v {
	case L2Cold, L2Warm:
		return v, nil
	case "":
		return DefaultL2, nil
	}
	return "", fmt.Errorf("l2=%q: expected cold or warm", s)
}

// ParseLaunch reads --launch's value.
func ParseLaunch(s string) (Launch, error) {
	switch v := Launch(strings.ToLower(s)); v {
	case LaunchEager, LaunchGraph:
		return v, nil
	case "":
		return DefaultLaunch, nil
	}
	return "", fmt.Errorf("launch=%q: expected eager or graph", s)
}

// norm fills the zero fields with the defaults.
func (c Conditions) norm() Conditions {
	if c.L2 == "" {
		c.L2 = DefaultL2
	}
	if c.Launch == "" {
		c.Launch = DefaultLaunch
	}
	return c
}

// warm reports whether inputs that fit in L2 come from L2.
func (c Conditions) warm() bool { return c.L2 == L2Warm }

// graph reports whether kernels replay in a CUDA graph.
func (c Conditions) graph() bool { return c.Launch == LaunchGraph }

// String states the conditions in a few words ("cold L2, eager launch"),
// for every output format.
func (c Conditions) String() string {
	c = c.norm()
	launch := "eager launch"
	if c.graph() {
		launch = "CUDA-graph replay"
	}
	return string(c.L2) + " L2, " + launch
}

// Under is the model of the same device under conditions c; m itself is
// unchanged.
func (m *Model) Under(c Conditions) *Model {
	n := *m
	n.cond = c.norm()
	return &n
}

// Conditions are the conditions the model prices ops under.
func (m *Model) Conditions() Conditions { return m.cond.norm() }
