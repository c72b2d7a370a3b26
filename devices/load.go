package devices

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/gpucalc/gpucalc/units"
	"go.yaml.in/yaml/v3"
)

// A device file is a YAML mapping. Every number is written as
// {value: ..., source: KEY} where KEY names an entry of the file's
// `sources` mapping; see data/gpus/h100-sxm.yaml for a complete example and
// the README for the schema.

// fileParser turns one device file into a Device, walking the YAML node tree
// itself so that every error names the file and line.
type fileParser struct {
	file    string
	sources map[string]string
	// lines records where each field was given, so that a contradiction
	// found after parsing still names a line.
	lines map[string]int
}

func (p *fileParser) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.file, n.Line, fmt.Sprintf(format, args...))
}

// pairs returns the key/value nodes of a mapping, rejecting other kinds.
func (p *fileParser) pairs(n *yaml.Node, what string) ([][2]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n, "%s must be a mapping", what)
	}
	seen := map[string]bool{}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			return nil, p.errorf(k, "%s: %q given twice", what, k.Value)
		}
		seen[k.Value] = true
		out = append(out, [2]*yaml.Node{k, n.Content[i+1]})
	}
	return out, nil
}

func (p *fileParser) unknown(k *yaml.Node, what string, known ...string) error {
	return p.errorf(k, "unknown field %q in %s (known: %s)", k.Value, what, strings.Join(known, ", "))
}

func (p *fileParser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		return "", p.errorf(n, "%s must be a non-empty string", what)
	}
	return n.Value, nil
}

// quantity reads {value, source[, per_sm_per_clock, clock]} and parses the
// value with parse.
type quantity struct {
	value         float64
	source        string
	perSMPerClock float64
	clock         string
}

func (p *fileParser) quantity(n *yaml.Node, what string, parse func(string) (float64, error), peak bool) (quantity, error) {
	var q quantity
	if n.Kind != yaml.MappingNode {
		return q, p.errorf(n, "%s must be written {value: ..., source: ...}; every number names its source", what)
	}
	ps, err := p.pairs(n, what)
	if err != nil {
		return q, err
	}
	var haveValue bool
	for _, kv := range ps {
		k, v := kv[0], kv[1]
		switch {
		case k.Value == "value":
			x, err := parse(v.Value)
			if err != nil {
				return q, p.errorf(v, "%s: %v", what, err)
			}
			q.value, haveValue = x, true
		case k.Value == "source":
			src, ok := p.sources[v.Value]
			if !ok {
				return q, p.errorf(v, "%s: source %q is not in the file's sources (add it there with a title and URL)", what, v.Value)
			}
			q.source = src
		case k.Value == "per_sm_per_clock" && peak:
			x, err := parseCount(v.Value)
			if err != nil {
				return q, p.errorf(v, "%s.per_sm_per_clock: %v", what, err)
			}
			q.perSMPerClock = x
		case k.Value == "clock" && peak:
			if v.Value != "boost" && v.Value != "tensor" {
				return q, p.errorf(v, "%s.clock: %q; expected boost or tensor", what, v.Value)
			}
			q.clock = v.Value
		default:
			if peak {
				return q, p.unknown(k, what, "value", "source", "per_sm_per_clock", "clock")
			}
			return q, p.unknown(k, what, "value", "source")
		}
	}
	if !haveValue {
		return q, p.errorf(n, "%s: missing value", what)
	}
	if q.source == "" {
		return q, p.errorf(n, "%s: missing source; every number names its source", what)
	}
	return q, nil
}

func parseCount(s string) (float64, error) {
	var x float64
	if _, err := fmt.Sscanf(s, "%g", &x); err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("%q is not a non-negative number", s)
	}
	return x, nil
}

// parseGPCs reads SM counts per GPC written "18, 18, 16".
func parseGPCs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		x, err := parseInt(strings.TrimSpace(f))
		if err != nil || x < 1 {
			return nil, fmt.Errorf("%q: expected SM counts per GPC such as \"18, 18, 16\"", s)
		}
		out = append(out, int(x))
	}
	return out, nil
}

func parseInt(s string) (float64, error) {
	x, err := parseCount(s)
	if err == nil && x != math.Trunc(x) {
		err = fmt.Errorf("%q is not a whole number", s)
	}
	return x, err
}

func parseSizeF(s string) (float64, error) {
	b, err := units.ParseSize(s)
	return float64(b), err
}

