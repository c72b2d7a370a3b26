package devices

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/units"
	"go.yaml.in/yaml/v3"
)

// loader applies one device file to a Device.
type loader struct {
	file    string
	root    *yaml.Node // the file's top-level mapping
	sources map[string]string
	d       *Device
	// lines records where each field was given, so that a contradiction
	// found when the whole entry is checked still names a line.
	lines map[string]int
}

func (l *loader) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", l.file, line, fmt.Sprintf(format, args...))
}

// pairs returns the key/value nodes of a mapping in file order; what names
// it in errors. A key given twice is an error.
func (l *loader) pairs(n *yaml.Node, what string) ([][2]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, l.errorf(n.Line, "%s must be a mapping", what)
	}
	seen := map[string]int{}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if first, ok := seen[k.Value]; ok {
			return nil, l.errorf(k.Line, "%s: %q given twice (first at line %d)", what, k.Value, first)
		}
		seen[k.Value] = k.Line
		out = append(out, [2]*yaml.Node{k, n.Content[i+1]})
	}
	return out, nil
}

// text returns a non-empty string field.
func (l *loader) text(field string, t text) (string, error) {
	n := t.n
	if n.Kind != yaml.ScalarNode || strings.TrimSpace(n.Value) == "" {
		return "", l.errorf(n.Line, "%s must be a non-empty string", field)
	}
	l.lines[field] = n.Line
	return n.Value, nil
}

// sourcesOf reads the sources mapping: key → title with URL or reference.
func (l *loader) sourcesOf(e entries) error {
	l.sources = map[string]string{}
	if !e.given() {
		return nil
	}
	ps, err := l.pairs(e.n, "sources")
	if err != nil {
		return err
	}
	for _, kv := range ps {
		if kv[1].Kind != yaml.ScalarNode || strings.TrimSpace(kv[1].Value) == "" {
			return l.errorf(kv[1].Line, "source %q must be a title with a URL or reference", kv[0].Value)
		}
		l.sources[kv[0].Value] = kv[1].Value
	}
	return nil
}

// reading is a quantity read: its value and, for peaks, how it arises (its
// source goes to Device.Sources).
type reading struct {
	v             float64
	perSMPerClock float64
	clock         string
}

// number reads a quantity: parse turns its value into a number, which must
// lie in r. It reports whether the file gave the field.
func (l *loader) number(field string, q quantity, parse func(string) (float64, error), r span) (float64, bool, error) {
	if !q.given() {
		return 0, false, nil
	}
	f, err := l.read(field, q.n, parse, r, false)
	return f.v, err == nil, err
}

// read reads {value, source[, per_sm_per_clock, clock]} and records the
// source and line of field.
func (l *loader) read(field string, n *yaml.Node, parse func(string) (float64, error), r span, peak bool) (reading, error) {
	var f reading
	if n.Kind != yaml.MappingNode {
		return f, l.errorf(n.Line, "%s must be written {value: ..., source: ...}; every number names its source", field)
	}
	ps, err := l.pairs(n, field)
	if err != nil {
		return f, err
	}
	known := "value, source"
	if peak {
		known += ", per_sm_per_clock, clock"
	}
	var value, source *yaml.Node
	for _, kv := range ps {
		k, v := kv[0], kv[1]
		if v.Kind != yaml.ScalarNode {
			return f, l.errorf(v.Line, "%s.%s must be a single value", field, k.Value)
		}
		switch {
		case k.Value == "value":
			value = v
		case k.Value == "source":
			source = v
		case k.Value == "per_sm_per_clock" && peak:
			x, err := parseNumber(v.Value)
			if err == nil {
				err = inSpan(x, v.Value, perSMSpan)
			}
			if err != nil {
				return f, l.errorf(v.Line, "%s.per_sm_per_clock: %v", field, err)
			}
			f.perSMPerClock = x
		case k.Value == "clock" && peak:
			if v.Value != "boost" && v.Value != "tensor" {
				return f, l.errorf(v.Line, "%s.clock: %q; expected boost or tensor", field, v.Value)
			}
			f.clock = v.Value
		default:
			return f, l.errorf(k.Line, "unknown field %q in %s (known: %s)", k.Value, field, known)
		}
	}
	if value == nil {
		return f, l.errorf(n.Line, "%s: missing value", field)
	}
	if source == nil {
		return f, l.errorf(n.Line, "%s: missing source; every number names its source", field)
	}
	src, ok := l.sources[source.Value]
	if !ok {
		return f, l.errorf(source.Line, "%s: source %q is not in the file's sources (add it there with a title and URL)", field, source.Value)
	}
	x, err := parse(value.Value)
	if err == nil {
		err = inSpan(x, value.Value, r)
	}
	if err != nil {
		return f, l.errorf(value.Line, "%s: %v", field, err)
	}
	f.v = x
	l.d.Sources[field] = src
	l.lines[field] = value.Line
	return f, nil
}

