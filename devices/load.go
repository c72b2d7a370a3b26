package devices

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/units"
	"go.yaml.in/yaml/v3"
)

// A device file is one YAML document: a mapping whose numbers are written
// {value: ..., source: KEY}, KEY naming an entry of the file's `sources`.
// data/gpus/h100-sxm.yaml is a complete example; docs/devices.md describes
// the schema. It is decoded strictly (unknown fields are errors) into the
// structs below, whose leaves keep their YAML node, so that every error,
// including one found only when the whole entry is checked, names a line.

// deviceFile is the schema of a device file.
type deviceFile struct {
	Name         text          `yaml:"name"`
	Vendor       text          `yaml:"vendor"`
	Aliases      texts         `yaml:"aliases"`
	Architecture text          `yaml:"architecture"`
	CC           text          `yaml:"compute_capability"`
	Sources      entries       `yaml:"sources"`
	SMs          quantity      `yaml:"sms"`
	ClusterGPCs  quantity      `yaml:"cluster_gpcs"`
	BoostClock   quantity      `yaml:"boost_clock"`
	TensorClock  quantity      `yaml:"tensor_clock"`
	Memory       memoryFile    `yaml:"memory"`
	L2           cacheFile     `yaml:"l2"`
	HostLink     linkFile      `yaml:"host_link"`
	PeerLink     linkFile      `yaml:"peer_link"`
	TDP          quantity      `yaml:"tdp"`
	Dense        entries       `yaml:"dense"`
	Sparse       entries       `yaml:"sparse"`
	Measured     *measuredFile `yaml:"measured"`
}

type memoryFile struct {
	Type      text     `yaml:"type"`
	Size      quantity `yaml:"size"`
	Bandwidth quantity `yaml:"bandwidth"`
}

type cacheFile struct {
	Size      quantity `yaml:"size"`
	Bandwidth quantity `yaml:"bandwidth"`
}

type linkFile struct {
	Type      text     `yaml:"type"`
	Bandwidth quantity `yaml:"bandwidth"`
	Latency   quantity `yaml:"latency"`
}

type measuredFile struct {
	How                   text     `yaml:"how"`
	When                  text     `yaml:"when"`
	DRAMRead              quantity `yaml:"dram_read"`
	DRAMWrite             quantity `yaml:"dram_write"`
	DRAMCopy              quantity `yaml:"dram_copy"`
	L2                    quantity `yaml:"l2"`
	Smem                  quantity `yaml:"smem"`
	Peaks                 entries  `yaml:"peaks"`
	LaunchOverhead        quantity `yaml:"launch_overhead"`
	LatencyCycles         entries  `yaml:"latency_cycles"`
	AllReduceLatency      quantity `yaml:"allreduce_latency"`
	AllReduceBusBandwidth quantity `yaml:"allreduce_bus_bandwidth"`
}

// node is a field as the file wrote it: nil when the file does not give it.
// Decoding only records the node; the loader reads it once it knows the
// field's name and the file's sources.
type node struct{ n *yaml.Node }

// UnmarshalYAML keeps the node, and with it the line and the fact that the
// field was given.
func (f *node) UnmarshalYAML(n *yaml.Node) error {
	f.n = n
	return nil
}

func (f node) given() bool { return f.n != nil }

// The kinds of leaf a device file has.
type (
	// text is a non-empty string: vendor: NVIDIA.
	text struct{ node }
	// texts is a list of non-empty strings: aliases: [h100, h100-sxm].
	texts struct{ node }
	// quantity is a sourced number: {value: 700W, source: ds}.
	quantity struct{ node }
	// entries is a mapping of names, kept in file order: dense peaks by key,
	// latencies by name, sources by key.
	entries struct{ node }
)

// span is the range a figure may take: wide enough for any GPU built or
// announced, narrow enough that a typo (sms: 1e12, bandwidth: 0TB/s) is
// caught where it was written rather than as an absurd result, or an
// out-of-memory crash, downstream.
type span struct {
	lo, hi float64
	format func(float64) string
}