// parse applies the file's fields onto d (a zero Device for a new entry, a
// copy of the catalog's for an override).
func (p *fileParser) parse(doc *yaml.Node, d *Device) error {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	top, err := p.pairs(doc, "device file")
	if err != nil {
		return err
	}
	// Sources first: the quantities refer to them.
	p.sources = map[string]string{}
	for _, kv := range top {
		if kv[0].Value != "sources" {
			continue
		}
		ps, err := p.pairs(kv[1], "sources")
		if err != nil {
			return err
		}
		for _, s := range ps {
			if s[1].Kind != yaml.ScalarNode || strings.TrimSpace(s[1].Value) == "" {
				return p.errorf(s[1], "source %q must be a title with a URL or reference", s[0].Value)
			}
			p.sources[s[0].Value] = s[1].Value
		}
	}
	if d.Sources == nil {
		d.Sources = map[string]string{}
	}
	p.lines = map[string]int{}
	set := func(field string, q quantity) { d.Sources[field] = q.source }
	known := []string{"name", "vendor", "aliases", "architecture", "compute_capability", "sources", "sms",
		"boost_clock", "tensor_clock", "memory", "l2", "host_link", "peer_link", "tdp", "dense", "sparse", "measured", "cluster_gpcs"}
	for _, kv := range top {
		k, v := kv[0], kv[1]
		p.lines[k.Value] = k.Line
		switch k.Value {
		case "sources":
		case "name":
			// Read by the caller to find the entry.
		case "vendor":
			if d.Vendor, err = p.str(v, "vendor"); err != nil {
				return err
			}
		case "architecture":
			if d.Architecture, err = p.str(v, "architecture"); err != nil {
				return err
			}
		case "aliases":
			if v.Kind != yaml.SequenceNode {
				return p.errorf(v, "aliases must be a list of names")
			}
			for _, a := range v.Content {
				s, err := p.str(a, "alias")
				if err != nil {
					return err
				}
				d.Aliases = append(d.Aliases, s)
			}
		case "compute_capability":
			cc, err := ParseCC(v.Value)
			if err != nil {
				return p.errorf(v, "%v", err)
			}
			d.CC = cc
		case "sms":
			q, err := p.quantity(v, "sms", parseInt, false)
			if err != nil {
				return err
			}
			d.SMs = int(q.value)
			set("sms", q)
		case "cluster_gpcs":
			var gpcs []int
			q, err := p.quantity(v, "cluster_gpcs", func(s string) (float64, error) {
				gpcs, err = parseGPCs(s)
				return float64(len(gpcs)), err
			}, false)
			if err != nil {
				return err
			}
			d.ClusterGPCs = gpcs
			set("cluster_gpcs", q)
		case "boost_clock", "tensor_clock":
			q, err := p.quantity(v, k.Value, units.ParseFrequency, false)
			if err != nil {
				return err
			}
			if k.Value == "boost_clock" {
				d.BoostClockHz = q.value
			} else {
				d.TensorClockHz = q.value
			}
			set(k.Value, q)
		case "tdp":
			q, err := p.quantity(v, "tdp", units.ParsePower, false)
			if err != nil {
				return err
			}
			d.TDPWatts = q.value
			set("tdp", q)
		case "memory", "l2", "host_link", "peer_link":
			if err := p.level(k.Value, v, d); err != nil {
				return err
			}
		case "dense", "sparse":
			ps, err := p.pairs(v, k.Value)
			if err != nil {
				return err
			}
			m := &d.Dense
			if k.Value == "sparse" {
				m = &d.Sparse
			}
			if *m == nil {
				*m = map[string]Peak{}
			}
			for _, pk := range ps {
				name := pk[0].Value
				if !validPeakKey(name) {
					return p.errorf(pk[0], "unknown peak %q in %s (known: %s)", name, k.Value, strings.Join(peakKeys(), ", "))
				}
				q, err := p.quantity(pk[1], k.Value+"."+name, units.ParseFLOPS, true)
				if err != nil {
					return err
				}
				(*m)[name] = Peak{PerSecond: q.value, PerSMPerClock: q.perSMPerClock, Clock: q.clock}
				set(k.Value+"."+name, q)
				p.lines[k.Value+"."+name] = pk[0].Line
			}
		case "measured":
			if err := p.measured(v, d); err != nil {
				return err
			}
		default:
			return p.unknown(k, "device file", known...)
		}
	}
	return nil
}