// inSpan refuses a value outside s; given is the text the user wrote.
func inSpan(v float64, given string, s span) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < s.lo || v > s.hi {
		return fmt.Errorf("%s is out of range; allowed %s to %s", given, s.format(s.lo), s.format(s.hi))
	}
	return nil
}

// parseNumber parses a plain number; NaN and infinities are refused.
func parseNumber(s string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return x, nil
}

// parseWhole parses a whole number such as an SM count.
func parseWhole(s string) (float64, error) {
	x, err := parseNumber(s)
	if err == nil && x != math.Trunc(x) {
		err = fmt.Errorf("%q is not a whole number", s)
	}
	return x, err
}

func parseSize(s string) (float64, error) {
	b, err := units.ParseSize(s)
	return float64(b), err
}

// parseGPCs reads SM counts per GPC written "18, 18, 16"; the value is the
// number of GPCs, each of which must have 1 to 1024 SMs.
func parseGPCs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || x < 1 || x > int(smsSpan.hi) {
			return nil, fmt.Errorf("%q: expected SM counts per GPC such as \"18, 18, 16\"", s)
		}
		out = append(out, x)
	}
	return out, nil
}

// apply applies the file's fields onto l.d (a zero Device for a new entry, a
// copy of the catalog's for an override).
func (l *loader) apply(f *deviceFile) error {
	d := l.d
	if err := l.sourcesOf(f.Sources); err != nil {
		return err
	}
	var err error
	for _, s := range []struct {
		field string
		t     text
		dst   *string
	}{{"vendor", f.Vendor, &d.Vendor}, {"architecture", f.Architecture, &d.Architecture},
		{"memory.type", f.Memory.Type, &d.Memory.Type}, {"host_link.type", f.HostLink.Type, &d.HostLink.Type},
		{"peer_link.type", f.PeerLink.Type, &d.PeerLink.Type}} {
		if s.t.given() {
			if *s.dst, err = l.text(s.field, s.t); err != nil {
				return err
			}
		}
	}
	if f.Aliases.given() {
		n := f.Aliases.n
		if n.Kind != yaml.SequenceNode {
			return l.errorf(n.Line, "aliases must be a list of names")
		}
		l.lines["aliases"] = n.Line
		for _, a := range n.Content {
			s, err := l.text("alias", text{node{a}})
			if err != nil {
				return err
			}
			d.Aliases = append(d.Aliases, s)
		}
	}
	if f.CC.given() {
		s, err := l.text("compute_capability", f.CC)
		if err != nil {
			return err
		}
		if d.CC, err = ParseCC(s); err != nil {
			return l.errorf(f.CC.n.Line, "%v", err)
		}
	}
	if v, ok, err := l.number("sms", f.SMs, parseWhole, smsSpan); err != nil {
		return err
	} else if ok {
		d.SMs = int(v)
	}
	if f.ClusterGPCs.given() {
		var gpcs []int
		parse := func(s string) (float64, error) {
			var err error
			gpcs, err = parseGPCs(s)
			return float64(len(gpcs)), err
		}
		if _, _, err := l.number("cluster_gpcs", f.ClusterGPCs, parse, smsSpan); err != nil {
			return err
		}
		d.ClusterGPCs = gpcs
	}
	if err := l.numbers([]numberField{
		{"boost_clock", f.BoostClock, units.ParseFrequency, clockSpan, &d.BoostClockHz},
		{"tensor_clock", f.TensorClock, units.ParseFrequency, clockSpan, &d.TensorClockHz},
		{"memory.bandwidth", f.Memory.Bandwidth, units.ParseBandwidth, dramSpan, &d.Memory.BytesPerSecond},
		{"l2.bandwidth", f.L2.Bandwidth, units.ParseBandwidth, onChipSpan, &d.L2.BytesPerSecond},
		{"host_link.bandwidth", f.HostLink.Bandwidth, units.ParseBandwidth, linkSpan, &d.HostLink.BytesPerSecond},
		{"host_link.latency", f.HostLink.Latency, units.ParseDuration, linkLatSpan, &d.HostLink.LatencySeconds},
		{"peer_link.bandwidth", f.PeerLink.Bandwidth, units.ParseBandwidth, linkSpan, &d.PeerLink.BytesPerSecond},
		{"peer_link.latency", f.PeerLink.Latency, units.ParseDuration, linkLatSpan, &d.PeerLink.LatencySeconds},
		{"tdp", f.TDP, units.ParsePower, tdpSpan, &d.TDPWatts},
		{"sfu_per_sm_per_clock", f.SFU, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }, sfuSpan, &d.SFUPerSMPerClock},
	}); err != nil {
		return err
	}
	for _, s := range []struct {
		field string
		q     quantity
		r     span
		dst   *int64
	}{{"memory.size", f.Memory.Size, memorySpan, &d.Memory.Bytes}, {"l2.size", f.L2.Size, l2SizeSpan, &d.L2.Bytes}} {
		if v, ok, err := l.number(s.field, s.q, parseSize, s.r); err != nil {
			return err
		} else if ok {
			*s.dst = int64(v)
		}
	}
	for _, p := range []struct {
		section string
		e       entries
		dst     *map[string]Peak
	}{{"dense", f.Dense, &d.Dense}, {"sparse", f.Sparse, &d.Sparse}} {
		if err := l.peaks(p.section, p.e, p.dst); err != nil {
			return err
		}
	}
	if f.Measured != nil {
		return l.measured(f.Measured)
	}
	return nil
}