func plain(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func sizeSpan(lo, hi int64) span {
	return span{float64(lo), float64(hi), func(v float64) string { return units.FormatSize(int64(v)) }}
}

var (
	smsSpan       = span{1, 1024, plain}
	clockSpan     = span{100e6, 5e9, units.FormatFrequency}
	memorySpan    = sizeSpan(1<<20, 16<<40)
	l2SizeSpan    = sizeSpan(64<<10, 4<<30)
	dramSpan      = span{1e9, 100e12, units.FormatBandwidth}
	onChipSpan    = span{1e9, 1e15, units.FormatBandwidth} // L2, shared memory
	linkSpan      = span{100e6, 10e12, units.FormatBandwidth}
	linkLatSpan   = span{1e-9, 1e-3, units.FormatDuration}
	tdpSpan       = span{1, 10e3, func(v float64) string { return units.FormatDecimal(v, "W") }}
	peakSpan      = span{1e9, 1e17, units.FormatFLOPS}
	perSMSpan     = span{1, 65536, plain}
	launchSpan    = span{100e-9, 100e-3, units.FormatDuration}
	cyclesSpan    = span{1, 100000, plain}
	allReduceSpan = span{100e-9, 1, units.FormatDuration}
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

// decodeFile decodes data strictly into a deviceFile; errors are one line,
// name the file and line, and never show Go types.
func decodeFile(file string, data []byte) (*deviceFile, *yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%s: empty device file", file)
		}
		return nil, nil, yamlError(file, err)
	}
	// An empty document (a trailing ---) is harmless; one with content is a
	// second device, which would otherwise be ignored.
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, yamlError(file, err)
		}
		if len(extra.Content) > 0 && extra.Content[0].ShortTag() != "!!null" {
			return nil, nil, fmt.Errorf("%s:%d: a second YAML document (after ---); a device file describes one device, so put each in a file of its own", file, extra.Line)
		}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s:%d: a device file is a mapping of fields (name: ..., sms: ..., ...)", file, doc.Line)
	}
	// Strictness (unknown fields, duplicate keys) belongs to the decoder,
	// not to yaml.Node.Decode: decode the bytes again into the schema.
	dec = yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f deviceFile
	if err := dec.Decode(&f); err != nil {
		return nil, nil, yamlError(file, err)
	}
	return &f, doc.Content[0], nil
}

var (
	yamlLine     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownField = regexp.MustCompile(`^field (.+) not found in type (\S+)$`)
	wrongKind    = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `.*`)? into (\\S+)")
	definedTwice = regexp.MustCompile(`^mapping key "(.*)" already defined at line (\d+)$`)
)

// sections names the structs of the schema as a user knows them, with their
// fields, for unknown-field errors.
var sections = func() map[string][2]string {
	m := map[string][2]string{}
	for name, v := range map[string]any{
		"device file": deviceFile{}, "memory": memoryFile{}, "l2": cacheFile{},
		"host_link or peer_link": linkFile{}, "measured": measuredFile{},
	} {
		t := reflect.TypeOf(v)
		var fields []string
		for i := range t.NumField() {
			fields = append(fields, strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0])
		}
		m[t.String()] = [2]string{name, strings.Join(fields, ", ")}
	}
	return m
}()

var yamlKinds = map[string]string{"seq": "a list", "map": "a mapping", "str": "text", "int": "a number",
	"float": "a number", "bool": "true/false", "null": "nothing", "binary": "binary data", "timestamp": "a date"}

// yamlError rewrites an error of the YAML decoder as one line naming the
// file and line, in the schema's words rather than Go's.
func yamlError(file string, err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Errorf("%s: not valid YAML: %s", file, strings.TrimPrefix(msg, "yaml: "))
	}
	line, what := m[1], m[2]
	if u := unknownField.FindStringSubmatch(what); u != nil {
		s, ok := sections[u[2]]
		if !ok {
			s = [2]string{"this mapping", ""}
		}
		return fmt.Errorf("%s:%s: unknown field %q in %s (known: %s)", file, line, u[1], s[0], s[1])
	}
	if u := definedTwice.FindStringSubmatch(what); u != nil {
		return fmt.Errorf("%s:%s: %q given twice (first at line %s)", file, line, u[1], u[2])
	}
	if u := wrongKind.FindStringSubmatch(what); u != nil {
		want := "a mapping"
		switch {
		case strings.HasPrefix(u[2], "[]"):
			want = "a list"
		case u[2] == "string":
			want = "text"
		}
		got := yamlKinds[u[1]]
		if got == "" {
			got = "a value of another kind"
		}
		return fmt.Errorf("%s:%s: %s where %s was expected", file, line, got, want)
	}
	if te != nil {
		// A decoding error of a kind not rewritten above: its text may
		// name Go types, so say only where.
		return fmt.Errorf("%s:%s: a value of the wrong kind for this field (docs/devices.md lists the schema)", file, line)
	}
	return fmt.Errorf("%s:%s: not valid YAML: %s", file, line, what)
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

// latencyNames are the latencies a measured section may give, in SM cycles.
var latencyNames = []string{"l1", "l2", "dram", "smem", "fma"}

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