// level reads memory, l2, host_link and peer_link: a type and sized or rated
// fields.
func (p *fileParser) level(which string, n *yaml.Node, d *Device) error {
	ps, err := p.pairs(n, which)
	if err != nil {
		return err
	}
	link := &d.HostLink
	if which == "peer_link" {
		link = &d.PeerLink
	}
	isLink := which == "host_link" || which == "peer_link"
	for _, kv := range ps {
		k, v := kv[0], kv[1]
		field := which + "." + k.Value
		switch {
		case k.Value == "type" && which != "l2":
			s, err := p.str(v, field)
			if err != nil {
				return err
			}
			if which == "memory" {
				d.Memory.Type = s
			} else {
				link.Type = s
			}
		case k.Value == "latency" && isLink:
			q, err := p.quantity(v, field, units.ParseDuration, false)
			if err != nil {
				return err
			}
			link.LatencySeconds = q.value
			d.Sources[field] = q.source
		case k.Value == "size" && !isLink:
			q, err := p.quantity(v, field, parseSizeF, false)
			if err != nil {
				return err
			}
			if which == "memory" {
				d.Memory.Bytes = int64(q.value)
			} else {
				d.L2.Bytes = int64(q.value)
			}
			d.Sources[field] = q.source
		case k.Value == "bandwidth":
			q, err := p.quantity(v, field, units.ParseBandwidth, false)
			if err != nil {
				return err
			}
			switch which {
			case "memory":
				d.Memory.BytesPerSecond = q.value
			case "l2":
				d.L2.BytesPerSecond = q.value
			default:
				link.BytesPerSecond = q.value
			}
			d.Sources[field] = q.source
		default:
			switch which {
			case "memory":
				return p.unknown(k, which, "type", "size", "bandwidth")
			case "l2":
				return p.unknown(k, which, "size", "bandwidth")
			}
			return p.unknown(k, which, "type", "bandwidth", "latency")
		}
	}
	return nil
}

// peakOrder lists every peak key a device file may give, widest type first;
// listings follow it.
var peakOrder = []string{"fp64", "fp64_tensor", "fp32", "tf32_tensor", "bf16", "bf16_tensor", "fp16", "fp16_tensor",
	"fp8_tensor", "int8", "int8_tensor", "fp4_tensor"}

func peakKeys() []string {
	k := slices.Clone(peakOrder)
	sort.Strings(k)
	return k
}

func validPeakKey(k string) bool { return slices.Contains(peakOrder, k) }

// invalid is a validation failure; fields name what it concerns, so that
// the error can point at the line of a file that gave one of them.
type invalid struct {
	fields []string
	msg    string
}

func (e *invalid) Error() string { return e.msg }

func invalidf(fields []string, format string, args ...any) error {
	return &invalid{fields, fmt.Sprintf(format, args...)}
}

// validate checks that an entry is complete and consistent: the checks that
// make a contradiction in a user file an error rather than a wrong answer.
func (d *Device) validate() error {
	var missing []string
	need := func(ok bool, field string) {
		if !ok {
			missing = append(missing, field)
		}
	}
	need(d.Vendor != "", "vendor")
	need(d.Architecture != "", "architecture")
	need(d.SMs > 0, "sms")
	need(d.BoostClockHz > 0, "boost_clock")
	need(d.Memory.BytesPerSecond > 0, "memory.bandwidth")
	need(d.Memory.Bytes > 0, "memory.size")
	need(len(d.Dense) > 0, "dense")
	if d.Vendor == "NVIDIA" {
		need(d.CC != (CC{}), "compute_capability")
	}
	if len(missing) > 0 {
		return invalidf(nil, "missing %s", strings.Join(missing, ", "))
	}
	if d.TensorClockHz == 0 {
		d.TensorClockHz = d.BoostClockHz
	}
	if len(d.ClusterGPCs) > 0 {
		n := 0
		for _, g := range d.ClusterGPCs {
			n += g
		}
		if n != d.SMs {
			return fmt.Errorf("cluster_gpcs add up to %d SMs, but sms is %d", n, d.SMs)
		}
	}
	if d.TensorClockHz > d.BoostClockHz*1.0001 {
		return invalidf([]string{"tensor_clock", "boost_clock"}, "tensor_clock %s is above boost_clock %s", units.FormatFrequency(d.TensorClockHz), units.FormatFrequency(d.BoostClockHz))
	}
	if d.Vendor == "NVIDIA" {
		a, err := ArchFor(d.CC)
		if err != nil {
			return invalidf([]string{"compute_capability"}, "%v", err)
		}
		if a.Family != d.Architecture {
			return invalidf([]string{"architecture", "compute_capability"}, "architecture %q contradicts compute capability %s, which is %s", d.Architecture, d.CC, a.Family)
		}
	}
	for k, sp := range d.Sparse {
		dn, ok := d.Dense[k]
		if !ok {
			return invalidf([]string{"sparse." + k}, "sparse.%s has no dense counterpart; give the dense rate too", k)
		}
		// 3%: datasheets round (L40S prints 362.05 dense, 733 sparse).
		if r := sp.PerSecond / dn.PerSecond; math.Abs(r/2-1) > 0.03 {
			return invalidf([]string{"sparse." + k, "dense." + k}, "sparse.%s is %.2f× dense.%s; 2:4 sparsity doubles the dense rate, so one of them is wrong (datasheets often print sparse rates as if dense)", k, r, k)
		}
	}
	return nil
}