// peaks reads dense or sparse peaks into *dst.
func (l *loader) peaks(section string, e entries, dst *map[string]Peak) error {
	if !e.given() {
		return nil
	}
	ps, err := l.pairs(e.n, section)
	if err != nil {
		return err
	}
	if *dst == nil {
		*dst = map[string]Peak{}
	}
	for _, kv := range ps {
		name := kv[0].Value
		if !validPeakKey(name) {
			return l.errorf(kv[0].Line, "unknown peak %q in %s (known: %s)", name, section, strings.Join(peakKeys(), ", "))
		}
		q, err := l.read(section+"."+name, kv[1], units.ParseFLOPS, peakSpan, true)
		if err != nil {
			return err
		}
		(*dst)[name] = Peak{PerSecond: q.v, PerSMPerClock: q.perSMPerClock, Clock: q.clock}
		l.lines[section+"."+name] = kv[0].Line
	}
	return nil
}

// measured reads the `measured` section: how, when, bandwidths, achieved
// peaks, launch overhead, latencies in cycles and all-reduce figures.
func (l *loader) measured(f *measuredFile) error {
	d := l.d
	if d.Measured == nil {
		d.Measured = &Measured{}
	}
	m := d.Measured
	var err error
	if f.How.given() {
		if m.How, err = l.text("measured.how", f.How); err != nil {
			return err
		}
	}
	if f.When.given() {
		if m.When, err = l.text("measured.when", f.When); err != nil {
			return err
		}
	}
	if err := l.numbers([]numberField{
		{"measured.dram_read", f.DRAMRead, units.ParseBandwidth, dramSpan, &m.DRAMRead},
		{"measured.dram_write", f.DRAMWrite, units.ParseBandwidth, dramSpan, &m.DRAMWrite},
		{"measured.dram_copy", f.DRAMCopy, units.ParseBandwidth, dramSpan, &m.DRAMCopy},
		{"measured.l2", f.L2, units.ParseBandwidth, onChipSpan, &m.L2},
		{"measured.smem", f.Smem, units.ParseBandwidth, onChipSpan, &m.Smem},
		{"measured.launch_overhead", f.LaunchOverhead, units.ParseDuration, launchSpan, &m.LaunchOverhead},
		{"measured.allreduce_latency", f.AllReduceLatency, units.ParseDuration, allReduceSpan, &m.AllReduceLatency},
		{"measured.allreduce_bus_bandwidth", f.AllReduceBusBandwidth, units.ParseBandwidth, linkSpan, &m.AllReduceBusBandwidth},
	}); err != nil {
		return err
	}
	for _, e := range []struct {
		field string
		e     entries
		valid func(string) bool
		known []string
		parse func(string) (float64, error)
		r     span
		dst   *map[string]float64
	}{
		{"measured.peaks", f.Peaks, validPeakKey, peakKeys(), units.ParseFLOPS, peakSpan, &m.Peaks},
		{"measured.latency_cycles", f.LatencyCycles, func(k string) bool { return slices.Contains(latencyNames, k) }, latencyNames, parseNumber, cyclesSpan, &m.LatencyCycles},
	} {
		if !e.e.given() {
			continue
		}
		ps, err := l.pairs(e.e.n, e.field)
		if err != nil {
			return err
		}
		for _, kv := range ps {
			name := kv[0].Value
			if !e.valid(name) {
				return l.errorf(kv[0].Line, "unknown name %q in %s (known: %s)", name, e.field, strings.Join(e.known, ", "))
			}
			q, err := l.read(e.field+"."+name, kv[1], e.parse, e.r, false)
			if err != nil {
				return err
			}
			if *e.dst == nil {
				*e.dst = map[string]float64{}
			}
			(*e.dst)[name] = q.v
		}
	}
	if m.How == "" || m.When == "" {
		return l.errorf(l.keyLine("measured"), "measured: give `how` (tool, versions, clocks) and `when` (date) the figures were measured")
	}
	return nil
}

// keyLine returns the line of a top-level field, else that of the file's
// first field.
func (l *loader) keyLine(key string) int {
	for i := 0; i+1 < len(l.root.Content); i += 2 {
		if l.root.Content[i].Value == key {
			return l.root.Content[i].Line
		}
	}
	return l.root.Line
}

// line returns the line of the first field of a validation error that the
// file gave, else fallback.
func (l *loader) line(err error, fallback int) int {
	var inv *invalid
	if errors.As(err, &inv) {
		for _, f := range inv.fields {
			if n, ok := l.lines[f]; ok {
				return n
			}
		}
	}
	return fallback
}

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

// numberField is a figure of a device file: its path, its YAML value, how
// it parses, its allowed range and where it goes.
type numberField struct {
	field string
	q     quantity
	parse func(string) (float64, error)
	r     span
	dst   *float64
}

// numbers parses every field that was given into its destination.
func (l *loader) numbers(fields []numberField) error {
	for _, q := range fields {
		if v, ok, err := l.number(q.field, q.q, q.parse, q.r); err != nil {
			return err
		} else if ok {
			*q.dst = v
		}
	}
	return nil
}