// measured reads the `measured` section: how, when, bandwidths, achieved
// peaks, launch overhead and latencies in cycles.
func (p *fileParser) measured(n *yaml.Node, d *Device) error {
	ps, err := p.pairs(n, "measured")
	if err != nil {
		return err
	}
	if d.Measured == nil {
		d.Measured = &Measured{}
	} else {
		m := *d.Measured
		m.Peaks, m.LatencyCycles = clone(m.Peaks), clone(m.LatencyCycles)
		d.Measured = &m
	}
	m := d.Measured
	rates := map[string]*float64{"dram_read": &m.DRAMRead, "dram_write": &m.DRAMWrite, "dram_copy": &m.DRAMCopy, "l2": &m.L2, "smem": &m.Smem}
	known := []string{"how", "when", "dram_read", "dram_write", "dram_copy", "l2", "smem", "peaks", "launch_overhead", "latency_cycles", "allreduce_latency", "allreduce_bus_bandwidth"}
	for _, kv := range ps {
		k, v := kv[0], kv[1]
		field := "measured." + k.Value
		switch k.Value {
		case "how", "when":
			s, err := p.str(v, field)
			if err != nil {
				return err
			}
			if k.Value == "how" {
				m.How = s
			} else {
				m.When = s
			}
		case "dram_read", "dram_write", "dram_copy", "l2", "smem":
			q, err := p.quantity(v, field, units.ParseBandwidth, false)
			if err != nil {
				return err
			}
			*rates[k.Value] = q.value
			d.Sources[field] = q.source
		case "launch_overhead", "allreduce_latency":
			q, err := p.quantity(v, field, units.ParseDuration, false)
			if err != nil {
				return err
			}
			if k.Value == "launch_overhead" {
				m.LaunchOverhead = q.value
			} else {
				m.AllReduceLatency = q.value
			}
			d.Sources[field] = q.source
		case "allreduce_bus_bandwidth":
			q, err := p.quantity(v, field, units.ParseBandwidth, false)
			if err != nil {
				return err
			}
			m.AllReduceBusBandwidth = q.value
			d.Sources[field] = q.source
		case "peaks", "latency_cycles":
			sub, err := p.pairs(v, field)
			if err != nil {
				return err
			}
			for _, e := range sub {
				name := e[0].Value
				var q quantity
				if k.Value == "peaks" {
					if !validPeakKey(name) {
						return p.errorf(e[0], "unknown peak %q in %s (known: %s)", name, field, strings.Join(peakKeys(), ", "))
					}
					if q, err = p.quantity(e[1], field+"."+name, units.ParseFLOPS, false); err != nil {
						return err
					}
					if m.Peaks == nil {
						m.Peaks = map[string]float64{}
					}
					m.Peaks[name] = q.value
				} else {
					if !slices.Contains(latencyNames, name) {
						return p.errorf(e[0], "unknown latency %q in %s (known: %s)", name, field, strings.Join(latencyNames, ", "))
					}
					if q, err = p.quantity(e[1], field+"."+name, parseCount, false); err != nil {
						return err
					}
					if m.LatencyCycles == nil {
						m.LatencyCycles = map[string]float64{}
					}
					m.LatencyCycles[name] = q.value
				}
				d.Sources[field+"."+name] = q.source
			}
		default:
			return p.unknown(k, "measured", known...)
		}
	}
	if m.How == "" || m.When == "" {
		return p.errorf(n, "measured: give `how` (tool, versions, clocks) and `when` (date) the figures were measured")
	}
	return nil
}

// latencyNames are the latencies a measured section may give, in SM cycles.
var latencyNames = []string{"l1", "l2", "dram", "smem", "fma"}

func clone[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// line returns the line of the first field of a validation error that the
// file gave, else the line of the device's name.
func (p *fileParser) line(err error, name *yaml.Node) int {
	var inv *invalid
	if errors.As(err, &inv) {
		for _, f := range inv.fields {
			if n, ok := p.lines[f]; ok {
				return n
			}
		}
	}
	return name.Line
}
